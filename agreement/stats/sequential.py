"""The anytime-valid monitor of a win rate: a beta-binomial mixture likelihood ratio against
p = 0.5, and the confidence sequence it defines.

After ``wins`` and ``losses`` non-tied comparisons, the mixture likelihood ratio against p is

    M(p) = B(wins + c, losses + c) / B(c, c) / (p^wins (1 - p)^losses)

with a symmetric Beta(c, c) mixing prior. Under p it is a nonnegative martingale with mean 1,
so by Ville's inequality it ever reaches 1 / alpha with probability at most alpha, however
often it is looked at (Robbins 1970; Howard et al. 2021). The monitor decides when
M(0.5) >= 1 / alpha; the confidence sequence is {p : M(p) < 1 / alpha}, an interval around
wins / n (log M is convex in p, smallest there) whose ends are found by bisection. The
prior being symmetric, M(0.5) is the same for (wins, losses) and (losses, wins): "decided"
says nothing about the direction.

Pure math and scipy, no Django; docs/statistics.md has the method and the choice of c.
"""

import math
from dataclasses import asdict, dataclass

# The protocol's example effect (5.2: a true win rate of 0.58).
DEFAULT_EFFECT = 0.08
MAX_COMPARISONS = 10_000_000
_BISECTIONS = 60  # halves [0, 1] below 1e-18


@dataclass(frozen=True)
class SequentialWinRate:
    """The monitor's state after ``n`` non-tied comparisons (see the module)."""

    n: int
    decided: bool  # the interval excludes 0.5: M(0.5) >= threshold
    low: float  # the anytime-valid interval of the win rate
    high: float
    statistic: float  # M(0.5), the mixture likelihood ratio against 0.5
    threshold: float  # 1 / alpha
    alpha: float
    mixing: float  # c of the Beta(c, c) prior

    def as_dict(self) -> dict:
        return asdict(self)

    def within(self, margin: float) -> bool:
        """Whether the whole interval lies inside (0.5 - margin, 0.5 + margin): no difference
        larger than the margin (the futility side; symmetric, as the margin is)."""
        return self.n > 0 and 0.5 - margin < self.low and self.high < 0.5 + margin


def mixing_for_effect(effect: float) -> float:
    """c of the Beta(c, c) prior whose standard deviation equals the expected effect
    |p1 - 0.5|: Var = 1 / (4 (2c + 1)), so c = (1 / (4 effect^2) - 1) / 2. Tuned so, the
    mixture puts its weight where the plan expects the win rate, which makes the monitor
    quickest near that effect (e.g. 0.08 -> c = 19.03)."""
    if not (isinstance(effect, int | float) and 0 < effect < 0.5 and math.isfinite(effect)):
        raise ValueError("The expected effect |p1 - 0.5| lies strictly between 0 and 0.5.")
    return (1.0 / (4.0 * effect * effect) - 1.0) / 2.0


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _log_ratio(p: float, wins: int, losses: int, log_marginal: float) -> float:
    """log M(p); p at 0 or 1 with no observation against it counts as likelihood 1."""
    log_likelihood = 0.0
    if wins:
        log_likelihood += wins * math.log(p) if p > 0 else -math.inf
    if losses:
        log_likelihood += losses * math.log1p(-p) if p < 1 else -math.inf
    return log_marginal - log_likelihood


def _edge(inside: float, outside: float, inside_of) -> float:
    """Bisect between a point of the set and an end of [0, 1]: the set's edge."""
    if inside_of(outside):
        return outside
    for _ in range(_BISECTIONS):
        middle = (inside + outside) / 2
        if inside_of(middle):
            inside = middle
        else:
            outside = middle
    return inside


def sequential_win_rate(
    wins: int, losses: int, *, alpha: float = 0.05, expected_effect: float = DEFAULT_EFFECT
) -> SequentialWinRate:
    """The monitor after ``wins`` and ``losses`` non-tied comparisons, two-sided at
    ``alpha``: whether it decided, the anytime-valid interval of the win rate, and the
    statistic M(0.5) with its threshold 1 / alpha. Valid however often it is called: over
    every comparison of a study, it decides wrongly with probability at most ``alpha``."""
    for value, name in ((wins, "wins"), (losses, "losses")):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} is a whole number, 0 or more.")
    if wins + losses > MAX_COMPARISONS:
        raise ValueError(f"At most {MAX_COMPARISONS} comparisons.")
    if not (isinstance(alpha, int | float) and 0 < alpha < 1):
        raise ValueError("alpha lies strictly between 0 and 1.")
    c = mixing_for_effect(expected_effect)
    n = wins + losses
    log_marginal = _log_beta(wins + c, losses + c) - _log_beta(c, c)
    log_threshold = -math.log(alpha)

    def inside(p: float) -> bool:
        return _log_ratio(p, wins, losses, log_marginal) < log_threshold

    mode = wins / n if n else 0.5  # where M(p) is smallest (at most 1: always inside)
    log_statistic = _log_ratio(0.5, wins, losses, log_marginal)
    return SequentialWinRate(
        n=n,
        decided=log_statistic >= log_threshold,
        low=_edge(mode, 0.0, inside),
        high=_edge(mode, 1.0, inside),
        statistic=math.exp(min(log_statistic, 700.0)),
        threshold=1.0 / alpha,
        alpha=float(alpha),
        mixing=c,
    )
