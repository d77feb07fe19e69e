"""Cohen's and Fleiss' kappa and percent agreement against published examples and libraries."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from agreement.stats import cohen_kappa, fleiss_kappa, pairwise_cohen_kappa, percent_agreement

NAN = np.nan
WEIGHTS = (None, "linear", "quadratic")

# Fleiss (1971), "Measuring nominal scale agreement among many raters": 30 patients, each
# diagnosed by 6 psychiatrists into 5 categories. Row: how many gave each category.
FLEISS_1971 = [
    [0, 0, 0, 6, 0], [0, 3, 0, 0, 3], [0, 1, 4, 0, 1], [0, 0, 0, 0, 6], [0, 3, 0, 3, 0],
    [2, 0, 4, 0, 0], [0, 0, 4, 0, 2], [2, 0, 3, 1, 0], [2, 0, 0, 4, 0], [0, 0, 0, 0, 6],
    [1, 0, 0, 5, 0], [1, 1, 0, 4, 0], [0, 3, 3, 0, 0], [1, 0, 0, 5, 0], [0, 2, 0, 3, 1],
    [0, 0, 5, 0, 1], [3, 0, 0, 1, 2], [5, 1, 0, 0, 0], [0, 2, 0, 4, 0], [1, 0, 2, 0, 3],
    [0, 0, 0, 0, 6], [0, 1, 0, 5, 0], [0, 2, 0, 1, 3], [2, 0, 0, 4, 0], [1, 0, 0, 4, 1],
    [0, 5, 0, 1, 0], [4, 0, 0, 0, 2], [0, 2, 0, 4, 0], [1, 0, 5, 0, 0], [0, 0, 0, 0, 6],
]  # fmt: skip


def raters_by_units(count_table):
    """Ratings (raters x units) whose per-unit category counts are `count_table`."""
    return np.array([np.repeat(np.arange(1, len(row) + 1), row) for row in count_table]).T


def sklearn_kappa(r1, r2, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # undefined kappa: sklearn warns and returns NaN
        return cohen_kappa_score(r1, r2, **options)


# Cohen -------------------------------------------------------------------------------------


def test_protocol_worked_example():
    # Protocol template 7.2: 200 answers, rater 1 x rater 2 table [[120, 18], [12, 50]].
    r1 = [1] * 120 + [1] * 18 + [0] * 12 + [0] * 50
    r2 = [1] * 120 + [0] * 18 + [1] * 12 + [0] * 50
    kappa = cohen_kappa(r1, r2)
    assert kappa == pytest.approx((0.85 - 0.5608) / (1 - 0.5608), abs=1e-12)
    assert round(kappa, 2) == 0.66


@pytest.mark.parametrize("weights", WEIGHTS)
def test_cohen_matches_sklearn_on_random_data(weights):
    rng = np.random.default_rng(5)
    labels = np.arange(6)
    for _ in range(200):
        n = rng.integers(2, 80)
        r1 = rng.integers(0, 6, n)
        r2 = (
            np.clip(r1 + rng.integers(-2, 3, n), 0, 5)
            if rng.random() < 0.7
            else rng.integers(0, 6, n)
        )
        expected = sklearn_kappa(r1, r2, weights=weights, labels=labels)
        assert cohen_kappa(r1, r2, weights, categories=labels) == pytest.approx(
            expected, abs=1e-12, nan_ok=True
        )
        # Default labels: the distinct ratings, as sklearn's default.
        expected = sklearn_kappa(r1, r2, weights=weights)
        assert cohen_kappa(r1, r2, weights) == pytest.approx(expected, abs=1e-12, nan_ok=True)


@pytest.mark.parametrize("weights", WEIGHTS)
def test_cohen_on_many_distinct_values(weights):
    rng = np.random.default_rng(6)
    r1 = rng.normal(size=600).round(3)
    r2 = (r1 + rng.normal(scale=0.5, size=600)).round(3)
    # sklearn refuses float labels: give it the same ratings as whole numbers.
    expected = sklearn_kappa(np.rint(r1 * 1000), np.rint(r2 * 1000), weights=weights)
    assert cohen_kappa(r1, r2, weights) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_weights_follow_the_order_of_labels(weights):
    r1, r2 = [3, 1, 2, 2, 3, 1], [3, 2, 2, 1, 1, 1]
    labels = [3, 1, 2]
    expected = sklearn_kappa(r1, r2, weights=weights, labels=labels)
    assert cohen_kappa(r1, r2, weights, categories=labels) == pytest.approx(expected, abs=1e-12)
    assert cohen_kappa(r1, r2, weights, categories=labels) != pytest.approx(
        cohen_kappa(r1, r2, weights)
    )


def test_units_missing_for_either_rater_drop_out():
    r1 = [1, 2, None, 3, 2, NAN, 1, 3]
    r2 = [1, 2, 3, None, 1, 2, 1, 3]
    both = [0, 1, 4, 6, 7]
    expected = sklearn_kappa(np.array(r1, dtype=float)[both], np.array(r2, dtype=float)[both])
    assert cohen_kappa(r1, r2) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("weights", WEIGHTS)
def test_cohen_undefined_is_nan(weights):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NaN by design, not from dividing 0 by 0
        assert np.isnan(cohen_kappa([2, 2, 2], [2, 2, 2], weights))  # chance agreement 1
    assert np.isnan(cohen_kappa([1, 2, NAN], [1, NAN, 2]))  # one shared unit
    assert cohen_kappa([1, 2], [2, 1]) == pytest.approx(sklearn_kappa([1, 2], [2, 1]))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: cohen_kappa([1, 2, 3], [1, 2]), "differ in length"),
        (lambda: cohen_kappa([1, 2], [1, 2], weights="cubic"), "weights must be"),
        (lambda: cohen_kappa([1, 2], [1, 5], categories=[1, 2]), "one of the categories"),
        (lambda: cohen_kappa([1, 2], [1, 2], categories=[1, 1, 2]), "distinct"),
    ],
)
def test_cohen_rejects_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@settings(max_examples=50, deadline=None)
@given(
    pairs=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=40),
    weights=st.sampled_from(WEIGHTS),
)
def test_cohen_is_symmetric_and_ignores_unit_order(pairs, weights):
    r1, r2 = np.array(pairs).T
    kappa = cohen_kappa(r1, r2, weights)
    assert cohen_kappa(r2, r1, weights) == pytest.approx(kappa, abs=1e-12, nan_ok=True)
    assert cohen_kappa(r1[::-1], r2[::-1], weights) == pytest.approx(kappa, abs=1e-12, nan_ok=True)
    assert kappa == pytest.approx(sklearn_kappa(r1, r2, weights=weights), abs=1e-12, nan_ok=True)


@pytest.mark.parametrize("weights", WEIGHTS)
def test_pairwise_cohen_kappa(weights):
    rng = np.random.default_rng(8)
    data = rng.integers(1, 6, size=(5, 30)).astype(float)
    data[rng.random(data.shape) < 0.3] = NAN
    data[4, 1:] = NAN  # rater 4 shares at most one unit with anyone
    result = pairwise_cohen_kappa(data, weights)
    labels = np.unique(data[~np.isnan(data)])
    assert result.shape == (5, 5)
    np.testing.assert_array_equal(np.diag(result), 1.0)
    np.testing.assert_array_equal(result, result.T)
    assert np.isnan(result[4, :4]).all()
    for first in range(4):
        for second in range(first + 1, 4):
            both = ~np.isnan(data[first]) & ~np.isnan(data[second])
            expected = sklearn_kappa(
                data[first, both], data[second, both], weights=weights, labels=labels
            )
            assert result[first, second] == pytest.approx(expected, abs=1e-12)


# Fleiss ------------------------------------------------------------------------------------


def test_fleiss_1971_example():
    kappa = fleiss_kappa(raters_by_units(FLEISS_1971))
    assert round(kappa, 3) == 0.430
    assert kappa == pytest.approx(statsmodels_fleiss_kappa(np.array(FLEISS_1971)), abs=1e-12)


def test_fleiss_matches_statsmodels_on_random_complete_data():
    rng = np.random.default_rng(13)
    for _ in range(200):
        raters, units = rng.integers(2, 10), rng.integers(1, 50)
        data = rng.integers(0, rng.integers(2, 6), size=(raters, units))
        table, _ = aggregate_raters(data.T)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = statsmodels_fleiss_kappa(table)
        assert fleiss_kappa(data) == pytest.approx(expected, abs=1e-12, nan_ok=True)


def test_fleiss_allows_different_raters_per_unit():
    # Three ratings per unit, from different raters: the same as the packed table.
    spread = [[1, NAN, 2, 3], [1, 2, NAN, 3], [NAN, 2, 2, 1], [2, 1, 2, NAN]]
    packed = [[1, 2, 2, 3], [1, 2, 2, 3], [2, 1, 2, 1]]
    assert fleiss_kappa(spread) == pytest.approx(fleiss_kappa(packed), abs=1e-15)
    # A unit nobody rated is ignored.
    assert fleiss_kappa(np.hstack([packed, np.full((3, 1), NAN)])) == fleiss_kappa(packed)


def test_fleiss_rejects_unequal_numbers_of_ratings():
    with pytest.raises(ValueError, match="same number of ratings.*between 2 and 3"):
        fleiss_kappa([[1, 2, 1], [1, 2, NAN], [2, 2, 1]])
    with pytest.raises(ValueError, match="at least two ratings"):
        fleiss_kappa([[1, 2, 1]])


def test_fleiss_with_chance_agreement_close_to_one():
    data = np.ones((2, 100))
    data[0, 0] = 2
    expected = statsmodels_fleiss_kappa(aggregate_raters(data.T)[0])
    assert fleiss_kappa(data) == pytest.approx(expected, abs=1e-12)


def test_fleiss_undefined_is_nan():
    assert np.isnan(fleiss_kappa([[3, 3], [3, 3]]))
    assert np.isnan(fleiss_kappa(np.full((2, 3), NAN)))


# Percent agreement -------------------------------------------------------------------------


def test_percent_agreement_pools_pairs_over_units():
    data = [[1, 2, NAN, 3, 5], [1, 2, 3, NAN, NAN], [2, 2, 3, 1, NAN]]
    # Units: (1,1,2) 2 of 6 ordered pairs agree, (2,2,2) 6/6, (3,3) 2/2, (3,1) 0/2; the
    # last unit has one rating and drops out.
    assert percent_agreement(data) == pytest.approx(10 / 16)
    assert np.isnan(percent_agreement([[1, NAN], [NAN, 2]]))


def test_percent_agreement_is_fleiss_observed_agreement_on_complete_data():
    table = np.array(FLEISS_1971)
    observed = ((table * (table - 1)).sum(axis=1) / (6 * 5)).mean()
    assert percent_agreement(raters_by_units(FLEISS_1971)) == pytest.approx(observed, abs=1e-15)


# The full set of categories and value distances --------------------------------------------


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_an_unused_interior_category_still_counts_in_the_weights(weights):
    # A 1-5 scale on which nobody used 3: the categories that occur would shrink the gaps.
    r1 = [1, 2, 4, 5, 5, 1, 2, 4, 4, 2]
    r2 = [1, 2, 5, 5, 4, 2, 1, 4, 5, 2]
    scale = [1, 2, 3, 4, 5]
    full = cohen_kappa(r1, r2, weights, categories=scale)
    assert full == pytest.approx(sklearn_kappa(r1, r2, weights=weights, labels=scale), abs=1e-12)
    assert full != pytest.approx(cohen_kappa(r1, r2, weights), abs=1e-3)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_categories_make_kappa_independent_of_the_values_that_occur(weights):
    rng = np.random.default_rng(21)
    scale = [0, 2, 4, 5]
    for _ in range(20):
        used = rng.choice(scale, size=rng.integers(2, 5), replace=False)
        r1, r2 = rng.choice(used, size=15), rng.choice(used, size=15)
        expected = sklearn_kappa(r1, r2, weights=weights, labels=scale)
        assert cohen_kappa(r1, r2, weights, categories=scale) == pytest.approx(
            expected, abs=1e-12, nan_ok=True
        )


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_value_distances_weigh_by_the_values(weights):
    # Band points 0, 2, 4, 5: the gap 4-5 is half the gap 0-2, unlike their positions.
    r1 = np.array([0, 2, 4, 5, 5, 0, 2, 4, 4, 2, 5, 0])
    r2 = np.array([0, 4, 5, 4, 5, 2, 2, 5, 4, 0, 2, 0])
    scale = np.array([0, 2, 4, 5])
    power = 1 if weights == "linear" else 2
    w = np.abs(scale[:, None] - scale[None, :]) ** power
    table = np.zeros((4, 4))
    for a, b in zip(np.searchsorted(scale, r1), np.searchsorted(scale, r2), strict=True):
        table[a, b] += 1
    chance = np.outer(table.sum(1), table.sum(0)) / table.sum()
    expected = 1 - (w * table).sum() / (w * chance).sum()
    by_value = cohen_kappa(r1, r2, weights, categories=scale, distance="value")
    assert by_value == pytest.approx(expected, abs=1e-12)
    assert by_value != pytest.approx(cohen_kappa(r1, r2, weights, categories=scale), abs=1e-3)
    # Positions of 0, 1, 2, 3 are the values of an evenly spaced scale: the two agree.
    even = np.searchsorted(scale, r1), np.searchsorted(scale, r2)
    assert cohen_kappa(*even, weights, categories=[0, 1, 2, 3], distance="value") == (
        pytest.approx(cohen_kappa(r1, r2, weights, categories=scale), abs=1e-12)
    )


def test_value_distances_follow_a_falling_list_of_categories():
    r1, r2 = [5, 4, 2, 0, 4, 2], [4, 4, 0, 0, 5, 2]
    rising = cohen_kappa(r1, r2, "linear", categories=[0, 2, 4, 5], distance="value")
    falling = cohen_kappa(r1, r2, "linear", categories=[5, 4, 2, 0], distance="value")
    assert rising == pytest.approx(falling, abs=1e-12)


def test_distance_must_be_known():
    with pytest.raises(ValueError, match="distance must be"):
        cohen_kappa([1, 2], [1, 2], "linear", distance="rank")
