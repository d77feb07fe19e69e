"""Gwet's AC1 (categories) and AC2 (weighted): chance-corrected agreement that resists the
kappa paradox, where kappa collapses while nearly every rating is the same category.

With n units (those with at least one rating), r_i ratings of unit i, r_ik of them in
category k, q categories, weights w_kl (1 on the diagonal) and r*_ik = sum_l w_kl r_il:

    p_a  = (1 / n') sum_{i: r_i >= 2} sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1))
    pi_k = (1 / n) sum_i r_ik / r_i
    p_e  = T_w / (q (q - 1)) * sum_k pi_k (1 - pi_k),   T_w = sum_{k,l} w_kl
    AC   = (p_a - p_e) / (1 - p_e)

n' counts the units with two ratings or more: a unit with a single rating has no pair to
agree on, so it stays out of p_a, but it still shows how the raters use the categories and
enters the pi_k (Gwet 2014, Handbook of Inter-Rater Reliability, 4th ed., chapters 2 and 3,
the coefficients for raw ratings with missing values; Gwet 2008, Br J Math Stat Psychol
61:29-48). With
identity weights T_w = q and this is AC1; linear or quadratic weights on the categories'
values give AC2 (Gwet 2014, chapter 3). The computation is vectorised: a units x categories
table of counts, no loop over units.
"""

from typing import Literal

import numpy as np
import numpy.typing as npt

from agreement.stats.ratings import RatingData, rating_matrix

GwetWeights = Literal["linear", "quadratic"] | None


def gwet_ac(
    data: RatingData,
    *,
    weights: GwetWeights = None,
    categories: npt.ArrayLike | None = None,
) -> float:
    """Gwet's AC1 (``weights=None``) or AC2 (``"linear"`` or ``"quadratic"``).

    data: raters x units, None or NaN = missing, as for ``krippendorff_alpha``. categories:
    every value of the scale (an unused one still counts in q and in the weights, which
    are 1 - |x_k - x_l| / (max - min), or its square form, on the values); without it, the
    distinct ratings. Units with no rating are ignored; a unit with one rating enters the
    chance term only. ValueError for unknown weights or a rating outside ``categories``.
    NaN when no unit has two ratings, or the scale has a single category (no chance term).
    """
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic'; got {weights!r}")
    ratings = rating_matrix(data)
    present = ~np.isnan(ratings)
    scale = _scale(ratings[present], categories)
    q = scale.size
    counts = _counts(ratings, present, scale)  # units x categories
    per_unit = counts.sum(axis=1)
    rated = per_unit > 0
    counts, per_unit = counts[rated], per_unit[rated]
    paired = per_unit >= 2
    if q < 2 or not paired.any():
        return float("nan")
    w = _weight_matrix(scale, weights)
    weighted = counts @ w  # r*_ik
    agreeing = (counts[paired] * (weighted[paired] - 1.0)).sum(axis=1)
    m = per_unit[paired]
    p_a = float((agreeing / (m * (m - 1.0))).mean())
    pi = (counts / per_unit[:, None]).mean(axis=0)
    p_e = float(w.sum() / (q * (q - 1.0)) * (pi * (1.0 - pi)).sum())
    if p_e >= 1.0:
        return float("nan")
    return (p_a - p_e) / (1.0 - p_e)


def _scale(values: np.ndarray, categories: npt.ArrayLike | None) -> np.ndarray:
    """The sorted categories: ``categories`` (checked), or the distinct ratings."""
    if categories is None:
        return np.unique(values)
    listed = rating_matrix([categories])[0]
    if np.isnan(listed).any() or np.unique(listed).size != listed.size:
        raise ValueError("categories must be distinct numbers")
    listed = np.sort(listed)
    if not np.isin(values, listed).all():
        raise ValueError("every rating must be one of the categories")
    return listed


def _counts(ratings: np.ndarray, present: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Units x categories: how many of each unit's ratings fall in each category."""
    n_units = ratings.shape[1]
    units = np.nonzero(present.T)[0]  # unit of each present rating, unit-major
    codes = np.searchsorted(scale, ratings.T[present.T])
    flat = np.bincount(units * scale.size + codes, minlength=n_units * scale.size)
    return flat.reshape(n_units, scale.size).astype(np.float64)


def _weight_matrix(scale: np.ndarray, weights: GwetWeights) -> np.ndarray:
    """Agreement weights: identity, or 1 - (|x_k - x_l| / (max - min))^p for p = 1, 2."""
    if weights is None:
        return np.eye(scale.size)
    gap = np.abs(scale[:, None] - scale[None, :]) / (scale[-1] - scale[0])
    return 1.0 - (gap if weights == "linear" else gap * gap)
