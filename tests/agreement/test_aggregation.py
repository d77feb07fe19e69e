"""Items labelled by the analysis plan's rule, the exact interval of a share, and the
comparison's use of both: worked by hand in each test, the arithmetic shown."""

import math

import numpy as np
import pytest
from scipy import optimize, stats

from agreement.analysis.aggregation import aggregate
from agreement.analysis.agreement import DimensionData
from agreement.analysis.comparison_data import ComparisonData
from agreement.analysis.outcomes import compare_systems
from agreement.analysis.roles import (
    ADJUDICATED,
    MAJORITY,
    MEAN,
    TOTAL_MEASURE,
    DimensionRole,
    dimension_measure,
)
from agreement.stats.estimates import exact_share

NAN = math.nan


# --- one label per item ----------------------------------------------------------------------

# Raters x units. Unit 0: 1, 1 and a missing rating; unit 1: 1, 2, 3; unit 2: 2, 2, missing.
RATINGS = np.array([[1, 1, 2], [1, 2, 2], [NAN, 3, NAN]], dtype=float)


def test_the_majority_is_the_value_given_most_and_a_tie_has_no_label():
    result = aggregate(RATINGS, rule=MAJORITY, min_ratings=2)
    # Unit 0: 1 twice -> 1. Unit 1: 1, 2 and 3 once each -> a tie. Unit 2: 2 twice -> 2.
    np.testing.assert_array_equal(result.labels, [1.0, NAN, 2.0])
    assert result.ties.tolist() == [False, True, False]
    assert result.excluded.tolist() == [False, False, False]


def test_the_mean_is_over_the_valid_ratings_and_never_a_tie():
    result = aggregate(RATINGS, rule=MEAN, min_ratings=2)
    # (1 + 1) / 2 = 1; (1 + 2 + 3) / 3 = 2; (2 + 2) / 2 = 2.
    np.testing.assert_allclose(result.labels, [1.0, 2.0, 2.0])
    assert not result.ties.any()


def test_items_under_the_minimum_are_excluded_under_every_rule():
    for rule in (MAJORITY, MEAN, ADJUDICATED):
        result = aggregate(RATINGS, rule=rule, min_ratings=3, adjudicated=[5.0, NAN, NAN])
        # Units 0 and 2 have 2 valid ratings each, unit 1 has 3: only unit 1 stays.
        assert result.excluded.tolist() == [True, False, True]
        assert result.n_ratings.tolist() == [2, 3, 2]
        assert np.isnan(result.labels[[0, 2]]).all()
        assert not result.adjudicated.any()  # an excluded item takes no adjudicated label


def test_adjudicated_else_majority_takes_the_resolved_answer_where_there_is_one():
    adjudicated = [NAN, 3.0, 1.0]
    result = aggregate(RATINGS, rule=ADJUDICATED, min_ratings=2, adjudicated=adjudicated)
    # Unit 0: no adjudication -> the majority 1. Unit 1: the tie resolved as 3. Unit 2: the
    # majority 2 overruled by 1.
    np.testing.assert_array_equal(result.labels, [1.0, 3.0, 1.0])
    assert result.adjudicated.tolist() == [False, True, True]
    assert result.changed.tolist() == [False, True, True]  # a resolved tie counts as changed
    assert not result.ties.any()
    # Under the majority the same answers are not used, but still counted as changes.
    majority = aggregate(RATINGS, rule=MAJORITY, min_ratings=2, adjudicated=adjudicated)
    np.testing.assert_array_equal(majority.labels, [1.0, NAN, 2.0])
    assert majority.changed.tolist() == [False, True, True]
    assert not majority.adjudicated.any()


def test_a_preference_majority_is_the_side_most_raters_chose_and_a_balance_is_a_tie_verdict():
    # Raters x cases on a -2..2 scale. Case 0: -2, -1, +1 -> two for the first side -> -1.
    # Case 1: +2, -1 -> balanced -> 0 (a tie verdict, counted by the win rates). Case 2: +1.
    sides = np.array([[-2, 2, 1], [-1, -1, NAN], [1, NAN, NAN]], dtype=float)
    result = aggregate(sides, rule=MAJORITY, min_ratings=1, sides=True)
    np.testing.assert_array_equal(result.labels, [-1.0, 0.0, 1.0])
    # The mean: (-2 - 1 + 1) / 3 < 0 -> -1; (2 - 1) / 2 > 0 -> +1; 1 -> +1.
    mean = aggregate(sides, rule=MEAN, min_ratings=1, sides=True)
    np.testing.assert_array_equal(mean.labels, [-1.0, 1.0, 1.0])
    # An adjudicated -2 on case 1 resolves the balance to the first side.
    resolved = aggregate(
        sides, rule=ADJUDICATED, min_ratings=1, sides=True, adjudicated=[NAN, -2, NAN]
    )
    np.testing.assert_array_equal(resolved.labels, [-1.0, -1.0, 1.0])
    assert resolved.changed.tolist() == [False, True, False]


