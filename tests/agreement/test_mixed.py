"""The mixed-effects robustness check (``agreement.stats.mixed``, fitted by
``agreement.stats.reml``) against lme4's published Penicillin example, the closed-form REML
estimates of a balanced crossed design, statsmodels' formula API on a long table (an
independent REML fit, test-only), and generalised least squares on the dense covariance."""

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats

from agreement.stats import mixed, reml
from agreement.stats.mixed import system_effect

# statsmodels' optimiser stops within about 5e-7 of the REML optimum's variances (ours is
# within 1e-8 of it: the criterion agrees to 1e-11); the estimates agree to 1e-8.
GTOL = 1e-8

# lme4's Penicillin data (Davies and Goldsmith 1972, section 6.6), as shipped with lme4 and
# documented at https://search.r-project.org/CRAN/refmans/lme4/html/Penicillin.html; the
# values as published in the Rdatasets copy, vincentarelbundock/Rdatasets,
# csv/lme4/Penicillin.csv: 144 rows, plate-major (plates a-x), samples A-F within a plate.
PENICILLIN = """
27 23 26 23 23 21  27 23 26 23 23 21  25 21 25 24 24 20  26 23 25 23 23 20
25 22 26 22 23 20  24 22 25 23 22 19  24 20 23 21 22 19  26 22 26 24 24 21
24 21 24 22 22 20  24 21 24 23 22 19  26 23 26 24 24 21  25 22 26 24 24 20
26 24 26 24 25 22  26 23 26 23 23 20  26 23 25 24 24 22  25 22 25 23 23 20
25 21 24 23 23 20  25 22 24 23 23 19  24 21 23 21 21 19  26 23 26 24 24 21
25 21 24 22 22 18  25 22 25 22 22 20  24 21 24 22 24 19  24 21 24 22 21 18
"""


def _penicillin():
    diameter = np.array(PENICILLIN.split(), dtype=float)
    plate = np.repeat(list("abcdefghijklmnopqrstuvwx"), 6)
    sample = np.tile(list("ABCDEF"), 24)
    return diameter, plate, sample


@pytest.fixture(scope="module")
def penicillin_fit():
    diameter, plate, sample = _penicillin()
    # lmer(diameter ~ 1 + (1|plate) + (1|sample), Penicillin): plate and sample crossed, in
    # the places of our rater and item.
    return system_effect(diameter, None, plate, sample)


def test_penicillin_data_is_the_published_set():
    diameter, plate, sample = _penicillin()
    assert diameter.size == 144
    assert diameter[:6].tolist() == [27, 23, 26, 23, 23, 21]  # str(Penicillin) in lme4's docs
    assert diameter[-6:].tolist() == [24, 21, 24, 22, 21, 18]
    assert diameter.sum() == 3308


def test_penicillin_reproduces_lme4_to_the_printed_digits(penicillin_fit):
    """lme4's printed fit (REML criterion 330.8606; random effects as standard deviations:
    plate 0.8467, sample 1.9316, residual 0.5499; variances 0.7169, 3.7311, 0.3024;
    intercept 22.97), e.g. https://bookdown.org/jmichaelrosenberg/comparing_crossed_effects_models
    ("m_lme4" there). Bates, Mächler, Bolker and Walker (2015) fit this model as their
    crossed example."""
    fit = penicillin_fit
    assert fit["fitted"] and fit["converged"]
    assert (fit["n"], fit["n_raters"], fit["n_items"]) == (144, 24, 6)
    assert round(fit["estimate"], 3) == 22.972
    variances = fit["variances"]
    assert round(variances["rater"], 4) == 0.7169
    assert round(variances["residual"], 4) == 0.3024
    assert round(variances["rater"] ** 0.5, 4) == 0.8467
    assert round(variances["item"] ** 0.5, 4) == 1.9316
    assert round(variances["residual"] ** 0.5, 4) == 0.5499
    # The printed sample variance, 3.7311, is lme4's optimiser 2e-4 short of the optimum
    # (3.730918, below): its standard deviation agrees to the printed digits, above.
    assert variances["item"] == pytest.approx(3.7311, abs=5e-4)


