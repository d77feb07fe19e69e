"""A linear mixed model of one outcome with crossed random intercepts for raters and items:
the robustness check of the comparison of systems (protocol section 9). No Django.

One row per rating, in long form: the outcome, the system (0 = the pair's first system,
1 = its second), the rater and the item (the test case). The model is

    y = b0 + b1 * system + u_rater + v_item + e,   u ~ N(0, s2_rater), v ~ N(0, s2_item),
                                                    e ~ N(0, s2)

fitted by REML (``reml.fit_crossed``: the two variance ratios are optimised with the rest
profiled out; the crossed design of Baayen, Davidson and Bates 2008, what lme4 writes
``y ~ system + (1|rater) + (1|item)``, Bates, Mächler, Bolker and Walker 2015). The
standard error is lme4's: ``s2 (X'V^-1 X)^-1`` at the REML estimates. A yes/no outcome or
a preference (1 = the second system, 0 = the first) is fitted the same way: a linear
probability model, whose effect reads as a difference of shares. With no system column (a
preference, judged of the pair as a whole) the intercept is the estimate, tested against
``null`` (0.5: no preference).

Data that cannot be fitted (one rater, one system, nothing varying, a singular fit, no
convergence) give a result saying why, never an exception. Formulas and references:
docs/statistics.md.
"""

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from agreement.stats.reml import fit_crossed

# More ratings than this are not fitted: the fit's time and memory grow with them.
MAX_ROWS = 10_000
# A variance below this share of the residual variance is on the boundary: zero, as lme4's
# "boundary (singular) fit".
BOUNDARY = 1e-6
LINEAR = "linear mixed model (REML)"
LINEAR_PROBABILITY = "linear probability model: a linear mixed model of a 0/1 outcome (REML)"


def _plain(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else value


def _not_fitted(reason: str, **counts: int) -> dict:
    return {"fitted": False, "reason": f"Could not be fitted: {reason}", **counts}


def system_effect(
    outcome: npt.ArrayLike,
    system: npt.ArrayLike | None,
    rater: npt.ArrayLike,
    item: npt.ArrayLike,
    *,
    binary: bool = False,
    null: float = 0.0,
    confidence: float = 0.95,
) -> dict:
    """The system's effect on ``outcome`` with crossed random intercepts for ``rater`` and
    ``item`` (one entry per rating; raters and items by any label), as a JSON-ready dict:
    "fitted", "reason" (why not), "model", "estimate" (the second system minus the first,
    or with ``system`` None the intercept minus ``null``), "se", "low", "high" (a Wald
    interval), "p" (two-sided Wald z-test), "variances" (rater, item, residual), "n",
    "n_raters", "n_items", "converged" and "warnings" (the fit's, e.g. a variance on the
    boundary)."""
    from scipy import stats

    y = np.asarray(outcome, dtype=float).ravel()
    raters = np.unique(np.asarray(rater).ravel(), return_inverse=True)[1].ravel()
    items = np.unique(np.asarray(item).ravel(), return_inverse=True)[1].ravel()
    x = None if system is None else np.asarray(system, dtype=float).ravel()
    if len({y.size, raters.size, items.size, y.size if x is None else x.size}) != 1:
        raise ValueError("outcome, system, rater and item need one entry per rating")
    keep = ~np.isnan(y) & (np.ones(y.size, bool) if x is None else ~np.isnan(x))
    y, raters, items = y[keep], raters[keep], items[keep]
    x = None if x is None else x[keep]
    raters = np.unique(raters, return_inverse=True)[1].ravel()
    items = np.unique(items, return_inverse=True)[1].ravel()
    counts = {
        "n": int(y.size),
        "n_raters": int(raters.max() + 1) if y.size else 0,
        "n_items": int(items.max() + 1) if y.size else 0,
    }
    problem = _degenerate(y, x, counts)
    if problem:
        return _not_fitted(problem, **counts)
    exog = np.ones((y.size, 1)) if x is None else np.column_stack([np.ones(y.size), x])
    try:
        with np.errstate(all="ignore"):
            fit, variances = _fit(y, exog, items, raters)
    except (np.linalg.LinAlgError, ValueError, FloatingPointError) as error:
        why = f"{type(error).__name__}: {error}"[:200]
        return _not_fitted(f"the fit failed ({why})", **counts)
    column = exog.shape[1] - 1
    estimate = float(fit.fixed[column]) - (null if x is None else 0.0)
    se = math.sqrt(fit.covariance[column, column]) if fit.covariance[column, column] > 0 else 0.0
    if not fit.converged:
        return _not_fitted("the optimiser did not converge", **counts)
    if not math.isfinite(se) or se <= 0:
        return _not_fitted("the standard error cannot be computed (a singular fit)", **counts)
    z = stats.norm.ppf(0.5 + confidence / 2)
    boundary = [name for name, value in variances.items() if value < BOUNDARY * fit.residual]
    notes = []
    if boundary:
        notes.append(
            f"A boundary (singular) fit: the {' and '.join(boundary)} variance is estimated "
            "as zero; the estimate stands, as in lme4."
        )
    return {
        "fitted": True,
        "reason": "",
        "model": LINEAR_PROBABILITY if binary else LINEAR,
        "estimate": _plain(estimate),
        "se": _plain(se),
        "low": _plain(estimate - z * se),
        "high": _plain(estimate + z * se),
        "confidence": confidence,
        "p": _plain(2 * stats.norm.sf(abs(estimate / se))),
        "null": null if x is None else 0.0,
        "variances": {
            "rater": _plain(variances["rater"]),
            "item": _plain(variances["item"]),
            "residual": _plain(fit.residual),
        },
        **counts,
        "converged": bool(fit.converged),
        "warnings": notes,
    }


def _degenerate(y: np.ndarray, x: np.ndarray | None, counts: dict) -> str:
    """Why the data cannot carry the model, or ""."""
    if counts["n"] > MAX_ROWS:
        return f"{counts['n']} ratings, more than the {MAX_ROWS:,} this check fits"
    if counts["n"] < 4:
        return "fewer than 4 ratings"
    if counts["n_raters"] < 2:
        return "one rater: a rater variance needs two or more"
    if counts["n_items"] < 2:
        return "one test case: an item variance needs two or more"
    if x is not None and np.ptp(x) == 0:
        return "only one system is rated"
    if np.ptp(y) == 0:
        return "every rating is the same: nothing varies"
    return ""


def _fit(y: np.ndarray, exog: np.ndarray, items: np.ndarray, raters: np.ndarray):
    """The REML fit (``reml.fit_crossed``): the fit, and its variance components by name."""
    fit = fit_crossed(y, exog, raters, items)
    rater, item = fit.variances
    return fit, {"rater": rater, "item": item}
