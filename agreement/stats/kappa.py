"""Agreement on categories: percent agreement, Cohen's kappa and Fleiss' kappa.

Ratings are numbers (categories coded as numbers), compared for exact equality.
"""

from typing import Literal

import numpy as np
import numpy.typing as npt

from agreement.stats.ratings import RatingData, rating_matrix

Weights = Literal["linear", "quadratic"] | None
Distance = Literal["position", "value"]


def percent_agreement(data: RatingData) -> float:
    """Share of agreeing pairs among all pairs of ratings of the same unit.

    data: raters x units, None or NaN = missing. Pooled over ordered pairs i != j within each
    unit, so a unit with m ratings weighs m (m - 1); units with fewer than two ratings drop out.
    NaN if no unit has two ratings.
    """
    units, _, count = _category_cells(rating_matrix(data))
    m = np.bincount(units, weights=count)
    pairs = (m * (m - 1.0)).sum()
    if pairs == 0:
        return float("nan")
    return float((count * (count - 1.0)).sum() / pairs)


def fleiss_kappa(data: RatingData) -> float:
    """Fleiss' (1971) kappa for nominal ratings, data raters x units (None or NaN = missing).

    Every unit must have the same number n >= 2 of ratings, though not necessarily from the
    same raters; units with no rating at all are ignored. Otherwise ValueError: use
    Krippendorff's alpha (nominal), which allows missing ratings. NaN when every rating is
    the same category (chance agreement 1), or when no unit is rated.
    """
    units, category, count = _category_cells(rating_matrix(data))
    m = np.bincount(units, weights=count)
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
    # Mean over units of the share of agreeing pairs, against the chance of agreeing given
    # the pooled category shares.
    observed = (count * (count - 1.0)).sum() / (m.size * n * (n - 1.0))
    shares = np.bincount(category, weights=count) / count.sum()
    chance = (shares * shares).sum()
    if chance >= 1.0:
        return float("nan")
    return float((observed - chance) / (1.0 - chance))


def cohen_kappa(
    r1: npt.ArrayLike,
    r2: npt.ArrayLike,
    weights: Weights = None,
    categories: npt.ArrayLike | None = None,
    *,
    distance: Distance = "position",
) -> float:
    """Cohen's kappa of two raters over the units both rated (None or NaN = missing).

    weights: None (Cohen 1960), "linear" or "quadratic" (Cohen 1968). categories: the full
    ordered list of possible values; with it the result does not depend on which values
    happen to occur (an unused interior scale point still counts in the weights), and equals
    scikit-learn's ``cohen_kappa_score(r1, r2, labels=categories, weights=weights)``. Without
    it, the distinct ratings, sorted. distance: "position" weighs a disagreement by the gap
    between the categories' positions in ``categories`` (scikit-learn's rule, right for
    ordinal scales); "value" by the gap between the values themselves (interval and ratio
    scales, e.g. band points 0, 2, 4, 5). NaN if fewer than two units are shared, or if
    kappa is undefined (both raters used one and the same category).
    """
    first, second = rating_matrix([r1])[0], rating_matrix([r2])[0]
    if first.shape != second.shape:
        raise ValueError("r1 and r2 must rate the same units: they differ in length")
    pair = np.vstack([first, second])
    categories = _categories(pair, categories)
    codes = _category_codes(pair, categories)
    _check_weights(weights, distance)
    scale = _scale(categories, distance)
    return _kappa(codes[0], codes[1], scale, weights)


def pairwise_cohen_kappa(
    data: RatingData,
    weights: Weights = None,
    categories: npt.ArrayLike | None = None,
    *,
    distance: Distance = "position",
) -> np.ndarray:
    """Raters x raters matrix of Cohen's kappa, each pair on the units both rated.

    The categories (``categories``, by default every distinct rating in data) are the same
    for all pairs, which matters for weighted kappa; ``distance`` as in ``cohen_kappa``. NaN
    where a pair shares fewer than two units or kappa is undefined; the diagonal is 1.
    """
    ratings = rating_matrix(data)
    categories = _categories(ratings, categories)
    codes = _category_codes(ratings, categories)
    _check_weights(weights, distance)
    scale = _scale(categories, distance)
    raters = len(ratings)
    result = np.eye(raters)
    for first in range(raters):
        for second in range(first + 1, raters):
            kappa = _kappa(codes[first], codes[second], scale, weights)
            result[first, second] = result[second, first] = kappa
    return result


