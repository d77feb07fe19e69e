"""The adaptive design's simulation, smaller than the benchmark's: its figures agree with
exact enumeration of every rating sequence, and the design saves ratings against k_max on
every case at (nearly) the same accuracy of the majority labels."""

import itertools
import math

import numpy as np
import pytest

from agreement.analysis.aggregation import ratings_disagree
from agreement.analysis.roles import ADJUDICATED, MAJORITY, MEAN

from .adaptive_simulation import TIE, simulate


def exact(*, right: float, k_min: int, k_max: int, tie: float = TIE) -> dict:
    """Per design, the chance that the label is the truth and the ratings it reads, summed
    over every sequence of k_max answers (truth = +1), written apart from the simulation:
    a case goes on while its answers are not all the same, and its label is the sign of
    their sum."""
    chance = {1: (1 - tie) * right, 0: tie, -1: (1 - tie) * (1 - right)}
    out = {"adaptive": 0.0, "k_max": 0.0, "ratings": 0.0}
    for answers in itertools.product((1, 0, -1), repeat=k_max):
        p = math.prod(chance[a] for a in answers)
        n = k_min
        while n < k_max and len(set(answers[:n])) > 1:
            n += 1
        out["adaptive"] += p * (sum(answers[:n]) > 0)
        out["k_max"] += p * (sum(answers) > 0)
        out["ratings"] += p * n
    return out


@pytest.mark.slow
@pytest.mark.parametrize(("right", "k_min", "k_max"), [(0.9, 2, 5), (0.6, 2, 5), (0.8, 3, 5)])
def test_the_simulation_agrees_with_exact_enumeration(right, k_min, k_max):
    cases = 40_000
    outcome = simulate(
        n_cases=cases, k_min=k_min, k_max=k_max, seed=7, mix=(("one", 1.0, right, right),)
    )
    truth = exact(right=right, k_min=k_min, k_max=k_max)
    for design in ("adaptive", "k_max"):
        share = truth[design]
        error = math.sqrt(share * (1 - share) / cases)
        assert outcome.correct[design] / cases == pytest.approx(share, abs=4 * error)
    # Ratings per case lie between k_min and k_max: 4 standard errors of at most (k_max-k_min)/2.
    error = (k_max - k_min) / 2 / math.sqrt(cases)
    assert outcome.ratings["adaptive"] / cases == pytest.approx(truth["ratings"], abs=4 * error)


@pytest.mark.slow
def test_the_adaptive_design_saves_ratings_on_a_mix_of_easy_and_hard_cases():
    cases = 20_000
    wide = simulate(n_cases=cases, k_min=2, k_max=5, seed=11)
    narrow = simulate(n_cases=cases, k_min=3, k_max=5, seed=11)
    for outcome in (wide, narrow):
        assert outcome.ratings["adaptive"] < 0.85 * outcome.ratings["k_max"]
        assert 0 < outcome.extended < cases
        # Hard cases get more raters than easy ones.
        easy, _, _, easy_ratings = outcome.by_difficulty["easy"]
        hard, _, _, hard_ratings = outcome.by_difficulty["hard"]
        assert hard_ratings / hard > easy_ratings / easy
    # Starting from three raters, the labels are right as often as with five on every case
    # (the exact chances differ by under 0.001 at every accuracy, see ``exact``).
    assert abs(narrow.correct["adaptive"] - narrow.correct["k_max"]) <= 0.002 * cases
    # Starting from two, two raters who agree wrongly stop the case: the labels are right a
    # little less often than with five on every case, and far more often than with two.
    assert wide.correct["k_min"] < wide.correct["adaptive"] <= wide.correct["k_max"]


@pytest.mark.parametrize("right", [0.5, 0.55, 0.7, 0.8, 0.95, 0.99])
def test_the_exact_loss_of_starting_from_two_or_three_raters(right):
    """Against five raters on every case the loss is that of k_min agreeing raters all
    wrong whom the others would have outvoted: about a point from two raters (a gain on
    near-coin-flip cases, where a split goes on to five), under 0.0002 from three."""
    two = exact(right=right, k_min=2, k_max=5)
    three = exact(right=right, k_min=3, k_max=5)
    assert -0.01 < two["k_max"] - two["adaptive"] < 0.012
    assert 0 <= three["k_max"] - three["adaptive"] < 0.0002
    assert two["ratings"] < three["ratings"] < 5


def test_disagreement_by_each_rule_on_every_small_matrix():
    """``ratings_disagree`` on every unit of up to three ratings of -2..2 (or none), against
    the rule read plainly: a mean never; the majority when the values differ, and for a
    preference when the sides (sign) differ."""
    values = (math.nan, -2.0, -1.0, 0.0, 1.0, 2.0)
    units = list(itertools.product(values, repeat=3))
    matrix = np.array(units).T
    for rule in (MAJORITY, ADJUDICATED, MEAN):
        for sides in (False, True):
            found = ratings_disagree(matrix, rule=rule, sides=sides)
            for unit, flag in zip(units, found.tolist(), strict=True):
                given = [v for v in unit if not math.isnan(v)]
                seen = {math.copysign(1, v) if v else 0 for v in given} if sides else set(given)
                expected = len(seen) > 1 and (rule != MEAN or sides)
                assert flag == expected, (rule, sides, unit)