def test_an_unknown_rule_is_refused():
    with pytest.raises(ValueError, match="No aggregation rule"):
        aggregate(RATINGS, rule="median", min_ratings=2)


# --- the exact interval of a share -------------------------------------------------------------


@pytest.mark.parametrize(("positive", "n"), [(0, 1), (0, 10), (1, 10), (3, 7), (10, 10), (41, 97)])
def test_the_exact_interval_solves_clopper_and_pearsons_tail_equations(positive, n):
    """Clopper & Pearson (1934): the lower bound p_L solves P(X >= k | p_L) = 0.025 and the
    upper p_U solves P(X <= k | p_U) = 0.025; solved here by root finding on the binomial
    tails, and checked against scipy's binomtest as a second oracle."""
    share = exact_share(positive, n)
    if positive == 0:
        assert share["low"] == 0.0
    else:
        low = optimize.brentq(lambda p: stats.binom.sf(positive - 1, n, p) - 0.025, 1e-12, 1)
        assert share["low"] == pytest.approx(low, abs=1e-9)
    if positive == n:
        assert share["high"] == 1.0
    else:
        high = optimize.brentq(lambda p: stats.binom.cdf(positive, n, p) - 0.025, 0, 1 - 1e-12)
        assert share["high"] == pytest.approx(high, abs=1e-9)
    scipy_interval = stats.binomtest(positive, n).proportion_ci(method="exact")
    assert share["low"] == pytest.approx(scipy_interval.low, abs=1e-9)
    assert share["high"] == pytest.approx(scipy_interval.high, abs=1e-9)
    assert share["share"] == positive / n


def test_the_exact_interval_of_none_of_ten_by_hand():
    # k = 0: P(X <= 0 | p) = (1 - p)^10 = 0.025, so p_U = 1 - 0.025^(1/10) = 0.30850.
    assert exact_share(0, 10)["high"] == pytest.approx(1 - 0.025 ** (1 / 10), abs=1e-12)
    # k = n: by symmetry p_L = 0.025^(1/10) = 0.69150.
    assert exact_share(10, 10)["low"] == pytest.approx(0.025 ** (1 / 10), abs=1e-12)


@pytest.mark.parametrize(
    ("positive", "n", "low", "high"),
    [
        (81, 263, 0.2527, 0.3676),
        (15, 148, 0.0578, 0.1617),
        (0, 20, 0.0000, 0.1684),
        (1, 29, 0.0009, 0.1776),
        (29, 29, 0.8806, 1.0000),
    ],
)
def test_the_exact_interval_matches_newcombes_published_table(positive, n, low, high):
    """Newcombe (1998), Statistics in Medicine 17:857-872, Table I: the Clopper-Pearson
    ("exact") intervals of his five examples, printed to four decimals."""
    share = exact_share(positive, n)
    assert round(share["low"], 4) == low and round(share["high"], 4) == high


def test_a_share_of_nothing_has_no_interval_and_a_bad_count_is_refused():
    assert exact_share(0, 0) == {"n": 0, "positive": 0, "share": None, "low": None, "high": None}
    with pytest.raises(ValueError):
        exact_share(3, 2)
    with pytest.raises(ValueError):
        exact_share(-1, 2)


# --- the comparison labels its items by the plan ------------------------------------------------

# Two systems x and y; four cases with labels A and B; case 1 holds y under A.
CASE_SYSTEMS = np.array([[0, 1], [1, 0], [0, 1], [0, 1]])
# Units, case-major: c0A c0B c1A c1B c2A c2B c3A c3B. Three raters.
HARM = np.array(
    [
        [1, 0, 1, 0, 1, 1, 0, 1],
        [1, 0, 1, 0, 0, 1, NAN, NAN],
        [0, 0, 1, NAN, NAN, 0, NAN, NAN],
    ],
    dtype=float,
)
# Categories 0 correct, 1 partly correct, 2 incorrect; case 3 unrated.
CORRECTNESS = np.array(
    [
        [1, 0, 2, 1, 0, 1, NAN, NAN],
        [1, 0, 2, 1, 1, 1, NAN, NAN],
        [0, 0, 1, 1, 2, NAN, NAN, NAN],
    ],
    dtype=float,
)
TOTALS = np.array(
    [
        [4, 2, 5, 1, 3, 3, 9, 0],
        [4, 2, 5, 1, 3, 3, NAN, NAN],
        [4, 2, 5, NAN, NAN, 3, NAN, NAN],
    ],
    dtype=float,
)


