"""The robustness check of protocol section 9: each outcome of the comparison refitted as a
mixed-effects model with crossed rater and item (test case) random intercepts
(``stats.mixed``), beside the primary estimate (no Django).

Every rating is a row, not a case's mean: the total and each scored dimension as scores,
each yes/no dimension (not scored) and each preference as a linear probability model (a
0/1 outcome; a preference's ties left out, as in its win rate). Each pair of systems is
fitted on the cases that hold both. The minimum of valid ratings applies here as to the
question's primary estimate: a case the question excludes (``item_labels``) gives no row,
and each fit says how many (``excluded_cases``). It names the systems: computed after
unblinding only.
Formulas and references: docs/statistics.md.
"""

import itertools

import numpy as np

from agreement.analysis.comparison_data import ComparisonData
from agreement.analysis.item_labels import _labelled, _outcome_labels
from agreement.analysis.roles import TOTAL_MEASURE, dimension_measure, has_score
from agreement.stats.mixed import system_effect

# The significance level of the decision "does the conclusion hold" (two-sided).
ALPHA = 0.05


def robustness_check(data: ComparisonData) -> dict:
    """{"available", "alpha", "fits": [{"measure", "name", "kind", "first", "second",
    **system_effect}]} for every outcome and pair of systems. JSON-ready."""
    n_cases, n_labels = data.case_systems.shape
    pairs = list(itertools.combinations(range(len(data.systems)), 2))
    labelled = _labelled(data)
    outcomes = []
    if has_score(data.roles):  # a rubric without points has no total to fit
        how = labelled[TOTAL_MEASURE][1]
        total = np.asarray(data.totals, float)
        outcomes.append((TOTAL_MEASURE, "Total score", "score", total, how.excluded_cases))
    for role, dim in zip(data.roles, data.dimensions, strict=True):
        measure = dimension_measure(role.key)
        if role.scored:
            how = labelled[measure][1]
            outcomes.append((measure, role.name, "score", dim.matrix, how.excluded_cases))
        elif role.binary:
            top = max(dim.categories)
            matrix = np.asarray(dim.matrix, dtype=float)
            positive = np.where(np.isnan(matrix), np.nan, (matrix == top) * 1.0)
            how = _outcome_labels(data, dim, role)
            outcomes.append((measure, role.name, "binary", positive, how.excluded_cases))
    fits = []
    for measure, name, kind, matrix, excluded in outcomes:
        cube = np.asarray(matrix, dtype=float).reshape(-1, n_cases, n_labels).copy()
        cube[:, excluded, :] = np.nan  # under the minimum of valid ratings: no row
        for a, b in pairs:
            rows = _response_rows(cube, data.case_systems, a, b)
            fit = system_effect(*rows, binary=kind == "binary")
            fits.append(_named(measure, name, kind, data, a, b, fit, excluded=excluded))
    for role, dim in zip(data.roles, data.dimensions, strict=True):
        if role.preference:
            excluded = labelled[dimension_measure(role.key)][1].excluded_cases
            matrix = np.asarray(dim.matrix, float).copy()
            matrix[:, excluded] = np.nan
            for a, b in pairs:
                y, rater, item = _preference_rows(matrix, data, a, b)
                fit = system_effect(y, None, rater, item, binary=True, null=0.5)
                fits.append(
                    _named(
                        dimension_measure(role.key),
                        role.name,
                        "preference",
                        data,
                        a,
                        b,
                        fit,
                        excluded=excluded,
                    )  # fmt: skip
                )
    return {"available": True, "alpha": ALPHA, "fits": fits}


def _named(
    measure, name, kind, data: ComparisonData, a: int, b: int, fit: dict, *, excluded
) -> dict:
    """One fit, named, with the cases of the pair the question excludes (the minimum)."""
    shown = data.case_systems
    both = (shown == a).any(axis=1) & (shown == b).any(axis=1)
    return {
        "measure": measure,
        "name": name,
        "kind": kind,
        "first": data.systems[a],
        "second": data.systems[b],
        "excluded_cases": int((both & excluded).sum()),
        **fit,
    }


