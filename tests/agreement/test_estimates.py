"""Comparison statistics against scipy, statsmodels and the protocol's worked example."""

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from agreement.stats import (
    binomial_win_rate,
    holm,
    mcnemar_exact,
    mean_difference_sample_size,
    paired_difference,
    win_rate_sample_size,
)
from agreement.stats.estimates import bootstrap_means, linear_fit, logistic_fit


def test_sample_size_reproduces_the_protocols_worked_example():
    assert win_rate_sample_size(0.58) == 305
    assert win_rate_sample_size(0.58, tie_share=0.2) == 382
    # Symmetric in the direction of the effect; larger with more power or a smaller alpha.
    assert win_rate_sample_size(0.42) == 305
    assert win_rate_sample_size(0.58, power=0.9) > 305
    assert win_rate_sample_size(0.58, alpha=0.01) > 305


@pytest.mark.parametrize(
    "arguments",
    [{"p1": 0.5}, {"p1": 1.0}, {"p1": 0.6, "alpha": 0}, {"p1": 0.6, "power": 1.2},
     {"p1": 0.6, "tie_share": 1.0}, {"p1": 0.6, "tie_share": -0.1}],
)  # fmt: skip
def test_sample_size_refuses_impossible_designs(arguments):
    p1 = arguments.pop("p1")
    with pytest.raises(ValueError):
        win_rate_sample_size(p1, **arguments)


def test_mean_difference_sample_size_matches_the_normal_formula():
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert mean_difference_sample_size(0.5, 2.0) == math.ceil((z * 2.0 / 0.5) ** 2)
    with pytest.raises(ValueError):
        mean_difference_sample_size(0, 1.0)


def test_sample_sizes_equal_the_formulas_with_scipys_normal_quantiles():
    """The formulas use Python's own normal quantiles (no scipy in the web process); scipy's
    give the same whole numbers over a grid of designs."""
    for alpha in (0.001, 0.01, 0.05, 0.1, 0.2):
        for power in (0.5, 0.8, 0.9, 0.95, 0.99):
            z_alpha, z_power = stats.norm.ppf(1 - alpha / 2), stats.norm.ppf(power)
            for p1 in (0.3, 0.45, 0.51, 0.55, 0.58, 0.65, 0.8, 0.95):
                for tie_share in (0.0, 0.2, 0.5):
                    root = (z_alpha * 0.5 + z_power * math.sqrt(p1 * (1 - p1))) / (p1 - 0.5)
                    untied = math.ceil(root * root - 1e-9)
                    expected = math.ceil(untied / (1 - tie_share) - 1e-9)
                    found = win_rate_sample_size(p1, alpha=alpha, power=power, tie_share=tie_share)
                    assert found == expected, (p1, alpha, power, tie_share)
            for difference, sd in ((0.1, 1.0), (0.5, 2.0), (-1.5, 0.7), (3.0, 10.0)):
                expected = math.ceil(((z_alpha + z_power) * sd / abs(difference)) ** 2 - 1e-9)
                found = mean_difference_sample_size(difference, sd, alpha=alpha, power=power)
                assert found == expected, (difference, sd, alpha, power)


def test_binomial_win_rate_against_scipy_and_statsmodels():
    result = binomial_win_rate(61, 39, ties=20)
    assert result.rate == pytest.approx(0.61)
    assert result.p_value == pytest.approx(stats.binomtest(61, 100, 0.5).pvalue, abs=1e-12)
    low, high = proportion_confint(61, 100, alpha=0.05, method="beta")
    assert (result.low, result.high) == (
        pytest.approx(low, abs=1e-9),
        pytest.approx(high, abs=1e-9),
    )
    assert result.ties_as_half == pytest.approx((61 + 10) / 120)
    assert result.tie_share == pytest.approx(20 / 120)
    assert result.as_dict()["wins"] == 61
    assert math.isnan(binomial_win_rate(0, 0, ties=3).rate)
    with pytest.raises(ValueError):
        binomial_win_rate(-1, 2)


@pytest.mark.parametrize("b,c", [(3, 11), (0, 0), (7, 7), (25, 10), (0, 5)])
def test_mcnemar_exact_against_statsmodels(b, c):
    expected = mcnemar([[20, b], [c, 15]], exact=True).pvalue
    assert mcnemar_exact(b, c) == pytest.approx(expected, abs=1e-12)


def test_holm_against_statsmodels():
    rng = np.random.default_rng(4)
    for _ in range(20):
        p = rng.random(rng.integers(1, 8)) ** 2
        expected = multipletests(p, method="holm")[1]
        np.testing.assert_allclose(holm(p), expected, atol=1e-12)
    assert np.isnan(holm([0.01, np.nan, 0.04])[1])
    np.testing.assert_allclose(holm([0.01, np.nan, 0.04])[[0, 2]], [0.02, 0.04])


def test_paired_difference_against_scipy():
    rng = np.random.default_rng(9)
    a = rng.normal(10, 2, 40)
    b = a + rng.normal(0.8, 1.5, 40)
    result = paired_difference(a, b, n_resamples=2000, seed=1)
    assert result["difference"] == pytest.approx(np.mean(b - a))
    assert result["t_p"] == pytest.approx(stats.ttest_rel(b, a).pvalue)
    assert result["wilcoxon_p"] == pytest.approx(stats.wilcoxon(b, a).pvalue)
    assert result["effect_size_dz"] == pytest.approx(np.mean(b - a) / np.std(b - a, ddof=1))
    assert result["relative"] == pytest.approx(np.mean(b - a) / np.mean(a))
    assert result["low"] < result["difference"] < result["high"]
    # Reproducible with the seed.
    assert paired_difference(a, b, n_resamples=2000, seed=1) == result


def test_bootstrap_means_are_weighted_means_of_resampled_items():
    values = np.array([1.0, 2.0, 3.0, 10.0])
    samples = bootstrap_means(values, n_resamples=4000, seed=3)
    assert samples.mean() == pytest.approx(values.mean(), abs=0.1)
    # Two strata of 200 items, the second weighing three times as much: mean 2.5, not 2.
    values = np.repeat([1.0, 3.0], 200)
    weights = np.repeat([1.0, 3.0], 200)
    weighted = bootstrap_means(values, n_resamples=2000, seed=3, weights=weights)
    assert weighted.mean() == pytest.approx(2.5, abs=0.01)
    same = bootstrap_means(values, n_resamples=50, seed=3, weights=np.ones(400))
    np.testing.assert_allclose(same, bootstrap_means(values, n_resamples=50, seed=3))


def test_logistic_and_linear_fits_against_statsmodels():
    import statsmodels.api as sm

    rng = np.random.default_rng(5)
    x = rng.normal(0, 100, 300)
    y = (rng.random(300) < 1 / (1 + np.exp(-(0.2 + 0.01 * x)))).astype(float)
    fit = logistic_fit(x, y)
    expected = sm.Logit(y, sm.add_constant(x)).fit(disp=0)
    assert fit["slope"] == pytest.approx(expected.params[1], rel=1e-6)
    assert fit["se"] == pytest.approx(expected.bse[1], rel=1e-6)
    assert fit["p"] == pytest.approx(expected.pvalues[1], rel=1e-5)
    assert logistic_fit([1, 2, 3], [1, 1, 1])["slope"] is None
    line = linear_fit(x, 2 * x + rng.normal(0, 1, 300))
    assert line["slope"] == pytest.approx(2, abs=0.01)
