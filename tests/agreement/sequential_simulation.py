"""Seeded simulation of the anytime-valid monitor (``agreement.stats.sequential``): studies
of non-tied comparisons, each monitored after every comparison. Shared by the slow test
and ``benchmarks/sequential_simulation.py``."""

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from agreement.stats.sequential import DEFAULT_EFFECT, mixing_for_effect


@dataclass(frozen=True)
class Monitored:
    """What ``studies`` simulated studies gave under a true win rate ``p``."""

    studies: int
    horizon: int  # comparisons per study at most (the cap)
    p: float
    decided: int  # studies the monitor decided in (at any look up to the cap)
    stopped_at: np.ndarray  # per study: the comparisons it stopped at (the cap if never)
    fixed_rejected: int  # studies the fixed-sample exact test at the cap rejects

    @property
    def rate(self) -> float:
        return self.decided / self.studies

    def mc_error(self, rate: float | None = None) -> float:
        """The Monte-Carlo standard error of a rejection rate over these studies."""
        rate = self.rate if rate is None else rate
        return math.sqrt(rate * (1 - rate) / self.studies)


def _log_statistic_table(horizon: int, c: float) -> np.ndarray:
    """log M(0.5) for every (wins, losses) with wins + losses <= horizon, [wins, losses]."""
    from scipy.special import betaln

    wins = np.arange(horizon + 1)[:, None]
    losses = np.arange(horizon + 1)[None, :]
    return betaln(wins + c, losses + c) - betaln(c, c) + (wins + losses) * math.log(2.0)


def fixed_sample_rejects(wins: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """Whether the two-sided exact binomial test against 0.5 at ``n`` rejects (central:
    the test is symmetric at 0.5, so its p-value is twice the smaller tail)."""
    tail = np.minimum(stats.binom.cdf(wins, n, 0.5), stats.binom.sf(wins - 1, n, 0.5))
    return np.minimum(1.0, 2 * tail) <= alpha


def simulate_monitor(
    *,
    studies: int,
    horizon: int,
    p: float,
    seed: int,
    alpha: float = 0.05,
    effect: float = DEFAULT_EFFECT,
) -> Monitored:
    """``studies`` seeded studies of ``horizon`` comparisons won with probability ``p``,
    the monitor looked at after every comparison."""
    rng = np.random.default_rng(seed)
    table = _log_statistic_table(horizon, mixing_for_effect(effect))
    log_threshold = -math.log(alpha)
    stopped_at = np.full(studies, horizon)
    decided = np.zeros(studies, dtype=bool)
    wins_at_cap = np.zeros(studies, dtype=int)
    block = max(1, 4_000_000 // horizon)  # bound the memory of the draws
    for start in range(0, studies, block):
        outcomes = rng.random((min(block, studies - start), horizon)) < p
        wins = np.cumsum(outcomes, axis=1)
        n = np.arange(1, horizon + 1)[None, :]
        crossed = table[wins, n - wins] >= log_threshold
        any_crossed = crossed.any(axis=1)
        first = np.where(any_crossed, crossed.argmax(axis=1) + 1, horizon)
        stopped_at[start : start + len(first)] = first
        decided[start : start + len(first)] = any_crossed
        wins_at_cap[start : start + len(first)] = wins[:, -1]
    return Monitored(
        studies=studies,
        horizon=horizon,
        p=p,
        decided=int(decided.sum()),
        stopped_at=stopped_at,
        fixed_rejected=int(fixed_sample_rejects(wins_at_cap, horizon, alpha).sum()),
    )


def fixed_sample_power(*, n: int, p: float, alpha: float = 0.05) -> float:
    """The exact power of the fixed-sample test at ``n`` comparisons under ``p``."""
    wins = np.arange(n + 1)
    return float(stats.binom.pmf(wins, n, p)[fixed_sample_rejects(wins, n, alpha)].sum())