def _scale(categories: np.ndarray, distance: Distance) -> np.ndarray:
    """Where each category lies for the weights: its position, or its value."""
    if distance == "value":
        return categories.astype(np.float64)
    return np.arange(categories.size, dtype=np.float64)


def _kappa(first: np.ndarray, second: np.ndarray, scale: np.ndarray, weights: Weights) -> float:
    """Kappa from two rows of category codes (-1 = missing): 1 - sum w O / sum w E.

    O is the table of joint ratings and E = outer(row totals, column totals) / n, as in
    scikit-learn; ``scale`` places each category for the weights (w = |x_i - x_j| or its
    square). Both sums come from the codes and the totals, with no categories x categories
    table, so that many distinct ratings cost no memory.
    """
    n_categories = scale.size
    both = (first >= 0) & (second >= 0)
    if np.count_nonzero(both) < 2:
        return float("nan")
    first, second = first[both], second[both]
    rows = np.bincount(first, minlength=n_categories).astype(np.float64)
    columns = np.bincount(second, minlength=n_categories).astype(np.float64)
    if np.count_nonzero(rows) == 1 and np.array_equal(rows, columns):
        return float("nan")  # both raters used one and the same category: E is all agreement
    if weights is None:
        observed = np.count_nonzero(first != second)
    else:
        observed = _weight(scale[first] - scale[second], weights).sum()
    chance = _chance_disagreement(rows, columns, scale, weights) / first.size
    return float(1.0 - observed / chance)


def _check_weights(weights: Weights, distance: Distance = "position") -> None:
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic'; got {weights!r}")
    if distance not in ("position", "value"):
        raise ValueError(f"distance must be 'position' or 'value'; got {distance!r}")


def _weight(gap: np.ndarray, weights: Weights) -> np.ndarray:
    """Disagreement weight of a gap between two categories' places on the scale."""
    if weights == "linear":
        return np.abs(gap).astype(np.float64)
    return (gap * gap).astype(np.float64)


def _chance_disagreement(
    rows: np.ndarray, columns: np.ndarray, scale: np.ndarray, weights: Weights
) -> float:
    """sum_{i,j} rows_i columns_j w(x_i - x_j), in O(categories log categories)."""
    n = rows.sum()
    if weights is None:
        return n * n - rows @ columns
    if weights == "quadratic":
        # sum r_i c_j (x_i - x_j)^2 with x centred, for precision
        x = scale - (rows + columns) @ scale / (2.0 * n)
        return n * (rows @ (x * x)) + n * (columns @ (x * x)) - 2.0 * (rows @ x) * (columns @ x)
    # Linear: sum_i rows_i |x_i - x_j| for every j, from cumulative counts and sums of the
    # categories below x_j (in the order of their places, which `categories` need not be).
    order = np.argsort(scale, kind="stable")
    x, r, c = scale[order], rows[order], columns[order]
    count_below = np.cumsum(r)
    sum_below = np.cumsum(r * x)
    distance = x * count_below - sum_below + (sum_below[-1] - sum_below) - x * (n - count_below)
    return c @ distance


def _categories(ratings: np.ndarray, categories: npt.ArrayLike | None) -> np.ndarray:
    """The ordered categories: `categories`, or the distinct ratings sorted."""
    if categories is None:
        return np.unique(ratings[~np.isnan(ratings)])
    listed = rating_matrix([categories])[0]
    if np.isnan(listed).any() or np.unique(listed).size != listed.size:
        raise ValueError("categories must be distinct numbers")
    return listed


def _category_codes(ratings: np.ndarray, categories: np.ndarray) -> np.ndarray:
    """Position of each rating in `categories`, -1 where missing; ValueError if not listed."""
    present = ~np.isnan(ratings)
    values = ratings[present]
    order = np.argsort(categories)
    position = np.searchsorted(categories[order], values)
    listed = position < categories.size
    listed[listed] = categories[order][position[listed]] == values[listed]
    if not listed.all():
        raise ValueError("every rating must be one of the categories")
    codes = np.full(ratings.shape, -1)
    codes[present] = order[position]
    return codes


def _category_cells(ratings: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Non-empty cells of the units x categories table: unit, category code, count."""
    # Sparse triplets rather than a table, so that many distinct values cost no memory.
    present = ~np.isnan(ratings)
    categories, codes = np.unique(ratings[present], return_inverse=True)
    units = np.nonzero(present)[1]
    cells, count = np.unique(units * categories.size + codes, return_counts=True)
    size = max(categories.size, 1)
    return cells // size, cells % size, count.astype(np.float64)