def comparison(**changes) -> ComparisonData:
    values = {
        "systems": ["x", "y"],
        "labels": ["A", "B"],
        "strata": [""] * 4,
        "case_systems": CASE_SYSTEMS,
        "totals": TOTALS,
        "dimensions": [
            DimensionData("harm", "Harm", "nominal", HARM, categories=(0.0, 1.0)),
            DimensionData("correct", "Correct", "nominal", CORRECTNESS, categories=(0.0, 1.0, 2.0)),
        ],
        "roles": [
            DimensionRole("harm", "Harm", binary=True),
            # Points: the totals below are the rubric's (0-9), so there is a score to compare.
            DimensionRole("correct", "Correct", apart=((1.0, "Partly correct"),), max_points=9),
        ],
        "lengths": np.full((4, 2), 100.0),
        "confidence": np.full((3, 4), 2.0),
        "min_ratings": 2,
    }
    return ComparisonData(**{**values, **changes})


def _question(result, measure):
    return next(q for q in result["aggregation"]["questions"] if q["measure"] == measure)


def test_a_yes_no_share_per_system_by_majority_with_ties_stated_and_short_items_excluded():
    result = compare_systems(comparison(), n_resamples=50)
    harm = result["mcnemar"][0]
    # Per response, the majority of "harmful" (1): c0A 1,1,0 -> 1 (x); c0B 0,0,0 -> 0 (y);
    # c1A 1,1,1 -> 1 (y); c1B 0,0 -> 0 (x); c2A 1,0 -> a tie (x); c2B 1,1,0 -> 1 (y);
    # case 3 has one rating per response: under the minimum of 2, excluded.
    # x: 1 positive of 2 labelled, 1 tie. y: 2 of 3.
    x, y = harm["systems"]
    assert (x["positive"], x["n"], x["ties"]) == (1, 2, 1)
    assert (y["positive"], y["n"], y["ties"]) == (2, 3, 0)
    assert x["low"] == pytest.approx(stats.binomtest(1, 2).proportion_ci(method="exact").low)
    assert y["high"] == pytest.approx(stats.binomtest(2, 3).proportion_ci(method="exact").high)
    # Paired: c0 (x 1, y 0) and c1 (x 0, y 1); c2 has no outcome for x. Exact McNemar on
    # 1 against 1 discordant pair: p = 1.
    (pair,) = harm["pairs"]
    assert (pair["n"], pair["first_only"], pair["second_only"], pair["p"]) == (2, 1, 1, 1.0)
    summary = _question(result, dimension_measure("harm"))
    # The default: the adjudicated answer, else the majority (none here: the majority).
    assert summary["rule"] == ADJUDICATED
    assert (summary["excluded_cases"], summary["tied_items"]) == (1, 1)
    assert result["aggregation"]["min_ratings"] == 2


def test_adjudicated_else_majority_uses_the_resolved_answers_and_counts_the_changes():
    adjudicated = np.full(8, NAN)
    adjudicated[0] = 0.0  # c0A: the majority said harmful; the adjudicator did not
    adjudicated[4] = 1.0  # c2A: the tie resolved as harmful
    data = comparison(rules={"harm": ADJUDICATED}, adjudicated={"harm": adjudicated})
    harm = compare_systems(data, n_resamples=50)["mcnemar"][0]
    # x: c0A 0, c1B 0, c2A 1 -> 1 of 3, no tie left. y unchanged: 2 of 3.
    x, y = harm["systems"]
    assert (x["positive"], x["n"], x["ties"]) == (1, 3, 0)
    assert (y["positive"], y["n"]) == (2, 3)
    # Paired: c0 (0, 0), c1 (0, 1), c2 (1, 1): one discordant pair, for y; p = 1.
    (pair,) = harm["pairs"]
    assert (pair["n"], pair["first_only"], pair["second_only"]) == (3, 0, 1)
    summary = _question(compare_systems(data, n_resamples=50), dimension_measure("harm"))
    assert summary["rule"] == ADJUDICATED
    assert (summary["adjudicated_items"], summary["changed_items"], summary["tied_items"]) == (
        2,
        2,
        0,
    )
    # Under the majority the answers are counted as changes but not used.
    plain = compare_systems(
        comparison(adjudicated={"harm": adjudicated}, rules={"harm": MAJORITY}), n_resamples=50
    )
    assert _question(plain, dimension_measure("harm"))["changed_items"] == 2
    assert plain["mcnemar"][0]["systems"][0]["positive"] == 1
    assert plain["mcnemar"][0]["systems"][0]["n"] == 2


