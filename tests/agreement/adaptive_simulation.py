"""Seeded simulation of the adaptive design (k_min to k_max raters per case) against k_max
raters on every case, for the slow test and the benchmark (no Django).

Each simulated case has a true preference (A or B) and a difficulty: the chance that a
rater prefers the right response, drawn per case from a mix of easy, medium and hard cases;
a rater says "tie" with a small fixed chance instead. Every case gets k_max ratings drawn
once; the adaptive design reads the first k_min and one more while they disagree, by the
app's own rule (``aggregation.ratings_disagree`` of a preference under the majority), so the
two designs are compared on the same raters' answers. A case's label is the raters'
majority (``aggregation.preference_majority``); it agrees with the truth when it names the
right response (a balanced verdict does not).
"""

from dataclasses import dataclass

import numpy as np

from agreement.analysis.aggregation import preference_majority, ratings_disagree
from agreement.analysis.roles import MAJORITY

# (name, share of cases, lowest and highest chance that a rater prefers the right response)
MIX = (("easy", 0.5, 0.85, 0.97), ("medium", 0.35, 0.65, 0.85), ("hard", 0.15, 0.5, 0.65))
# The chance that a rater answers "tie" (whatever the case).
TIE = 0.05


@dataclass(frozen=True)
class AdaptiveOutcome:
    n_cases: int
    k_min: int
    k_max: int
    # Per design ("adaptive", "k_max", "k_min"): cases whose label is the truth, ratings used.
    correct: dict[str, int]
    ratings: dict[str, int]
    extended: int  # cases that got more than k_min raters
    # Per difficulty: (cases, correct adaptive, correct with k_max, ratings adaptive).
    by_difficulty: dict[str, tuple[int, int, int, int]]


def simulated_ratings(
    *, n_cases: int, k_max: int, seed: int, mix=MIX, tie: float = TIE
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(truth per case (+1 or -1), ratings k_max x cases (-1, 0, +1), the chance of a
    right answer per case, the difficulty's index per case)."""
    rng = np.random.default_rng(seed)
    shares = np.array([share for _, share, _, _ in mix])
    kind = rng.choice(len(mix), size=n_cases, p=shares / shares.sum())
    low = np.array([lo for _, _, lo, _ in mix])[kind]
    high = np.array([hi for _, _, _, hi in mix])[kind]
    right = rng.uniform(low, high)
    truth = rng.choice([-1.0, 1.0], size=n_cases)
    draws = rng.random((k_max, n_cases))
    # A tie with chance ``tie``; otherwise the right side with chance ``right``.
    answers = np.where(draws < (1 - tie) * right, truth, -truth)
    answers[draws >= 1 - tie] = 0.0
    return truth, answers, right, kind


def adaptive_counts(ratings: np.ndarray, *, k_min: int, k_max: int) -> np.ndarray:
    """How many of each case's ratings (raters x cases) the adaptive design reads."""
    n_cases = ratings.shape[1]
    counts = np.full(n_cases, k_min)
    going = np.arange(n_cases)
    for n in range(k_min, k_max):
        disagree = ratings_disagree(ratings[:n, going], rule=MAJORITY, sides=True)
        going = going[disagree]
        counts[going] = n + 1
    return counts


def simulate(*, n_cases: int, k_min: int, k_max: int, seed: int, mix=MIX) -> AdaptiveOutcome:
    truth, ratings, _, kind = simulated_ratings(n_cases=n_cases, k_max=k_max, seed=seed, mix=mix)
    counts = adaptive_counts(ratings, k_min=k_min, k_max=k_max)
    read = np.arange(k_max)[:, None] < counts[None, :]
    labels = {
        "adaptive": preference_majority(np.where(read, ratings, np.nan)),
        "k_max": preference_majority(ratings),
        "k_min": preference_majority(ratings[:k_min]),
    }
    right = {design: label == truth for design, label in labels.items()}
    by_difficulty = {}
    for index, (name, _, _, _) in enumerate(mix):
        where = kind == index
        by_difficulty[name] = (
            int(where.sum()),
            int(right["adaptive"][where].sum()),
            int(right["k_max"][where].sum()),
            int(counts[where].sum()),
        )
    return AdaptiveOutcome(
        n_cases=n_cases,
        k_min=k_min,
        k_max=k_max,
        correct={design: int(flags.sum()) for design, flags in right.items()},
        ratings={
            "adaptive": int(counts.sum()),
            "k_max": k_max * n_cases,
            "k_min": k_min * n_cases,
        },
        extended=int((counts > k_min).sum()),
        by_difficulty=by_difficulty,
    )
