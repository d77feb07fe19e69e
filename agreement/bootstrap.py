"""Bootstrap confidence interval for Krippendorff's alpha, resampling units.

Each resample draws the pairable units with replacement, keeps all their ratings, and
recomputes alpha in full (observed and expected disagreement both re-estimated). A resample
is a row of counts (how often each unit was drawn), so `AlphaTerms.alphas` evaluates a chunk
of resamples with matrix products instead of a Python loop. See docs/statistics.md.
"""

from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.special import ndtr, ndtri

from agreement.krippendorff import BLOCK, AlphaTerms, Level, alpha_terms
from agreement.ratings import RatingData

Method = Literal["percentile", "bca"]


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
    thresholds: tuple[float, ...] = (0.667, 0.70, 0.80),
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

    terms = alpha_terms(data, level)
    estimate = float(terms.alphas(np.ones((1, terms.n_units)))[0])
    alphas = bootstrap_alphas(terms, n_resamples, seed)
    valid = alphas[~np.isnan(alphas)]

    low = high = float("nan")
    if valid.size:
        if method == "bca":
            levels = _bca_levels(terms, estimate, valid, confidence)
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


def bootstrap_alphas(terms: AlphaTerms, n_resamples: int, seed: int) -> np.ndarray:
    """Alpha of each resample, NaN where undefined.

    Resample r draws the units `np.random.default_rng(seed).integers(0, U, (n_resamples, U))[r]`
    (U pairable units): drawn chunk by chunk, which gives the same numbers as one call.
    """
    alphas = np.full(n_resamples, np.nan)
    units = terms.n_units
    if units == 0:
        return alphas
    rng = np.random.default_rng(seed)
    step = max(1, BLOCK // terms.width)
    for start in range(0, n_resamples, step):
        drawn = rng.integers(0, units, size=(min(step, n_resamples - start), units))
        alphas[start : start + len(drawn)] = terms.alphas(unit_counts(drawn, units))
    return alphas


def unit_counts(drawn: np.ndarray, n_units: int) -> np.ndarray:
    """Resamples x units: how often each unit appears in each row of drawn unit indices."""
    offsets = np.arange(len(drawn))[:, None] * n_units
    flat = np.bincount((drawn + offsets).ravel(), minlength=len(drawn) * n_units)
    return flat.reshape(len(drawn), n_units).astype(np.float64)


def _bca_levels(
    terms: AlphaTerms, estimate: float, valid: np.ndarray, confidence: float
) -> np.ndarray:
    """Quantile levels of the BCa interval (Efron & Tibshirani 1993, chapter 14)."""
    # Bias correction: ties with the estimate count half, as in scipy.stats.bootstrap.
    share = (np.count_nonzero(valid < estimate) + np.count_nonzero(valid <= estimate)) / (
        2.0 * valid.size
    )
    if share in (0.0, 1.0):
        return np.full(2, np.nan)  # every resample on one side: no bias correction exists
    bias = ndtri(share)
    # Acceleration from the jackknife: alpha with each unit left out in turn.
    units = terms.n_units
    jackknife = np.empty(units)
    step = max(1, BLOCK // terms.width)
    for start in range(0, units, step):
        left_out = np.arange(start, min(units, start + step))
        counts = np.ones((left_out.size, units))
        counts[np.arange(left_out.size), left_out] = 0.0
        jackknife[left_out] = terms.alphas(counts)
    jackknife = jackknife[~np.isnan(jackknife)]
    spread = jackknife.mean() - jackknife if jackknife.size > 1 else np.zeros(1)
    scale = (spread * spread).sum() ** 1.5
    # No spread in the jackknife gives no information on skewness: no acceleration.
    acceleration = (spread**3).sum() / (6.0 * scale) if scale > 0 else 0.0
    z = ndtri(np.array([(1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0]))
    with np.errstate(invalid="ignore"):
        return ndtr(bias + (bias + z) / (1.0 - acceleration * (bias + z)))
