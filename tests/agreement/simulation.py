"""Seeded studies with a known effect, for the outcome tests and the simulation benchmark."""

import numpy as np

from agreement.analysis.agreement import DimensionData
from agreement.analysis.comparison_data import ComparisonData
from agreement.analysis.roles import DimensionRole


def simulated_study(
    *, n_cases: int, n_raters: int = 3, effect: float = 0.0, seed: int = 0, systems=("x", "y")
) -> ComparisonData:
    """Two systems; system y's quality exceeds x's by ``effect`` (in rater-noise units).

    Each case has a latent quality per system; raters score 1-5 (rounded, clipped) and
    state a preference -2..2 in system order (negative prefers x). The key puts x under A
    or B at random.
    """
    rng = np.random.default_rng(seed)
    quality = rng.normal(0, 1, (n_cases, 1)) + np.array([0.0, effect])[None, :]
    swap = rng.random(n_cases) < 0.5  # x shown under label B on these cases
    case_systems = np.where(swap[:, None], [[1, 0]], [[0, 1]])
    scores = np.full((n_raters, n_cases, 2), np.nan)
    preference = np.full((n_raters, n_cases), np.nan)
    for r in range(n_raters):
        noisy = quality + rng.normal(0, 1, quality.shape)
        by_system = np.clip(np.round(3 + noisy), 1, 5)
        gap = noisy[:, 1] - noisy[:, 0]
        preference[r] = np.select([gap < -1, gap < -0.2, gap <= 0.2, gap <= 1], [-2, -1, 0, 1], 2)
        # Scores by key label: label A holds case_systems[:, 0].
        scores[r] = np.take_along_axis(by_system, case_systems, axis=1)
    lengths = np.take_along_axis(
        rng.integers(200, 1200, (n_cases, 2)).astype(float), case_systems, axis=1
    )
    quality_dim = DimensionData(
        key="quality", name="Quality", level="ordinal", matrix=scores.reshape(n_raters, -1),
        categories=(1.0, 2.0, 3.0, 4.0, 5.0),
    )  # fmt: skip
    preference_dim = DimensionData(
        key="preference", name="Preference", level="ordinal", matrix=preference,
        categories=(-2.0, -1.0, 0.0, 1.0, 2.0), orientation="system",
    )  # fmt: skip
    return ComparisonData(
        systems=list(systems),
        labels=["A", "B"],
        strata=["s1" if i % 3 else "s2" for i in range(n_cases)],
        case_systems=case_systems,
        totals=scores.reshape(n_raters, -1),
        dimensions=[quality_dim, preference_dim],
        roles=[
            DimensionRole(key="quality", name="Quality", scored=True, max_points=5),
            DimensionRole(key="preference", name="Preference", preference=True),
        ],
        lengths=lengths,
        confidence=rng.integers(1, 4, (n_raters, n_cases)).astype(float),
    )
