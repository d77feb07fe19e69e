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
    labels: npt.ArrayLike | None = None,
) -> float:
    """Cohen's kappa of two raters over the units both rated (None or NaN = missing).

    weights: None (Cohen 1960), "linear" or "quadratic" (Cohen 1968), on the positions of the
    categories in `labels`, as scikit-learn does. labels: the ordered categories; by default
    the distinct ratings, sorted. NaN if fewer than two units are shared, or if kappa is
    undefined (both raters used one and the same category).
    """
    first, second = rating_matrix([r1])[0], rating_matrix([r2])[0]
    if first.shape != second.shape:
        raise ValueError("r1 and r2 must rate the same units: they differ in length")
    pair = np.vstack([first, second])
    categories = _categories(pair, labels)
    codes = _category_codes(pair, categories)
    _check_weights(weights)
    return _kappa(codes[0], codes[1], categories.size, weights)


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
    _check_weights(weights)
    raters = len(ratings)
    result = np.eye(raters)
    for first in range(raters):
        for second in range(first + 1, raters):
            kappa = _kappa(codes[first], codes[second], categories.size, weights)
            result[first, second] = result[second, first] = kappa
    return result


def _kappa(first: np.ndarray, second: np.ndarray, n_categories: int, weights: Weights) -> float:
    """Kappa from two rows of category codes (-1 = missing): 1 - sum w O / sum w E.

    O is the table of joint ratings and E = outer(row totals, column totals) / n, as in
    scikit-learn; both sums come from the codes and the totals, with no categories x
    categories table, so that many distinct ratings cost no memory.
    """
    both = (first >= 0) & (second >= 0)
    if np.count_nonzero(both) < 2:
        return float("nan")
    first, second = first[both], second[both]
    rows = np.bincount(first, minlength=n_categories).astype(np.float64)
    columns = np.bincount(second, minlength=n_categories).astype(np.float64)
    if np.count_nonzero(rows) == 1 and np.array_equal(rows, columns):
        return float("nan")  # both raters used one and the same category: E is all agreement
    observed = _weight(first - second, weights).sum()
    chance = _chance_disagreement(rows, columns, weights) / first.size
    return float(1.0 - observed / chance)


def _check_weights(weights: Weights) -> None:
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic'; got {weights!r}")


def _weight(gap: np.ndarray, weights: Weights) -> np.ndarray:
    """Disagreement weight of a gap between category positions."""
    if weights is None:
        return (gap != 0).astype(np.float64)
    if weights == "linear":
        return np.abs(gap).astype(np.float64)
    return (gap * gap).astype(np.float64)


def _chance_disagreement(rows: np.ndarray, columns: np.ndarray, weights: Weights) -> float:
    """sum_{i,j} rows_i columns_j w(i - j), in O(categories)."""
    n = rows.sum()
    position = np.arange(rows.size, dtype=np.float64)
    if weights is None:
        return n * n - rows @ columns
    if weights == "quadratic":
        # sum r_i c_j (x_i - x_j)^2 with x centred, for precision
        x = position - (rows + columns) @ position / (2.0 * n)
        return n * (rows @ (x * x)) + n * (columns @ (x * x)) - 2.0 * (rows @ x) * (columns @ x)
    # Linear: sum_i rows_i |i - j| for every j, from cumulative counts and sums below j.
    count_below = np.cumsum(rows)
    sum_below = np.cumsum(rows * position)
    distance = (
        position * count_below
        - sum_below
        + (sum_below[-1] - sum_below)
        - position * (n - count_below)
    )
    return columns @ distance


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
    present = ~np.isnan(ratings)
    values = ratings[present]
    order = np.argsort(categories)
    position = np.searchsorted(categories[order], values)
    listed = position < categories.size
    listed[listed] = categories[order][position[listed]] == values[listed]
    if not listed.all():
        raise ValueError("every rating must be one of the labels")
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