def test_penicillin_matches_the_closed_form_reml_estimates(penicillin_fit):
    """In a balanced two-way crossed design without interaction, REML estimates are the
    ANOVA (expected mean squares) estimates when these are positive (Searle, Casella and
    McCulloch 1992, ch. 4 and 6): an oracle that shares nothing with statsmodels."""
    diameter, _, _ = _penicillin()
    table = diameter.reshape(24, 6)  # plates x samples
    grand = table.mean()
    residuals = table - table.mean(1, keepdims=True) - table.mean(0, keepdims=True) + grand
    ms_error = (residuals**2).sum() / (23 * 5)
    ms_plate = 6 * ((table.mean(1) - grand) ** 2).sum() / 23
    ms_sample = 24 * ((table.mean(0) - grand) ** 2).sum() / 5
    plate, sample = (ms_plate - ms_error) / 6, (ms_sample - ms_error) / 24
    fit = penicillin_fit
    assert fit["estimate"] == pytest.approx(grand, abs=1e-6)
    assert fit["variances"]["residual"] == pytest.approx(ms_error, abs=1e-6)
    assert fit["variances"]["rater"] == pytest.approx(plate, abs=1e-6)
    assert fit["variances"]["item"] == pytest.approx(sample, abs=1e-6)
    # The grand mean's variance: plate / 24 + sample / 6 + residual / 144.
    se = (plate / 24 + sample / 6 + ms_error / 144) ** 0.5
    assert fit["se"] == pytest.approx(se, abs=1e-6)


def _simulated(seed: int, *, n_items=30, n_raters=4, effect=0.4, binary=False, drop=0.15):
    """Raters x items x two systems, each rating kept with probability 1 - ``drop``."""
    rng = np.random.default_rng(seed)
    item, rater, system = (
        a.ravel() for a in np.meshgrid(np.arange(n_items), np.arange(n_raters), [0, 1])
    )
    latent = (
        effect * system
        + rng.normal(0, 0.7, n_raters)[rater]
        + rng.normal(0, 1.0, n_items)[item]
        + rng.normal(0, 1.0, item.size)
    )
    y = (latent > 0.5).astype(float) if binary else np.round(latent * 2) / 2 + 3
    keep = rng.random(item.size) >= drop
    return pd.DataFrame(
        {"y": y[keep], "system": system[keep], "rater": rater[keep], "item": item[keep]}
    )


def _formula_fit(table: pd.DataFrame, formula: str):
    """statsmodels' own formula API: one group for every row, crossed variance components,
    no random intercept for the group; the same REML settings as ours."""
    model = smf.mixedlm(
        formula,
        table,
        groups=np.ones(len(table)),
        vc_formula={"rater": "0 + C(rater)", "item": "0 + C(item)"},
        re_formula="0",
    )
    return model.fit(reml=True, method=["bfgs"], gtol=GTOL)


def _gls_se(table: pd.DataFrame, variances: dict, column: int) -> float:
    """The fixed effect's standard error by generalised least squares on the dense
    covariance of the ratings, given the variances: sqrt of ((X' V^-1 X)^-1)[column]."""
    rater = np.unique(table["rater"], return_inverse=True)[1]
    item = np.unique(table["item"], return_inverse=True)[1]
    same_rater = rater[:, None] == rater[None, :]
    same_item = item[:, None] == item[None, :]
    covariance = (
        variances["rater"] * same_rater
        + variances["item"] * same_item
        + variances["residual"] * np.eye(len(table))
    )
    x = np.column_stack([np.ones(len(table)), table["system"]])
    information = x.T @ np.linalg.solve(covariance, x)
    return float(np.sqrt(np.linalg.inv(information)[column, column]))


@pytest.mark.parametrize(
    ("seed", "binary"), [(1, False), (2, False), (3, True), (4, True)]
)  # fmt: skip
def test_fit_matches_the_formula_api_and_gls(seed, binary):
    """Estimate and variances as statsmodels' REML fit; the standard error, p and interval
    are lme4's (``vcov``: s2 (X'V^-1 X)^-1 at the REML variances), here by dense GLS at
    statsmodels' variances. statsmodels' own ``bse_fe`` inverts the Hessian of its
    likelihood in the fixed effects and variances together, which with ratings missing
    differs from lme4's by about 1e-4 of the standard error (equal in balanced data)."""
    table = _simulated(seed, binary=binary)
    ours = system_effect(table["y"], table["system"], table["rater"], table["item"], binary=binary)
    theirs = _formula_fit(table, "y ~ system")
    assert theirs.converged
    assert ours["fitted"], ours["reason"]
    assert ours["model"] == (mixed.LINEAR_PROBABILITY if binary else mixed.LINEAR)
    assert ours["estimate"] == pytest.approx(theirs.fe_params["system"], abs=1e-6)
    vcomp = dict(zip(theirs.model.exog_vc.names, theirs.vcomp, strict=True))
    theirs_variances = {**vcomp, "residual": theirs.scale}
    assert ours["variances"] == pytest.approx(theirs_variances, abs=1e-6)
    se = _gls_se(table, theirs_variances, 1)
    assert ours["se"] == pytest.approx(se, abs=1e-6)
    assert ours["se"] == pytest.approx(theirs.bse_fe["system"], rel=1e-3)
    z = ours["estimate"] / se
    assert ours["p"] == pytest.approx(2 * stats.norm.sf(abs(z)), abs=1e-6)
    half = stats.norm.ppf(0.975) * se
    low, high = ours["estimate"] - half, ours["estimate"] + half
    assert (ours["low"], ours["high"]) == pytest.approx((low, high), abs=1e-6)
    assert ours["n"] == len(table)


