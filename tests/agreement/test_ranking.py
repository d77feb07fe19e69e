"""Win matrix and Bradley-Terry ranking, against a direct maximum-likelihood fit (scipy)."""

import numpy as np
import pytest
import scipy.optimize

from agreement.stats.ranking import bradley_terry, win_matrix


def arena(seed, strengths=(1.2, 0.4, 0.0, -0.5, -1.1), comparisons=400, tie_rate=0.1):
    """Random pairings of systems with verdicts drawn from a Bradley-Terry model."""
    rng = np.random.default_rng(seed)
    n = len(strengths)
    first = rng.integers(0, n, size=comparisons)
    second = (first + rng.integers(1, n, size=comparisons)) % n
    gap = np.asarray(strengths)[first] - np.asarray(strengths)[second]
    outcome = (rng.random(comparisons) < 1.0 / (1.0 + np.exp(-gap))).astype(float)
    outcome[rng.random(comparisons) < tie_rate] = 0.5
    return first, second, outcome, n


def likelihood_fit(first, second, outcome, n, prior=0.0):
    """Maximise the Bradley-Terry log-likelihood directly (a tie = half a win each way)."""
    scored = np.zeros((n, n))
    np.add.at(scored, (first, second), outcome)
    np.add.at(scored, (second, first), 1.0 - outcome)
    scored += 0.5 * prior * (1.0 - np.eye(n))

    def negative_log_likelihood(free):
        theta = np.append(free, 0.0)
        gap = theta[:, None] - theta[None, :]
        return float((scored * np.logaddexp(0.0, -gap)).sum())

    fit = scipy.optimize.minimize(
        negative_log_likelihood, np.zeros(n - 1), method="BFGS", options={"gtol": 1e-10}
    )
    theta = np.append(fit.x, 0.0)
    return theta - theta.mean()


def test_win_matrix_counts_wins_each_way_and_ties_apart():
    # 0 beats 1 twice, 1 beats 0 once, 0 and 2 tie, 2 beats 1 (listed as second).
    matrix = win_matrix([0, 1, 0, 0, 1], [1, 0, 1, 2, 2], [1, 1, 1, 0.5, 0], 3)
    assert matrix.wins.tolist() == [[0, 2, 0], [1, 0, 0], [0, 1, 0]]
    assert matrix.ties.tolist() == [[0, 0, 1], [0, 0, 0], [1, 0, 0]]
    assert matrix.comparisons.tolist() == [[0, 3, 1], [3, 0, 1], [1, 1, 0]]
    rates = matrix.win_rates
    assert rates[0, 1] == pytest.approx(2 / 3)
    assert rates[0, 2] == pytest.approx(0.5)
    assert rates[2, 1] == pytest.approx(1.0)
    assert np.isnan(rates[0, 0])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_scores_equal_the_maximum_likelihood_fit(seed):
    first, second, outcome, n = arena(seed)
    ranking = bradley_terry(first, second, outcome, n, n_resamples=0)
    expected = likelihood_fit(first, second, outcome, n)
    np.testing.assert_allclose(ranking.scores, expected, atol=1e-6)
    assert ranking.scores.sum() == pytest.approx(0.0, abs=1e-12)
    assert ranking.order.tolist() == np.argsort(-expected).tolist()


def test_prior_equals_the_fit_with_added_ties_and_makes_an_unbeaten_system_rankable():
    # System 0 wins everything: no finite maximum-likelihood strength without a prior.
    first, second, outcome = [0, 0, 1, 2, 1], [1, 2, 2, 1, 0], [1, 1, 1, 1, 0]
    with pytest.raises(ValueError, match="cannot rank every system"):
        bradley_terry(first, second, outcome, 3, n_resamples=0)
    ranking = bradley_terry(first, second, outcome, 3, prior=1.0, n_resamples=0)
    expected = likelihood_fit(np.array(first), np.array(second), np.array(outcome), 3, 1.0)
    np.testing.assert_allclose(ranking.scores, expected, atol=1e-6)
    assert ranking.order[0] == 0


