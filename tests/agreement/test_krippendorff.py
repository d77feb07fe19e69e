"""Krippendorff's alpha against the krippendorff package, the published example and properties."""

import warnings

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import agreement.stats.krippendorff as alpha_module
from agreement.stats import alpha_without_each_rater, krippendorff_alpha

LEVELS = ("nominal", "ordinal", "interval", "ratio")
NAN = np.nan

# Krippendorff (2011) "Computing Krippendorff's alpha-reliability", section E: observers A-D
# (rows) code 12 units (columns), with missing data.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]


def package_alpha(data, level):
    """The krippendorff package's alpha, NaN where it refuses (no variation or no pairs)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            return krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        except ValueError:
            return NAN


def random_ratings(rng, raters, units, missing, values):
    data = rng.choice(values, size=(raters, units))
    # Correlated with a per-unit truth half of the time, so alphas are not all near 0.
    if rng.random() < 0.5:
        truth = rng.choice(values, size=units)
        data = np.where(rng.random((raters, units)) < 0.6, truth, data)
    return np.where(rng.random((raters, units)) < missing, NAN, data)


@pytest.mark.parametrize(
    ("level", "expected"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_2011_worked_example(level, expected):
    alpha = krippendorff_alpha(KRIPPENDORFF_2011, level)
    assert round(alpha, 3) == expected
    assert alpha == pytest.approx(package_alpha(KRIPPENDORFF_2011, level), abs=1e-12)


def test_accepts_lists_with_none():
    data = [[None if np.isnan(x) else x for x in row] for row in KRIPPENDORFF_2011]
    assert krippendorff_alpha(data, "interval") == pytest.approx(0.849, abs=5e-4)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(
    "values",
    [np.arange(1.0, 6.0), np.arange(0.0, 10.5, 0.5), np.array([0.0, 1.0])],
    ids=["integers", "half-integers", "binary"],
)
def test_matches_krippendorff_package_on_random_data(level, values):
    rng = np.random.default_rng(sum(map(ord, level)) + values.size)
    compared = 0
    for _ in range(150):
        raters, units = rng.integers(2, 9), rng.integers(2, 60)
        data = random_ratings(rng, raters, units, rng.uniform(0.0, 0.6), values)
        ours, theirs = krippendorff_alpha(data, level), package_alpha(data, level)
        if np.isnan(theirs):
            assert np.isnan(ours)
            continue
        assert ours == pytest.approx(theirs, abs=1e-9)
        compared += 1
    assert compared > 100


@pytest.mark.parametrize("level", ["interval", "ratio"])
def test_matches_package_on_continuous_values(level):
    rng = np.random.default_rng(7)
    for scale in (1.0, 1e-3, 1e4):
        truth = rng.lognormal(0.0, 2.0, size=40)
        data = truth * rng.lognormal(0.0, 0.5, size=(4, 40)) * scale
        data[rng.random(data.shape) < 0.25] = NAN
        assert krippendorff_alpha(data, level) == pytest.approx(
            package_alpha(data, level), abs=1e-9
        )


@pytest.mark.parametrize("level", ["nominal", "ordinal", "ratio"])
def test_sparse_counts_and_blocked_nodes_give_the_same_alpha(level, monkeypatch):
    # A tiny block forces the sparse units x values matrix and one quadrature node per block.
    rng = np.random.default_rng(11)
    data = random_ratings(rng, 5, 50, 0.2, np.arange(0.0, 8.0))
    expected = krippendorff_alpha(data, level)
    monkeypatch.setattr(alpha_module, "BLOCK", 8)
    assert krippendorff_alpha(data, level) == pytest.approx(expected, abs=1e-12)
    assert expected == pytest.approx(package_alpha(data, level), abs=1e-9)


def test_interval_keeps_precision_for_large_values_with_small_spread():
    rng = np.random.default_rng(3)
    data = rng.normal(size=(4, 200)) + rng.normal(size=200)
    assert krippendorff_alpha(data + 1e8, "interval") == pytest.approx(
        krippendorff_alpha(data, "interval"), abs=1e-6
    )


def test_ratio_keeps_precision_for_large_values_with_small_spread():
    rng = np.random.default_rng(4)
    data = 1e5 + rng.random((4, 60))
    data[rng.random(data.shape) < 0.2] = NAN
    assert krippendorff_alpha(data, "ratio") == pytest.approx(
        package_alpha(data, "ratio"), abs=1e-9
    )


def test_ratio_distance_is_zero_between_zeros_and_one_against_zero():
    # d(0, 0) = 0 and d(0, k) = 1, as in Krippendorff and the package.
    data = [[0, 0, 2, 0, 3], [0, 1, 2, 4, 3]]
    assert krippendorff_alpha(data, "ratio") == pytest.approx(
        package_alpha(data, "ratio"), abs=1e-12
    )


@pytest.mark.parametrize("level", LEVELS)
def test_undefined_alpha_is_nan(level):
    assert np.isnan(krippendorff_alpha([[1, 2, 3]], level))  # one rater: no pairs
    assert np.isnan(krippendorff_alpha([[1, NAN], [NAN, 2]], level))  # no unit rated twice
    assert np.isnan(krippendorff_alpha([[2, 2, NAN], [2, 2, 2]], level))  # no variation
    assert np.isnan(krippendorff_alpha(np.empty((3, 0)), level))


def test_unknown_level_is_rejected():
    with pytest.raises(ValueError, match="level must be one of 'nominal', 'ordinal'"):
        krippendorff_alpha(KRIPPENDORFF_2011, "likert")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([1, 2, 3], "2-D"),
        ([["a", "b"], ["a", "a"]], "must be numbers"),
        ([[1, 2], [1]], "must be numbers"),
        ([[1, np.inf], [1, 2]], "finite"),
    ],
)
def test_malformed_ratings_are_rejected(data, message):
    with pytest.raises(ValueError, match=message):
        krippendorff_alpha(data, "nominal")


def test_ratio_rejects_negative_ratings():
    with pytest.raises(ValueError, match=">= 0"):
        krippendorff_alpha([[1, -2], [1, 3]], "ratio")


@pytest.mark.parametrize("level", LEVELS)
def test_alpha_without_each_rater(level):
    data = np.array(KRIPPENDORFF_2011)
    result = alpha_without_each_rater(data, level)
    assert result.shape == (4,)
    for rater in range(4):
        assert result[rater] == krippendorff_alpha(np.delete(data, rater, axis=0), level)


# Properties -------------------------------------------------------------------------------

CELL = st.sampled_from([NAN, NAN, 0.0, 1.0, 1.5, 2.0, 3.0, 5.0])


@st.composite
def ratings(draw, min_units=1):
    raters = draw(st.integers(2, 6))
    units = draw(st.integers(min_units, 12))
    return draw(arrays(np.float64, (raters, units), elements=CELL))


def same_alpha(first, second):
    return (np.isnan(first) and np.isnan(second)) or first == pytest.approx(second, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(data=ratings(), level=st.sampled_from(LEVELS), seed=st.integers(0, 2**16))
def test_invariant_to_order_of_raters_and_units(data, level, seed):
    rng = np.random.default_rng(seed)
    shuffled = data[rng.permutation(data.shape[0])][:, rng.permutation(data.shape[1])]
    assert same_alpha(krippendorff_alpha(data, level), krippendorff_alpha(shuffled, level))


@settings(max_examples=60, deadline=None)
@given(data=ratings(min_units=2), level=st.sampled_from(LEVELS))
def test_perfect_agreement_gives_one_when_there_is_variation(data, level):
    # Every rating of a unit becomes the unit's first present rating.
    first = np.array(
        [column[~np.isnan(column)][0] if (~np.isnan(column)).any() else NAN for column in data.T]
    )
    agreed = np.where(np.isnan(data), NAN, first)
    pairable = (~np.isnan(agreed)).sum(axis=0) >= 2
    alpha = krippendorff_alpha(agreed, level)
    if np.unique(first[pairable]).size >= 2:
        assert alpha == pytest.approx(1.0, abs=1e-12)
    else:
        assert np.isnan(alpha)


@settings(max_examples=40, deadline=None)
@given(data=ratings(), level=st.sampled_from(LEVELS), value=st.sampled_from([0.0, 2.0, 4.0]))
def test_identical_ratings_give_nan(data, level, value):
    assert np.isnan(krippendorff_alpha(np.where(np.isnan(data), NAN, value), level))


@settings(max_examples=60, deadline=None)
@given(data=ratings(), level=st.sampled_from(LEVELS), value=st.sampled_from([0.0, 4.0, 9.0]))
def test_a_unit_with_one_rating_changes_nothing(data, level, value):
    extra = np.full((data.shape[0], 1), NAN)
    extra[0, 0] = value
    assert same_alpha(
        krippendorff_alpha(data, level), krippendorff_alpha(np.hstack([data, extra]), level)
    )


@settings(max_examples=60, deadline=None)
@given(data=ratings(), level=st.sampled_from(LEVELS))
def test_matches_package_on_generated_data(data, level):
    assert same_alpha(krippendorff_alpha(data, level), package_alpha(data, level))
