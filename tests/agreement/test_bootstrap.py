"""The vectorised bootstrap of alpha against a slow loop, scipy.stats.bootstrap and properties."""

import dataclasses

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

import agreement.bootstrap as bootstrap_module
from agreement.bootstrap import bootstrap_alphas, unit_counts
from agreement.krippendorff import alpha_terms
from agreement.stats import alpha_bootstrap, alpha_interval, krippendorff_alpha

LEVELS = ("nominal", "ordinal", "interval", "ratio")
NAN = np.nan


def study(seed, raters=5, units=36, missing=0.15, scale=5):
    """Ratings on a 1..scale scale that mostly agree with a per-unit truth."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, scale + 1, size=units)
    data = np.clip(truth + rng.integers(-1, 2, size=(raters, units)), 1, scale).astype(float)
    data[rng.random(data.shape) < missing] = NAN
    return data


def pairable(data):
    return data[:, (~np.isnan(data)).sum(axis=0) >= 2]


@pytest.mark.parametrize("level", LEVELS)
def test_each_resample_equals_alpha_of_the_resampled_data(level, monkeypatch):
    data = study(1, units=8, missing=0.3)
    data[:, 0] = [2, NAN, NAN, NAN, NAN]  # not pairable: never drawn
    data[:, 1:5] = 3.0  # constant units, so some resamples have no variation
    units = pairable(data)
    # Several chunks, to check that drawing chunk by chunk gives the documented draws.
    monkeypatch.setattr(bootstrap_module, "BLOCK", 5 * units.shape[1])
    fast = bootstrap_alphas(alpha_terms(data, level), 200, seed=42)

    drawn = np.random.default_rng(42).integers(0, units.shape[1], size=(200, units.shape[1]))
    slow = np.array([krippendorff_alpha(units[:, row], level) for row in drawn])
    np.testing.assert_allclose(fast, slow, rtol=1e-10, atol=1e-12)
    assert np.isnan(slow).any() and not np.isnan(slow).all()


def test_unit_counts():
    counts = unit_counts(np.array([[0, 0, 2], [1, 2, 1]]), 3)
    np.testing.assert_array_equal(counts, [[2, 0, 1], [0, 2, 1]])


@pytest.mark.parametrize("level", LEVELS)
def test_summary_follows_the_resampled_alphas(level):
    data = study(2)
    result = alpha_bootstrap(data, level, n_resamples=500, confidence=0.9, seed=3)
    alphas = bootstrap_alphas(alpha_terms(data, level), 500, seed=3)
    assert result.alpha == krippendorff_alpha(data, level)
    assert (result.low, result.high) == tuple(np.quantile(alphas, [0.05, 0.95]))
    assert result.below == {t: np.mean(alphas < t) for t in (0.667, 0.70, 0.80)}
    assert (result.n_resamples, result.n_degenerate, result.method) == (500, 0, "percentile")
    assert (result.confidence, result.seed) == (0.9, 3)


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("level", ["ordinal", "interval"])
def test_interval_equals_scipy_bootstrap_on_the_same_draws(level, method):
    data = study(4)
    terms = alpha_terms(data, level)

    def statistic(drawn, axis=-1):
        drawn = np.atleast_2d(drawn)  # scipy also calls it on the data and jackknife samples
        alphas = terms.alphas(unit_counts(drawn, terms.n_units))
        return alphas if len(alphas) > 1 else alphas[0]

    expected = scipy.stats.bootstrap(
        (np.arange(terms.n_units),),
        statistic,
        n_resamples=2000,
        confidence_level=0.9,
        method=method,
        rng=np.random.default_rng(9),
    ).confidence_interval
    result = alpha_bootstrap(data, level, n_resamples=2000, confidence=0.9, seed=9, method=method)
    assert result.low == pytest.approx(expected.low, abs=1e-12)
    assert result.high == pytest.approx(expected.high, abs=1e-12)


def test_bca_differs_from_percentile_on_skewed_data():
    data = study(5, units=20)
    percentile = alpha_interval(data, "interval", n_resamples=2000)
    bca = alpha_interval(data, "interval", n_resamples=2000, method="bca")
    assert percentile != bca


def test_bca_counts_ties_with_the_estimate_as_half():
    # Perfect agreement: every defined resample has alpha 1, tied with the estimate, so the
    # bias correction is 0 rather than infinite.
    data = [[1, 2, 3, 1, 2], [1, 2, 3, 1, 2], [1, 2, NAN, 1, 2]]
    assert alpha_interval(data, "ordinal", n_resamples=200, method="bca") == (1.0, 1.0)


def test_reproducible_with_a_seed_and_different_with_another():
    data = study(6)
    first = alpha_bootstrap(data, "ordinal", n_resamples=300, seed=1)
    assert alpha_bootstrap(data, "ordinal", n_resamples=300, seed=1) == first
    other = alpha_bootstrap(data, "ordinal", n_resamples=300, seed=2)
    assert (other.low, other.high) != (first.low, first.high)


def test_degenerate_resamples_are_counted_and_left_out():
    # Five units on which everyone says 3, one unit with variation: every resample that
    # misses unit 5 has no variation at all.
    data = np.array([[3, 3, 3, 3, 3, 1], [3, 3, 3, 3, 3, 5], [3, 3, NAN, 3, 3, 4]], dtype=float)
    result = alpha_bootstrap(data, "interval", n_resamples=1000, seed=0)
    drawn = np.random.default_rng(0).integers(0, 6, size=(1000, 6))
    assert result.n_degenerate == np.count_nonzero(~(drawn == 5).any(axis=1)) > 0
    alphas = bootstrap_alphas(alpha_terms(data, "interval"), 1000, seed=0)
    assert result.below[0.8] == np.mean(alphas[~np.isnan(alphas)] < 0.8)


def test_constant_units_with_different_values_are_not_degenerate():
    # Perfect agreement on two values: every resample drawing both has alpha 1.
    data = [[1, 1, 2, 2], [1, 1, 2, 2]]
    result = alpha_bootstrap(data, "nominal", n_resamples=200, seed=0)
    drawn = np.random.default_rng(0).integers(0, 4, size=(200, 4))
    single_value = np.count_nonzero((drawn < 2).all(axis=1) | (drawn >= 2).all(axis=1))
    assert result.n_degenerate == single_value
    assert (result.alpha, result.low, result.high) == (1.0, 1.0, 1.0)


def test_no_pairable_unit_gives_nan_interval():
    result = alpha_bootstrap([[1, NAN], [NAN, 2]], "interval", n_resamples=50)
    assert np.isnan([result.alpha, result.low, result.high]).all()
    assert result.n_degenerate == 50
    assert all(np.isnan(share) for share in result.below.values())


def test_result_is_frozen():
    result = alpha_bootstrap(study(7), n_resamples=10)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.alpha = 1.0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"method": "basic"}, "method must be"),
        ({"confidence": 95}, "confidence must be"),
        ({"n_resamples": 0}, "at least 1"),
        ({"n_resamples": 10.5}, "whole number"),
        ({"level": "likert"}, "level must be"),
    ],
)
def test_rejects_bad_options(options, message):
    with pytest.raises(ValueError, match=message):
        alpha_bootstrap(study(8), **options)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), level=st.sampled_from(["ordinal", "interval"]))
def test_interval_contains_the_estimate(seed, level):
    result = alpha_bootstrap(study(seed, units=30), level, n_resamples=500, seed=seed)
    assert result.low <= result.alpha <= result.high
    assert result.n_degenerate == 0


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), level=st.sampled_from(LEVELS))
def test_a_unit_with_one_rating_changes_nothing(seed, level):
    data = study(seed, units=15)
    extra = np.full((data.shape[0], 1), NAN)
    extra[2, 0] = 4.0
    expected = alpha_bootstrap(data, level, n_resamples=200, seed=seed)
    assert alpha_bootstrap(np.hstack([extra, data]), level, n_resamples=200, seed=seed) == expected