def _response_rows(cube: np.ndarray, case_systems: np.ndarray, a: int, b: int) -> tuple:
    """(outcome, system: 1 = ``b``, rater, case) of every rating of a response of ``a`` or
    ``b`` in the cases that hold both."""
    both = (case_systems == a).any(axis=1) & (case_systems == b).any(axis=1)
    outcome, system, rater, item = [], [], [], []
    for label in range(case_systems.shape[1]):
        for which, code in ((a, 0.0), (b, 1.0)):
            cases = np.flatnonzero(both & (case_systems[:, label] == which))
            values = cube[:, cases, label]  # raters x cases
            raters, columns = np.nonzero(~np.isnan(values))
            outcome.append(values[raters, columns])
            system.append(np.full(raters.size, code))
            rater.append(raters)
            item.append(cases[columns])
    return tuple(np.concatenate(part) for part in (outcome, system, rater, item))


def _preference_rows(matrix: np.ndarray, data: ComparisonData, a: int, b: int) -> tuple:
    """(1 = ``b`` preferred, 0 = ``a``; rater; case) of every untied preference in the cases
    whose pair is ``a`` and ``b`` (the matrix is in the systems' order: positive prefers the
    pair's later system)."""
    shown = data.case_systems[:, :2]
    pair = (shown >= 0).all(axis=1) & (shown.min(axis=1) == a) & (shown.max(axis=1) == b)
    values = matrix[:, pair]
    raters, columns = np.nonzero(~np.isnan(values) & (values != 0))
    return (values[raters, columns] > 0) * 1.0, raters, np.flatnonzero(pair)[columns]


def robustness_rows(check: dict | None, comparison: dict | None) -> list[dict]:
    """Each fit beside the comparison's estimate of the same outcome and pair: the primary
    estimate, its p-value, and whether the conclusion holds (the same sign, and the same
    decision at ``alpha``: both significant or both not). ``holds`` is None when either
    side has no estimate."""
    if not check or not check.get("available") or not comparison:
        return []
    alpha = check.get("alpha", ALPHA)
    primary = _primary_estimates(comparison)
    chosen = next((q["measure"] for q in comparison.get("questions", []) if q.get("primary")), "")
    first_pair = comparison["systems"][:2] if len(comparison.get("systems", [])) >= 2 else []
    rows = []
    for fit in check["fits"]:
        estimate, p, label = primary.get(
            (fit["measure"], fit["kind"], fit["first"], fit["second"]), (None, None, "")
        )
        rows.append(
            {
                **fit,
                "primary_label": label,
                "primary_estimate": estimate,
                "primary_p": p,
                "is_primary": fit["measure"] == chosen
                and [fit["first"], fit["second"]] == list(first_pair),
                "holds": _holds(estimate, p, fit, alpha),
            }
        )
    return rows


def _holds(estimate, p, fit: dict, alpha: float) -> bool | None:
    if estimate is None or p is None or not fit.get("fitted") or fit.get("p") is None:
        return None
    same_sign = np.sign(estimate) == np.sign(fit["estimate"])
    return bool(same_sign and (p < alpha) == (fit["p"] < alpha))


def _primary_estimates(comparison: dict) -> dict:
    """{(measure, kind, first, second): (estimate, p, what it is)} from the comparison: a
    paired difference (Wilcoxon), a win rate minus one half (exact binomial test), a
    difference of shares (McNemar's exact test)."""
    found = {}
    for row in comparison.get("paired", []):
        if row.get("stratum") == "overall":
            key = (row["measure"], "score", row["first"], row["second"])
            found[key] = (row.get("difference"), row.get("wilcoxon_p"), "paired difference")
    for preference in comparison.get("preferences", []):
        for pair in preference["pairs"]:
            rate = pair["items"].get("rate")
            measure = dimension_measure(preference["key"])
            key = (measure, "preference", pair["first"], pair["second"])
            found[key] = (
                None if rate is None else rate - 0.5,
                pair["items"].get("p_value"),
                "win rate minus 0.5",
            )
    for outcome in comparison.get("mcnemar", []):
        for pair in outcome["pairs"]:
            first, second = pair.get("first_rate"), pair.get("second_rate")
            key = (dimension_measure(outcome["key"]), "binary", pair["first"], pair["second"])
            found[key] = (
                None if first is None or second is None else second - first,
                pair.get("p"),
                "difference of shares",
            )
    return found
