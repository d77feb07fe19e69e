"""The bootstrap of alpha against the unit-level computation, scipy.stats.bootstrap, a naive
loop over the krippendorff package, and properties."""

import dataclasses

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import agreement.stats.bootstrap as bootstrap_module
from agreement.stats import alpha_bootstrap, alpha_interval, krippendorff_alpha
from agreement.stats.bootstrap import bootstrap_alphas, pattern_draws, row_counts
from agreement.stats.krippendorff import alpha_terms, unit_patterns
from tests.agreement.test_krippendorff import KRIPPENDORFF_2011, package_alpha

LEVELS = ("nominal", "ordinal", "interval", "ratio")
NAN = np.nan
# MULTINOMIAL_SHARE values that force each way of drawing: patterns (multinomial), units.
DRAWS = {"patterns": 1.0, "units": 0.0}


def study(seed, raters=5, units=36, missing=0.15, scale=5):
    """Ratings on a 1..scale scale that mostly agree with a per-unit truth."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, scale + 1, size=units)
    data = np.clip(truth + rng.integers(-1, 2, size=(raters, units)), 1, scale).astype(float)
    data[rng.random(data.shape) < missing] = NAN
    return data


def pairable(data):
    data = np.asarray(data, dtype=float)
    return data[:, (~np.isnan(data)).sum(axis=0) >= 2]


def all_draws(patterns, n_resamples, seed):
    return np.vstack(list(pattern_draws(patterns, n_resamples, seed)))


def units_drawn(patterns, counts):
    """Pairable-unit indices for one row of pattern counts: pattern k's count spread over its
    own units in turn, so different units of a pattern stand in for one another."""
    members = [np.flatnonzero(patterns.of_unit == k) for k in range(patterns.counts.size)]
    return np.concatenate(
        [np.resize(members[k], int(n)) for k, n in enumerate(counts) if n > 0] or [[]]
    ).astype(int)


# What is drawn ----------------------------------------------------------------------------


@pytest.mark.parametrize("draws", DRAWS)
@pytest.mark.parametrize("level", LEVELS)
def test_each_resample_equals_alpha_of_the_resampled_units(level, draws, monkeypatch):
    data = study(1, units=8, missing=0.3)
    data[:, 0] = [2, NAN, NAN, NAN, NAN]  # not pairable: never drawn
    data[:, 1:5] = 3.0  # constant units, so some resamples have no variation
    data[:, 5] = [1, 2, 1, NAN, 2]
    data[:, 6] = [2, NAN, 1, 1, 2]  # the same pattern as unit 5
    units = pairable(data)
    monkeypatch.setattr(bootstrap_module, "MULTINOMIAL_SHARE", DRAWS[draws])
    patterns = unit_patterns(data, level)
    assert patterns.counts.size < units.shape[1]
    # Several chunks, to check that drawing chunk by chunk gives the documented draws.
    monkeypatch.setattr(bootstrap_module, "BLOCK", 5 * units.shape[1])
    fast = bootstrap_alphas(patterns, 200, seed=42)

    rng = np.random.default_rng(42)
    if draws == "patterns":
        counts = rng.multinomial(units.shape[1], patterns.counts / units.shape[1], size=200)
    else:
        drawn = rng.integers(0, units.shape[1], size=(200, units.shape[1]))
        counts = row_counts(patterns.of_unit[drawn], patterns.counts.size)
    np.testing.assert_array_equal(all_draws(patterns, 200, seed=42), counts)
    slow = np.array(
        [krippendorff_alpha(units[:, units_drawn(patterns, row)], level) for row in counts]
    )
    np.testing.assert_allclose(fast, slow, rtol=1e-10, atol=1e-12)
    assert np.isnan(slow).any() and not np.isnan(slow).all()


def test_the_multinomial_is_used_when_patterns_are_few():
    few = study(3, raters=3, units=400, missing=0.0, scale=3)  # at most 10 patterns
    patterns = unit_patterns(few, "ordinal")
    expected = np.random.default_rng(5).multinomial(400, patterns.counts / 400, size=50)
    np.testing.assert_array_equal(all_draws(patterns, 50, seed=5), expected)
    continuous = np.random.default_rng(6).normal(size=(3, 400))  # one pattern per unit
    patterns = unit_patterns(continuous, "interval")
    assert patterns.counts.size == 400
    drawn = np.random.default_rng(5).integers(0, 400, size=(50, 400))
    expected = row_counts(patterns.of_unit[drawn], 400)
    np.testing.assert_array_equal(all_draws(patterns, 50, seed=5), expected)


def test_row_counts():
    counts = row_counts(np.array([[0, 0, 2], [1, 2, 1]]), 3)
    np.testing.assert_array_equal(counts, [[2, 0, 1], [0, 2, 1]])


def test_units_with_the_same_values_share_a_pattern():
    data = [
        [1, 2, NAN, 1, 2, 1, 0.0],
        [2, 1, 1, 2, 2, 1, -0.0],
        [NAN, NAN, 2, 2, 1, 2, 3],
    ]
    patterns = unit_patterns(data, "interval")
    # {1, 2} x3 (units 0-2, whatever the raters' order and where the gap is),
    # {1, 2, 2} x2 (units 3, 4), {1, 1, 2}, and {0, 0, 3} (-0.0 is 0).
    of_unit = patterns.of_unit
    assert of_unit[0] == of_unit[1] == of_unit[2]
    assert of_unit[3] == of_unit[4]
    assert len({of_unit[0], of_unit[3], of_unit[5], of_unit[6]}) == 4
    np.testing.assert_array_equal(np.bincount(of_unit), patterns.counts)
    assert sorted(patterns.counts) == [1, 1, 2, 3]


# The same alphas as the units ---------------------------------------------------------------

CELL = st.sampled_from([NAN, NAN, 0.0, 1.0, 1.5, 2.0, 3.0, 5.0])


@st.composite
def ratings_and_counts(draw):
    raters = draw(st.integers(2, 5))
    units = draw(st.integers(2, 30))
    data = draw(arrays(np.float64, (raters, units), elements=CELL))
    seed = draw(st.integers(0, 2**32 - 1))
    return data, seed


@settings(max_examples=60, deadline=None)
@given(case=ratings_and_counts(), level=st.sampled_from(LEVELS))
def test_pattern_alphas_equal_unit_alphas_for_the_same_draws(case, level):
    # Any counts over patterns, spread over the patterns' units, give the unit-level alpha.
    data, seed = case
    patterns = unit_patterns(data, level)
    units = patterns.counts.sum()
    if units == 0:
        return
    counts = np.random.default_rng(seed).multinomial(units, patterns.counts / units, size=40)
    unit_level = np.zeros((len(counts), int(units)))
    for row, drawn in zip(unit_level, counts, strict=True):
        np.add.at(row, units_drawn(patterns, drawn), 1.0)
    expected = alpha_terms(data, level).alphas(unit_level)
    np.testing.assert_allclose(patterns.terms.alphas(counts), expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(
        patterns.terms.alphas(patterns.counts[None]),
        [krippendorff_alpha(data, level)],
        rtol=1e-9,
        atol=1e-12,
    )


@pytest.mark.parametrize("draws", DRAWS)
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_distribution_agrees_with_a_naive_loop_over_the_package(level, draws, monkeypatch):
    # Krippendorff's 2011 example (11 pairable units): resample units with numpy and compute
    # alpha with the krippendorff package, 3,000 times; ours 20,000 times. Both estimate the
    # same bootstrap distribution: compare its shape within Monte-Carlo error.
    monkeypatch.setattr(bootstrap_module, "MULTINOMIAL_SHARE", DRAWS[draws])
    units = pairable(KRIPPENDORFF_2011)
    rng = np.random.default_rng(2011)
    naive = np.array(
        [
            package_alpha(units[:, rng.integers(0, units.shape[1], units.shape[1])], level)
            for _ in range(3000)
        ]
    )
    ours = bootstrap_alphas(unit_patterns(KRIPPENDORFF_2011, level), 20_000, seed=7)
    # Undefined resamples (no variation) as often: a binomial share, 4 standard errors.
    share = np.isnan(naive).mean()
    assert np.isnan(ours).mean() == pytest.approx(share, abs=4 * np.sqrt(share / 3000) + 1e-3)
    naive, ours = naive[~np.isnan(naive)], ours[~np.isnan(ours)]
    assert abs(ours.mean() - naive.mean()) < 4 * naive.std() / np.sqrt(naive.size)
    assert ours.std() == pytest.approx(naive.std(), rel=0.08)
    assert scipy.stats.ks_2samp(ours, naive).pvalue > 0.01
    result = alpha_bootstrap(KRIPPENDORFF_2011, level, n_resamples=20_000, seed=7)
    expected = np.quantile(naive, [0.025, 0.975])
    np.testing.assert_allclose([result.low, result.high], expected, atol=0.04)


# The summary and scipy ----------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_summary_follows_the_resampled_alphas(level):
    data = study(2)
    result = alpha_bootstrap(data, level, n_resamples=500, confidence=0.9, seed=3)
    estimate = krippendorff_alpha(data, level)
    alphas = bootstrap_alphas(unit_patterns(data, level), 500, seed=3, estimate=estimate)
    assert result.alpha == estimate
    assert (result.low, result.high) == tuple(np.quantile(alphas, [0.05, 0.95]))
    assert result.below == {t: np.mean(alphas < t) for t in (0.667, 0.70, 0.80)}
    assert (result.n_resamples, result.n_degenerate, result.method) == (500, 0, "percentile")
    assert (result.confidence, result.seed) == (0.9, 3)


class UnitsOf(np.random.Generator):
    """A generator whose `integers` hands scipy.stats.bootstrap the given rows of unit
    indices, in order: scipy then resamples exactly the units our resamples drew."""

    def __init__(self, rows):
        super().__init__(np.random.PCG64(0))
        self.rows, self.next = rows, 0

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        rows = self.rows[self.next : self.next + size[0]]
        self.next += size[0]
        return rows


@pytest.mark.parametrize("draws", DRAWS)
@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("level", ["ordinal", "interval"])
def test_interval_equals_scipy_bootstrap_on_the_same_units(level, method, draws, monkeypatch):
    # scipy computes the percentile and BCa intervals (its jackknife leaves out one unit at a
    # time) with alpha evaluated unit by unit, on the units our resamples drew.
    monkeypatch.setattr(bootstrap_module, "MULTINOMIAL_SHARE", DRAWS[draws])
    data = study(4)
    terms = alpha_terms(data, level)
    patterns = unit_patterns(data, level)
    rows = np.array([units_drawn(patterns, row) for row in all_draws(patterns, 2000, seed=9)])

    def statistic(drawn, axis=-1):
        drawn = np.atleast_2d(drawn)  # scipy also calls it on the data and jackknife samples
        alphas = terms.alphas(row_counts(drawn, terms.n_units))
        return alphas if len(alphas) > 1 else alphas[0]

    expected = scipy.stats.bootstrap(
        (np.arange(terms.n_units),),
        statistic,
        n_resamples=2000,
        confidence_level=0.9,
        method=method,
        rng=UnitsOf(rows),
    ).confidence_interval
    result = alpha_bootstrap(data, level, n_resamples=2000, confidence=0.9, seed=9, method=method)
    assert result.low == pytest.approx(expected.low, abs=1e-12)
    assert result.high == pytest.approx(expected.high, abs=1e-12)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_jackknife_acceleration_equals_the_unit_by_unit_one(level):
    # The jackknife with each unit left out in turn, alpha from the krippendorff package.
    # The published example repeats two patterns; in the small case only the last unit
    # varies, so leaving it out leaves no variation: undefined, and left out.
    cases = [pairable(KRIPPENDORFF_2011), np.array([[3, 3, 3, 2, 1], [3, 3, 3, 2, 5.0]])]
    for data in cases:
        left_out = np.array(
            [package_alpha(np.delete(data, unit, axis=1), level) for unit in range(data.shape[1])]
        )
        left_out = left_out[~np.isnan(left_out)]
        spread = left_out.mean() - left_out
        expected = (spread**3).sum() / (6.0 * ((spread**2).sum()) ** 1.5)
        acceleration = bootstrap_module._jackknife_acceleration(unit_patterns(data, level))
        assert acceleration == pytest.approx(expected, rel=1e-9, abs=1e-12)


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
    data = study(6, raters=3, units=300)
    assert unit_patterns(data, "ordinal").counts.size <= 0.2 * 300  # the multinomial
    first = alpha_bootstrap(data, "ordinal", n_resamples=300, seed=1)
    assert alpha_bootstrap(data, "ordinal", n_resamples=300, seed=1) == first
    other = alpha_bootstrap(data, "ordinal", n_resamples=300, seed=2)
    assert (other.low, other.high) != (first.low, first.high)


# Degenerate cases ---------------------------------------------------------------------------


@pytest.mark.parametrize("draws", DRAWS)
def test_degenerate_resamples_are_counted_and_left_out(draws, monkeypatch):
    # Five units on which everyone says 3, one unit with variation: every resample that
    # misses unit 5 has no variation at all.
    monkeypatch.setattr(bootstrap_module, "MULTINOMIAL_SHARE", DRAWS[draws])
    data = np.array([[3, 3, 3, 3, 3, 1], [3, 3, 3, 3, 3, 5], [3, 3, NAN, 3, 3, 4]], dtype=float)
    patterns = unit_patterns(data, "interval")
    result = alpha_bootstrap(data, "interval", n_resamples=1000, seed=0)
    varied = patterns.of_unit[5]
    missed = np.count_nonzero(all_draws(patterns, 1000, seed=0)[:, varied] == 0)
    assert result.n_degenerate == missed > 0
    alphas = bootstrap_alphas(patterns, 1000, seed=0)
    assert np.count_nonzero(np.isnan(alphas)) == missed
    assert result.below[0.8] == np.mean(alphas[~np.isnan(alphas)] < 0.8)


@pytest.mark.parametrize("draws", DRAWS)
def test_constant_units_with_different_values_are_not_degenerate(draws, monkeypatch):
    # Perfect agreement on two values: every resample drawing both has alpha 1.
    monkeypatch.setattr(bootstrap_module, "MULTINOMIAL_SHARE", DRAWS[draws])
    data = [[1, 1, 2, 2], [1, 1, 2, 2]]
    patterns = unit_patterns(data, "nominal")
    assert patterns.counts.tolist() == [2, 2]
    result = alpha_bootstrap(data, "nominal", n_resamples=200, seed=0)
    single_value = np.count_nonzero((all_draws(patterns, 200, seed=0) == 0).any(axis=1))
    assert result.n_degenerate == single_value
    assert (result.alpha, result.low, result.high) == (1.0, 1.0, 1.0)


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("level", LEVELS)
def test_a_single_pattern_gives_the_estimate_every_time(level, method):
    # Every unit rated 0.3, 2.9 and 0.7 (values whose alpha rounds differently when summed
    # over units or over patterns): every resample is the data again, and ties with the
    # estimate exactly, so BCa has no bias correction to make.
    data = np.tile([[0.3], [2.9], [0.7]], 37)
    assert unit_patterns(data, level).counts.tolist() == [37]
    result = alpha_bootstrap(data, level, n_resamples=300, seed=4, method=method)
    assert result.alpha == krippendorff_alpha(data, level)
    assert (result.low, result.high) == (result.alpha, result.alpha)
    assert result.n_degenerate == 0


@pytest.mark.parametrize("level", LEVELS)
def test_resamples_that_are_the_data_tie_with_the_estimate(level):
    # Three units, two patterns: a resample drawing the patterns 2 and 1 times is the data.
    data = [[1, 1, 4.5], [2, 2, 0.2], [NAN, NAN, 3]]
    patterns = unit_patterns(data, level)
    estimate = krippendorff_alpha(data, level)
    alphas = bootstrap_alphas(patterns, 300, seed=2, estimate=estimate)
    same = (all_draws(patterns, 300, seed=2) == patterns.counts).all(axis=1)
    assert same.any() and (alphas[same] == estimate).all()
    np.testing.assert_allclose(alphas, bootstrap_alphas(patterns, 300, seed=2), rtol=1e-12)


def test_a_single_pattern_without_variation_has_no_interval():
    result = alpha_bootstrap([[3, 3, 3], [3, 3, 3]], "ordinal", n_resamples=100, method="bca")
    assert np.isnan([result.alpha, result.low, result.high]).all()
    assert result.n_degenerate == 100
    assert all(np.isnan(share) for share in result.below.values())


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
