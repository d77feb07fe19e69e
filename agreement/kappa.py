"""Agreement on categories: percent agreement, Cohen's kappa and Fleiss' kappa.

Ratings are numbers (categories coded as numbers), compared for exact equality.
"""

from typing import Literal

import numpy as np
import numpy.typing as npt

from agreement.ratings import RatingData, rating_matrix

Weights = Literal["linear", "quadratic"] | None


def percent_agreement(data: RatingData) -> float:
    """Share of agreeing pairs among all pairs of ratings of the same unit.

    data: raters x units, None or NaN = missing. Pooled over ordered pairs i != j within each
    unit, so a unit with m ratings weighs m (m - 1); units with fewer than two ratings drop out.
    NaN if no unit has two ratings.
    """
    table, _ = _unit_category_table(rating_matrix(data))
    m = table.sum(axis=1)
    pairs = (m * (m - 1.0)).sum()
    if pairs == 0:
        return float("nan")
    return float((table * (table - 1.0)).sum() / pairs)


def fleiss_kappa(data: RatingData) -> float:
    """Fleiss' (1971) kappa for nominal ratings, data raters x units (None or NaN = missing).

    Every unit must have the same number n >= 2 of ratings, though not necessarily from the
    same raters; units with no rating at all are ignored. Otherwise ValueError: use
    Krippendorff's alpha (nominal), which allows missing ratings. NaN when every rating is
    the same category (chance agreement 1), or when no unit is rated.
    """
    table, _ = _unit_category_table(rating_matrix(data))
    m = table.sum(axis=1)
    table = table[m > 0]
    m = m[m > 0]
    if not m.size:
        return float("nan")
    n = m[0]
    if (m != n).any():
        raise ValueError(
            "Fleiss' kappa needs the same number of ratings for every unit; these units have "
            f"between {int(m.min())} and {int(m.max())}. Krippendorff's alpha (nominal) "
            "handles missing ratings."
        )
    if n < 2:
        raise ValueError("Fleiss' kappa needs at least two ratings per unit")
    observed = ((table * (table - 1.0)).sum(axis=1) / (n * (n - 1.0))).mean()
    shares = table.sum(axis=0) / table.sum()
    chance = (shares * shares).sum()
    if chance >= 1.0:
        return float("nan")
    return float((observed - chance) / (1.0 - chance))


def cohen_kappa(
    r1: npt.ArrayLike,
    r2: npt.ArrayLike,
    weights: Weights = None,
    labels: npt.ArrayLike | None = None,
) -> float:
    """Cohen's kappa of two raters over the units both rated (None or NaN = missing).

    weights: None (Cohen 1960), "linear" or "quadratic" (Cohen 1968), on the positions of the
    categories in `labels`, as scikit-learn does. labels: the ordered categories; by default
    the distinct ratings, sorted. NaN if fewer than two units are shared, or if kappa is
    undefined (both raters used one and the same category).
    """
    pair = rating_matrix([np.asarray(r1, dtype=object), np.asarray(r2, dtype=object)])
    categories = _categories(pair, labels)
    codes = _category_codes(pair, categories)
    return _kappa(codes[0], codes[1], categories.size, _weight_matrix(weights, categories.size))


def pairwise_cohen_kappa(
    data: RatingData, weights: Weights = None, labels: npt.ArrayLike | None = None
) -> np.ndarray:
    """Raters x raters matrix of Cohen's kappa, each pair on the units both rated.

    The categories (labels, by default every distinct rating in data) are the same for all
    pairs, which matters for weighted kappa. NaN where a pair shares fewer than two units or
    kappa is undefined; the diagonal is 1.
    """
    ratings = rating_matrix(data)
    categories = _categories(ratings, labels)
    codes = _category_codes(ratings, categories)
    weight = _weight_matrix(weights, categories.size)
    raters = len(ratings)
    result = np.eye(raters)
    for first in range(raters):
        for second in range(first + 1, raters):
            kappa = _kappa(codes[first], codes[second], categories.size, weight)
            result[first, second] = result[second, first] = kappa
    return result


def _kappa(first: np.ndarray, second: np.ndarray, n_categories: int, weight: np.ndarray) -> float:
    """Kappa from two rows of category codes (-1 = missing): 1 - sum w O / sum w E."""
    both = (first >= 0) & (second >= 0)
    if np.count_nonzero(both) < 2:
        return float("nan")
    cells = first[both] * n_categories + second[both]
    observed = np.bincount(cells, minlength=n_categories**2).reshape(n_categories, n_categories)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    # Counts are whole numbers, so the chance disagreement is exactly 0 when undefined.
    chance = (weight * expected).sum()
    if chance == 0:
        return float("nan")
    return float(1.0 - (weight * observed).sum() / chance)


def _weight_matrix(weights: Weights, n_categories: int) -> np.ndarray:
    """Disagreement weights between category positions i and j."""
    gap = np.abs(np.subtract.outer(np.arange(n_categories), np.arange(n_categories)))
    if weights is None:
        return (gap > 0).astype(np.float64)
    if weights == "linear":
        return gap.astype(np.float64)
    if weights == "quadratic":
        return (gap * gap).astype(np.float64)
    raise ValueError(f"weights must be None, 'linear' or 'quadratic'; got {weights!r}")


def _categories(ratings: np.ndarray, labels: npt.ArrayLike | None) -> np.ndarray:
    """The ordered categories: `labels`, or the distinct ratings sorted."""
    if labels is None:
        return np.unique(ratings[~np.isnan(ratings)])
    categories = rating_matrix([labels])[0]
    if np.isnan(categories).any() or np.unique(categories).size != categories.size:
        raise ValueError("labels must be distinct numbers")
    return categories


def _category_codes(ratings: np.ndarray, categories: np.ndarray) -> np.ndarray:
    """Position of each rating in `categories`, -1 where missing; ValueError if not listed."""
    order = np.argsort(categories, kind="stable")
    ordered = categories[order]
    present = ~np.isnan(ratings)
    found = np.minimum(np.searchsorted(ordered, np.where(present, ratings, 0.0)), ordered.size - 1)
    if ordered.size == 0 or (present & (ordered[found] != ratings)).any():
        if present.any():
            raise ValueError("a rating is not among the labels")
    return np.where(present, order[found] if ordered.size else -1, -1)


def _unit_category_table(ratings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Units x categories: how many ratings of the unit fall in each category."""
    categories = np.unique(ratings[~np.isnan(ratings)])
    table = np.column_stack(
        [np.count_nonzero(ratings == category, axis=0) for category in categories]
        or [np.zeros(ratings.shape[1])]
    ).astype(np.float64)
    return table, categories
