"""Bootstrap confidence interval for Krippendorff's alpha, resampling units.

Each resample draws the pairable units with replacement, keeps all their ratings, and
recomputes alpha in full (observed and expected disagreement both re-estimated). Alpha of a
resample depends only on how many units of each pattern (multiset of values) it drew
(`krippendorff.unit_patterns`), so a resample is a row of counts per pattern, drawn at once
from the multinomial distribution when patterns are few, and `AlphaTerms.alphas` evaluates
a chunk of resamples with matrix products instead of a Python loop. See docs/statistics.md.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np

from agreement.stats.krippendorff import (
    ALPHA_THRESHOLDS,
    BLOCK,
    Level,
    UnitPatterns,
    krippendorff_alpha,
    unit_patterns,
)
from agreement.stats.ratings import RatingData

Method = Literal["percentile", "bca"]

# Patterns are drawn from the multinomial when there are at most this share of the units:
# a multinomial row costs a binomial draw per pattern (about 100 ns), a row of unit draws a
# draw and a count per unit (about 20 ns each); the two cost the same near K = U / 4.
MULTINOMIAL_SHARE = 0.2


@dataclass(frozen=True)
class AlphaBootstrap:
    """Alpha with its bootstrap interval; `below` maps a threshold to P(alpha* < threshold)."""

    alpha: float
    low: float
    high: float
    n_resamples: int
    n_degenerate: int
    below: dict[float, float]
    method: str
    confidence: float
    seed: int


def alpha_bootstrap(
    data: RatingData,
    level: Level = "interval",
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    thresholds: tuple[float, ...] = ALPHA_THRESHOLDS,
    method: Method = "percentile",
) -> AlphaBootstrap:
    """Bootstrap Krippendorff's alpha over units; reproducible for a given seed.

    method: "percentile" or "bca" (bias-corrected and accelerated, Efron & Tibshirani 1993).
    Resamples without variation have no alpha: they are left out of the interval and of
    `below`, and counted in `n_degenerate`. With no defined resample (or no pairable unit),
    low, high and the shares in `below` are NaN; so are low and high for BCa when every
    resample lies on one side of the estimate.
    """
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer):
        raise ValueError("n_resamples must be a whole number")
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be between 0 and 1, e.g. 0.95")
    if method not in ("percentile", "bca"):
        raise ValueError(f"method must be 'percentile' or 'bca'; got {method!r}")

    patterns = unit_patterns(data, level)
    estimate = krippendorff_alpha(data, level)
    alphas = bootstrap_alphas(patterns, n_resamples, seed, estimate)
    valid = alphas[~np.isnan(alphas)]

    low = high = float("nan")
    if valid.size:
        if method == "bca":
            levels = _bca_levels(patterns, estimate, valid, confidence)
        else:
            levels = np.array([(1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0])
        if np.isfinite(levels).all():
            low, high = (float(bound) for bound in np.quantile(valid, levels))
    below = {
        float(threshold): float(np.mean(valid < threshold)) if valid.size else float("nan")
        for threshold in thresholds
    }
    return AlphaBootstrap(
        alpha=estimate,
        low=low,
        high=high,
        n_resamples=n_resamples,
        n_degenerate=int(n_resamples - valid.size),
        below=below,
        method=method,
        confidence=confidence,
        seed=seed,
    )


def alpha_interval(
    data: RatingData,
    level: Level = "interval",
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    method: Method = "percentile",
) -> tuple[float, float]:
    """(low, high) bootstrap confidence interval of alpha; see `alpha_bootstrap`."""
    result = alpha_bootstrap(
        data, level, n_resamples=n_resamples, confidence=confidence, seed=seed, method=method
    )
    return result.low, result.high


def bootstrap_alphas(
    patterns: UnitPatterns, n_resamples: int, seed: int, estimate: float | None = None
) -> np.ndarray:
    """Alpha of each resample, NaN where undefined; see `pattern_draws` for the draws.

    A resample that drew every pattern as often as the data holds it is the data again:
    given `estimate` (the data's alpha), it gets exactly that number, so that it ties with
    the estimate in the BCa bias correction instead of differing by rounding (with one
    pattern, every resample is the data).
    """
    alphas = np.full(n_resamples, np.nan)
    start = 0
    for counts in pattern_draws(patterns, n_resamples, seed):
        chunk = patterns.terms.alphas(counts)
        if estimate is not None:
            chunk[(counts == patterns.counts).all(axis=1)] = estimate
        alphas[start : start + len(counts)] = chunk
        start += len(counts)
    return alphas


def pattern_draws(patterns: UnitPatterns, n_resamples: int, seed: int) -> Iterator[np.ndarray]:
    """The resamples as chunks of rows of counts: how many units of each pattern were drawn.

    With U pairable units in K patterns, c_k units of pattern k, and
    rng = np.random.default_rng(seed): if K <= MULTINOMIAL_SHARE * U, resample r is row r of
    `rng.multinomial(U, c / U, size=n_resamples)`; else resample r draws the units
    `rng.integers(0, U, (n_resamples, U))[r]` (as scipy.stats.bootstrap would) and counts
    their patterns. Both are U draws of a unit, uniformly with replacement: the multinomial
    gives the numbers of draws that fall on each pattern's c_k units directly. Drawn chunk
    by chunk, which gives the same numbers as one call. Nothing when U = 0.
    """
    units = int(patterns.counts.sum())
    if units == 0:
        return
    rng = np.random.default_rng(seed)
    n_patterns = patterns.counts.size
    if n_patterns <= MULTINOMIAL_SHARE * units:
        shares = patterns.counts / units
        step = max(1, BLOCK // patterns.terms.width)
        for start in range(0, n_resamples, step):
            yield rng.multinomial(units, shares, size=min(step, n_resamples - start)).astype(
                np.float64
            )
    else:
        step = max(1, BLOCK // max(units, patterns.terms.width))
        for start in range(0, n_resamples, step):
            drawn = rng.integers(0, units, size=(min(step, n_resamples - start), units))
            yield row_counts(patterns.of_unit[drawn], n_patterns)


def row_counts(indices: np.ndarray, n_columns: int) -> np.ndarray:
    """Rows x columns: how often each column index appears in each row of `indices`."""
    offsets = np.arange(len(indices))[:, None] * n_columns
    flat = np.bincount((indices + offsets).ravel(), minlength=len(indices) * n_columns)
    return flat.reshape(len(indices), n_columns).astype(np.float64)


def _bca_levels(
    patterns: UnitPatterns, estimate: float, valid: np.ndarray, confidence: float
) -> np.ndarray:
    """Quantile levels of the BCa interval (Efron & Tibshirani 1993, chapter 14)."""
    from scipy.special import ndtr, ndtri

    # Bias correction: ties with the estimate count half, as in scipy.stats.bootstrap.
    share = (np.count_nonzero(valid < estimate) + np.count_nonzero(valid <= estimate)) / (
        2.0 * valid.size
    )
    if share in (0.0, 1.0):
        return np.full(2, np.nan)  # every resample on one side: no bias correction exists
    bias = ndtri(share)
    acceleration = _jackknife_acceleration(patterns)
    z = ndtri(np.array([(1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0]))
    with np.errstate(invalid="ignore"):
        return ndtr(bias + (bias + z) / (1.0 - acceleration * (bias + z)))


def _jackknife_acceleration(patterns: UnitPatterns) -> float:
    """a = sum d_i^3 / (6 (sum d_i^2)^1.5), d_i = mean - alpha with unit i left out.

    Leaving out any unit of pattern k gives the same alpha, so it is computed once per
    pattern and weighted by the pattern's c_k units in the mean and both sums: the same
    numbers as the unit-by-unit jackknife. Units whose jackknife alpha is undefined are
    left out.
    """
    terms, weights = patterns.terms, patterns.counts
    n_patterns = weights.size
    jackknife = np.empty(n_patterns)
    step = max(1, BLOCK // terms.width)
    for start in range(0, n_patterns, step):
        left_out = np.arange(start, min(n_patterns, start + step))
        counts = np.tile(weights, (left_out.size, 1))
        counts[np.arange(left_out.size), left_out] -= 1.0
        jackknife[left_out] = terms.alphas(counts)
    defined = ~np.isnan(jackknife)
    jackknife, weights = jackknife[defined], weights[defined]
    if weights.sum() <= 1:
        return 0.0  # one jackknife value: no spread
    spread = weights @ jackknife / weights.sum() - jackknife
    scale = (weights @ (spread * spread)) ** 1.5
    # No spread in the jackknife gives no information on skewness: no acceleration.
    return float(weights @ spread**3 / (6.0 * scale)) if scale > 0 else 0.0