def test_probability_follows_the_scores():
    first, second, outcome, n = arena(4)
    ranking = bradley_terry(first, second, outcome, n, n_resamples=0)
    gap = ranking.scores[0] - ranking.scores[3]
    assert ranking.probability(0, 3) == pytest.approx(1 / (1 + np.exp(-gap)))
    assert ranking.probability(0, 3) + ranking.probability(3, 0) == pytest.approx(1.0)


def test_a_system_that_never_met_the_others_is_refused():
    with pytest.raises(ValueError, match="cannot rank"):
        bradley_terry([0, 1], [1, 0], [1, 1], 3, n_resamples=0)


def test_bootstrap_is_reproducible_and_brackets_the_estimate():
    first, second, outcome, n = arena(5)
    items = np.arange(first.size) // 2  # two verdicts per item, drawn together
    one = bradley_terry(first, second, outcome, n, items=items, n_resamples=300, seed=7)
    two = bradley_terry(first, second, outcome, n, items=items, n_resamples=300, seed=7)
    other = bradley_terry(first, second, outcome, n, items=items, n_resamples=300, seed=8)
    np.testing.assert_array_equal(one.low, two.low)
    np.testing.assert_array_equal(one.high, two.high)
    assert not np.array_equal(one.low, other.low)
    assert (one.low < one.scores).all() and (one.scores < one.high).all()
    assert (one.rank_low <= one.rank_high).all()
    assert one.rank_low.min() == 1 and one.rank_high.max() <= n
    assert one.n_degenerate == 0


def test_bootstrap_resamples_items_not_comparisons():
    # Item 0 holds every comparison: each resample is that item drawn once, so no spread.
    first, second, outcome, n = arena(6, comparisons=60)
    ranking = bradley_terry(
        first, second, outcome, n, items=np.zeros(first.size), n_resamples=50, seed=1
    )
    np.testing.assert_allclose(ranking.low, ranking.scores, atol=1e-8)
    np.testing.assert_allclose(ranking.high, ranking.scores, atol=1e-8)


def test_resample_that_cannot_rank_every_system_is_counted_as_degenerate():
    # Two items: one where 0 beats 1, one where 1 beats 0. A resample drawing one item twice
    # cannot be fitted.
    ranking = bradley_terry([0, 0], [1, 1], [1, 0], 2, items=["x", "y"], n_resamples=200)
    assert ranking.scores.tolist() == [0.0, 0.0]
    assert 0 < ranking.n_degenerate < 200
    assert ranking.low[0] == pytest.approx(0.0) and ranking.high[0] == pytest.approx(0.0)


def test_ties_count_half_a_win_for_each_side():
    ranking = bradley_terry([0, 0, 1], [1, 1, 0], [0.5, 1, 1], 2, n_resamples=0)
    # 0 scored 1.5 of 3 against 1, so equal strength.
    np.testing.assert_allclose(ranking.scores, [0.0, 0.0], atol=1e-9)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (([0], [0], [1], 2), "two different systems"),
        (([0], [2], [1], 2), "outside 0..1"),
        (([0.5], [1], [1], 2), "whole numbers"),
        (([0], [1], [2], 2), "outcome must be"),
        (([0, 1], [1], [1], 2), "same length"),
        (([0], [1], [1], 1), "n_systems"),
    ],
)
def test_bad_comparisons_are_refused(arguments, message):
    with pytest.raises(ValueError, match=message):
        win_matrix(*arguments)


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="prior"):
        bradley_terry([0, 1], [1, 0], [1, 1], 2, prior=-1)
    with pytest.raises(ValueError, match="confidence"):
        bradley_terry([0, 1], [1, 0], [1, 1], 2, confidence=1.0)
    with pytest.raises(ValueError, match="one item per comparison"):
        bradley_terry([0, 1], [1, 0], [1, 1], 2, items=[1])