def test_the_values_analysed_apart_have_their_own_share_per_system():
    result = compare_systems(comparison(), n_resamples=50)
    (apart,) = result["apart"]
    assert apart["values"] == ["Partly correct"]
    # Majority per response: c0A 1,1,0 -> 1 (x); c0B 0 (y); c1A 2,2,1 -> 2 (y);
    # c1B 1 (x); c2A 0,1,2 -> a tie (x); c2B 1,1 -> 1 (y); case 3 unrated: excluded.
    # x: partly correct 2 of 2 labelled; y: 1 of 3.
    x, y = apart["systems"]
    assert (x["positive"], x["n"]) == (2, 2)
    assert (y["positive"], y["n"]) == (1, 3)
    interval = stats.binomtest(1, 3).proportion_ci(method="exact")
    assert (y["low"], y["high"]) == (pytest.approx(interval.low), pytest.approx(interval.high))
    summary = _question(result, dimension_measure("correct"))
    assert (summary["excluded_cases"], summary["tied_items"]) == (1, 1)


def test_the_scores_stay_the_mean_and_a_case_under_the_minimum_leaves_every_estimate():
    result = compare_systems(comparison(), n_resamples=50)
    total = result["per_system"][0]
    # Case 3 has one rater's totals: excluded. x: c0A 4, c1B 1, c2A 3 -> mean 8/3;
    # y: c0B 2, c1A 5, c2B 3 -> mean 10/3.
    x, y = total["systems"]
    assert (x["n"], y["n"]) == (3, 3)
    assert x["mean"] == pytest.approx(8 / 3) and y["mean"] == pytest.approx(10 / 3)
    total = _question(result, TOTAL_MEASURE)
    assert total["excluded_cases"] == total["excluded_items"] == 1  # the old name, kept
    # With a minimum of 1 case 3 counts again: x gets 9 (c3A), y gets 0 (c3B).
    every = compare_systems(comparison(min_ratings=1), n_resamples=50)["per_system"][0]
    assert every["systems"][0]["mean"] == pytest.approx((8 + 9) / 4)
    assert every["systems"][1]["mean"] == pytest.approx(10 / 4)


def test_a_rule_that_does_not_fit_the_question_falls_back_to_its_default():
    result = compare_systems(comparison(rules={"harm": MEAN, "correct": "median"}), n_resamples=50)
    # A yes/no outcome has no mean and an unknown rule is none: both take the default.
    assert _question(result, dimension_measure("harm"))["rule"] == ADJUDICATED
    assert _question(result, dimension_measure("correct"))["rule"] == ADJUDICATED


def test_a_preference_question_counts_its_tie_verdicts_as_the_win_rates_do():
    from .simulation import simulated_study

    result = compare_systems(simulated_study(n_cases=40, effect=0.0, seed=3), n_resamples=50)
    preference = result["preferences"][0]
    summary = _question(result, dimension_measure(preference["key"]))
    ties = sum(pair["items"]["ties"] for pair in preference["pairs"])
    assert summary["rule"] == ADJUDICATED and ties > 0
    assert summary["tied_items"] == ties


def test_a_tie_in_a_case_under_the_minimum_counts_for_nothing():
    # Case 3: A (x) tied 0-1 with two ratings, B (y) rated once, under the minimum of 2, so
    # the case is left out of the question whole, and its tie with it (found by the
    # report-equals-export property test: the app counted it, the export's oracle did not).
    harm = HARM.copy()
    harm[1, 6] = 1
    result = compare_systems(comparison(dimensions=[
        DimensionData("harm", "Harm", "nominal", harm, categories=(0.0, 1.0)),
        comparison().dimensions[1],
    ]), n_resamples=50)  # fmt: skip
    x, y = result["mcnemar"][0]["systems"]
    assert (x["positive"], x["n"], x["ties"]) == (1, 2, 1)
    assert (y["positive"], y["n"], y["ties"]) == (2, 3, 0)