@pytest.mark.parametrize("seed", [5, 8, 12, 22])
def test_fit_reaches_the_optimum_where_statsmodels_stalls(seed):
    """Data where statsmodels' gradient optimiser stops short (or at a boundary that is not
    the optimum): our restricted log likelihood is never below the best of its three
    optimisers, and equals it to 1e-9 where these agree on the optimum."""
    rng = np.random.default_rng(1000 + seed)
    table = _simulated(
        seed,
        binary=bool(seed % 2),
        n_items=int(rng.integers(5, 60)),
        n_raters=int(rng.integers(2, 8)),
        drop=float(rng.uniform(0, 0.5)),
    )
    model = smf.mixedlm(
        "y ~ system", table, groups=np.ones(len(table)),
        vc_formula={"rater": "0 + C(rater)", "item": "0 + C(item)"}, re_formula="0",
    )  # fmt: skip
    fits = []
    with warnings.catch_warnings(action="ignore"):
        for method in ("bfgs", "nm", "powell"):
            try:
                fits.append(model.fit(reml=True, method=[method], gtol=GTOL, maxiter=5_000))
            except np.linalg.LinAlgError:
                continue
    best = max(fit.llf for fit in fits)
    rater = np.unique(table["rater"], return_inverse=True)[1]
    item = np.unique(table["item"], return_inverse=True)[1]
    x = np.column_stack([np.ones(len(table)), table["system"]])
    ours = reml.fit_crossed(table["y"], x, rater, item)
    assert ours.converged
    assert -ours.criterion / 2 >= best - 1e-9


def test_the_dense_block_may_be_either_factor():
    """The smaller factor takes the dense Schur block: swapping raters and items gives the
    same fit with the variances swapped."""
    table = _simulated(11, n_items=6, n_raters=9)
    fit = system_effect(table["y"], table["system"], table["rater"], table["item"])
    swapped = system_effect(table["y"], table["system"], table["item"], table["rater"])
    for key in ("estimate", "se", "p"):
        assert swapped[key] == pytest.approx(fit[key], abs=1e-8), key
    assert swapped["variances"]["rater"] == pytest.approx(fit["variances"]["item"], abs=1e-7)
    assert swapped["variances"]["item"] == pytest.approx(fit["variances"]["rater"], abs=1e-7)


def test_intercept_only_fit_tests_against_the_null():
    """A preference: 1 = the second system, 0 = the first; the share minus one half."""
    table = _simulated(5, binary=True, effect=1.0)
    ours = system_effect(table["y"], None, table["rater"], table["item"], binary=True, null=0.5)
    theirs = _formula_fit(table, "y ~ 1")
    assert ours["estimate"] == pytest.approx(theirs.fe_params["Intercept"] - 0.5, abs=1e-6)
    assert ours["se"] == pytest.approx(theirs.bse_fe["Intercept"], abs=1e-6)
    z = ours["estimate"] / ours["se"]
    assert ours["p"] == pytest.approx(2 * (1 - stats.norm.cdf(abs(z))))


def test_a_real_effect_is_found_and_its_sign_kept():
    table = _simulated(6, n_items=60, effect=1.5, drop=0.0)
    fit = system_effect(table["y"], table["system"], table["rater"], table["item"])
    assert fit["p"] < 0.001 and fit["estimate"] > 0 and fit["low"] > 0
    flipped = system_effect(table["y"], 1 - table["system"], table["rater"], table["item"])
    assert flipped["estimate"] == pytest.approx(-fit["estimate"], abs=1e-6)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda t: t.assign(rater=0), "one rater"),
        (lambda t: t.assign(item=0), "one test case"),
        (lambda t: t.assign(system=1), "only one system"),
        (lambda t: t.assign(y=2.0), "every rating is the same"),
        (lambda t: t.head(3), "fewer than 4 ratings"),
        (lambda t: t.assign(y=np.nan), "fewer than 4 ratings"),
    ],
)
def test_degenerate_data_are_not_fitted_and_say_why(change, why):
    table = change(_simulated(7))
    fit = system_effect(table["y"], table["system"], table["rater"], table["item"])
    assert fit["fitted"] is False
    assert fit["reason"].startswith("Could not be fitted: ") and why in fit["reason"]


def test_too_many_ratings_are_not_fitted(monkeypatch):
    monkeypatch.setattr(mixed, "MAX_ROWS", 50)
    table = _simulated(8)
    fit = system_effect(table["y"], table["system"], table["rater"], table["item"])
    assert not fit["fitted"] and "more than the 50" in fit["reason"]


def test_a_failing_or_unconverged_fit_is_a_result_not_an_exception(monkeypatch):
    table = _simulated(9)

    def failing(*args):
        raise np.linalg.LinAlgError("Singular matrix")

    monkeypatch.setattr(mixed, "_fit", failing)
    fit = system_effect(table["y"], table["system"], table["rater"], table["item"])
    assert not fit["fitted"] and "LinAlgError: Singular matrix" in fit["reason"]

    unconverged = reml.CrossedFit(
        fixed=np.zeros(2),
        covariance=np.eye(2) * 0.01,
        variances=(0.1, 0.1),
        residual=1.0,
        criterion=100.0,
        converged=False,
        message="ABNORMAL",
    )
    monkeypatch.setattr(mixed, "_fit", lambda *args: (unconverged, {"rater": 0.1, "item": 0.1}))
    fit = system_effect(table["y"], table["system"], table["rater"], table["item"])
    assert not fit["fitted"] and "did not converge" in fit["reason"]


def test_a_zero_variance_is_stated_as_a_boundary_fit():
    """Ratings with no rater effect at all: the rater variance is estimated at zero, the
    fit stands and says so (lme4's "boundary (singular) fit")."""
    rng = np.random.default_rng(10)
    item, rater, system = (a.ravel() for a in np.meshgrid(np.arange(20), np.arange(3), [0, 1]))
    y = 0.5 * system + rng.normal(0, 1, 20)[item] + rng.normal(0, 1, item.size)
    y = y - np.array([y[rater == r].mean() for r in range(3)])[rater]  # no rater differences
    fit = system_effect(y, system, rater, item)
    assert fit["fitted"] and fit["variances"]["rater"] < 1e-6
    assert any("rater variance is estimated as zero" in w for w in fit["warnings"])
    # The REML fit at that boundary is the fit without raters: the formula API's.
    table = pd.DataFrame({"y": y, "system": system, "item": item})
    theirs = smf.mixedlm(
        "y ~ system", table, groups=np.ones(len(table)),
        vc_formula={"item": "0 + C(item)"}, re_formula="0",
    ).fit(reml=True, method=["bfgs"], gtol=GTOL)  # fmt: skip
    assert fit["estimate"] == pytest.approx(theirs.fe_params["system"], abs=1e-6)
    assert fit["variances"]["item"] == pytest.approx(theirs.vcomp[0], abs=1e-6)
    assert fit["variances"]["residual"] == pytest.approx(theirs.scale, abs=1e-6)
    fitted = {**fit["variances"], "rater": 0.0}
    assert fit["se"] == pytest.approx(_gls_se(table.assign(rater=0), fitted, 1), abs=1e-6)


def test_lengths_must_match():
    with pytest.raises(ValueError):
        system_effect([1.0, 2.0], [0, 1], [0], [0, 1])


def test_a_fit_imports_no_statsmodels():
    """The fit is our own: statsmodels is a test oracle, not a runtime dependency."""
    code = (
        "import sys; from agreement.stats.mixed import system_effect; "
        "system_effect([1.0, 2.0, 4.0, 3.0, 5.0], [0, 1, 0, 1, 1], [0, 0, 1, 1, 0], "
        "[0, 1, 0, 1, 2]); print('statsmodels' in sys.modules)"
    )
    run = subprocess.run(  # our own interpreter on a fixed snippet
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert run.stdout.strip() == "False"
