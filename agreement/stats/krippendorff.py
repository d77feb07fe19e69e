"""Krippendorff's alpha: any number of raters, missing ratings, four levels of measurement.

A unit with m_u >= 2 ratings is pairable; n is the number of pairable values and n_c the
number of them equal to c. With d(c, k) the squared distance of the level,

    alpha = 1 - D_o / D_e = 1 - (n - 1) * sum_u P_u / (m_u - 1) / sum_{c,k} n_c n_k d(c, k)

where P_u sums d over the ordered pairs of ratings within unit u (Krippendorff 2011,
"Computing Krippendorff's alpha-reliability"). Each level keeps per-unit sufficient
statistics, so that `AlphaTerms.alphas` gets alpha for many resamples of units at once from
a counts matrix (how often each unit was drawn): the bootstrap never loops over resamples.
Units with the same values weigh the same, so the bootstrap keeps one column per pattern
of values (`unit_patterns`). docs/statistics.md gives the formulas and the cost of each level.
"""

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from agreement.stats.ratings import RatingData, rating_matrix

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")
# The reference lines of alpha, read everywhere from here (the pages, the report, the
# bootstrap's P(alpha < t)): below 0.667 no conclusions, 0.667 tentative ones, 0.70 the
# reference protocol's criterion, 0.80 reliable (Krippendorff 2004, section 12.2).
ALPHA_THRESHOLDS: tuple[float, ...] = (0.667, 0.70, 0.80)

# Elements (float64) in one temporary block: 16 MB. Resamples are processed in chunks of
# about BLOCK / units rows so memory stays bounded whatever the number of resamples.
BLOCK = 1 << 21


def check_level(level: str) -> str:
    """Return `level` if it is a level of measurement, else raise ValueError."""
    if level not in LEVELS:
        choices = ", ".join(repr(name) for name in LEVELS)
        raise ValueError(f"level must be one of {choices}; got {level!r}")
    return level


class AlphaTerms:
    """Per-unit sufficient statistics of alpha for the pairable units of one data set."""

    def __init__(
        self, ratings: np.ndarray, present: np.ndarray, weights: np.ndarray | None = None
    ) -> None:
        # `ratings`: raters x units, every unit with at least two ratings; `present`: not NaN.
        # `weights`: how many units each column stands for (see `unit_patterns`); they only
        # place the common centres that keep sums of squares precise, as the whole data's.
        self.n_units = ratings.shape[1]
        self.weights = np.ones(self.n_units) if weights is None else weights
        self.m = present.sum(axis=0, dtype=np.float64)
        # fmin and fmax skip NaN.
        self._low = np.fmin.reduce(ratings, axis=0) if len(ratings) else np.empty(self.n_units)
        self._high = np.fmax.reduce(ratings, axis=0) if len(ratings) else np.empty(self.n_units)
        self._varied = (self._high > self._low).astype(np.float64)

    @property
    def width(self) -> int:
        """Columns a resample needs (units, or distinct values if more): sizes the chunks."""
        return max(self.n_units, 1)

    def alphas(self, counts: np.ndarray) -> np.ndarray:
        """Alpha of each row of `counts` (resamples x columns: how often each is drawn).

        NaN where the resample has no variation at all (expected disagreement 0).
        """
        counts = np.asarray(counts, dtype=np.float64)
        observed, expected, n = self._disagreements(counts)
        with np.errstate(divide="ignore", invalid="ignore"):
            alpha = 1.0 - (n - 1.0) * observed / expected
        alpha[self._no_variation(counts)] = np.nan
        return alpha

    def _disagreements(self, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per resample: sum_u P_u / (m_u - 1), sum_{c,k} n_c n_k d(c, k), and n."""
        raise NotImplementedError

    def _no_variation(self, counts: np.ndarray) -> np.ndarray:
        # Tested on the values themselves, not on D_e == 0, which rounding can miss.
        # Only resamples made of constant units can lack variation; they are rare, so
        # the exact check runs on those rows only.
        result = counts @ self._varied == 0
        rows = np.flatnonzero(result)
        if rows.size:
            drawn = counts[rows] > 0
            low = np.where(drawn, self._low, np.inf).min(axis=1, initial=np.inf)
            high = np.where(drawn, self._high, -np.inf).max(axis=1, initial=-np.inf)
            result[rows] = low >= high
        return result


class IntervalTerms(AlphaTerms):
    """d(c, k) = (c - k)^2, from per-unit sums: no cost in the number of distinct values."""

    def __init__(
        self, ratings: np.ndarray, present: np.ndarray, weights: np.ndarray | None = None
    ) -> None:
        super().__init__(ratings, present, weights)
        m = self.m
        deviations = np.where(present, ratings, 0.0)
        unit_mean = deviations.sum(axis=0) / m
        # Sums of squares about each unit's mean, then about one common centre, rather
        # than raw sums of squares: keeps precision for large values with a small spread.
        # In place, as the matrix may be large.
        deviations -= unit_mean
        deviations *= present
        within = np.einsum("ij,ij->j", deviations, deviations)
        mass = self.weights * m
        centre = (mass * unit_mean).sum() / max(mass.sum(), 1.0)  # 1.0: no units at all
        shift = unit_mean - centre
        # sum over pairs (x_i - x_j)^2 = 2 m S2 - 2 S1^2 = 2 m (sum of squares about the mean)
        self._stats = np.column_stack(
            [m, 2.0 * m * within / (m - 1.0), m * shift, within + m * shift * shift]
        )

    def _disagreements(self, counts):
        n, observed, s1, s2 = (counts @ self._stats).T
        return observed, 2.0 * (n * s2 - s1 * s1), n


class CategoryTerms(AlphaTerms):
    """Base for levels that count the distinct values: units x values matrix."""

    def __init__(
        self, ratings: np.ndarray, present: np.ndarray, weights: np.ndarray | None = None
    ) -> None:
        super().__init__(ratings, present, weights)
        distinct = np.unique(ratings)  # NaN, if any, sorts last
        self.values = distinct[~np.isnan(distinct)]
        self._counts = _unit_value_counts(ratings, present, self.values)
        self._pooled = np.asarray(self._counts.T @ self.weights, dtype=np.float64).ravel()

    @property
    def dense(self) -> bool:
        """Whether the units x values counts are a dense array (few distinct values)."""
        return isinstance(self._counts, np.ndarray)

    @property
    def width(self) -> int:
        return max(self.n_units, self.values.size, 1)


class NominalTerms(CategoryTerms):
    """d(c, k) = 0 if c == k else 1."""

    def __init__(
        self, ratings: np.ndarray, present: np.ndarray, weights: np.ndarray | None = None
    ) -> None:
        super().__init__(ratings, present, weights)
        m = self.m
        same = np.asarray((self._counts**2).sum(axis=1), dtype=np.float64).ravel()
        self._stats = np.column_stack([m, (m * m - same) / (m - 1.0)])

    def _disagreements(self, counts):
        n, observed = (counts @ self._stats).T
        per_value = counts @ self._counts
        return observed, n * n - (per_value * per_value).sum(axis=1), n


class OrdinalTerms(CategoryTerms):
    """d(c, k) = (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2, the squared gap between midranks.

    With r_c = n_1 + ... + n_c - n_c / 2 (the midrank of c among the pairable values),
    d(c, k) = (r_k - r_c)^2: ordinal alpha is interval alpha on midranks. The ranks depend
    on the marginal counts, so each resample recomputes them from its own counts.
    """

    def _disagreements(self, counts):
        m = self.m
        n = counts @ m
        per_value = counts @ self._counts
        # Centred midranks (mean zero), which keeps the sums of squares small.
        ranks = np.cumsum(per_value, axis=1) - 0.5 * per_value - 0.5 * n[:, None]
        s1 = ranks @ self._counts.T
        s2 = (ranks * ranks) @ self._counts.T
        observed = (counts * (m * s2 - s1 * s1)) @ (2.0 / (m - 1.0))
        t1 = (per_value * ranks).sum(axis=1)
        t2 = (per_value * ranks * ranks).sum(axis=1)
        return observed, 2.0 * (n * t2 - t1 * t1), n


class RatioTerms(CategoryTerms):
    """d(c, k) = ((c - k) / (c + k))^2 for values >= 0, with d(0, 0) = 0.

    Within units, exact over the pairs. For the expected disagreement, which pairs every
    value with every other, the identity 1 / s^2 = integral_0^inf t exp(-s t) dt gives

        sum_{c,k} n_c n_k d(c, k) = integral_0^inf t * 2 (A0 A2 - A1^2) dt,
        A_p(t) = sum_c n_c (c - mu)^p exp(-t c)   (any centre mu),

    evaluated by the trapezoidal rule in log t (relative error below 1e-14): O(values x nodes)
    time, memory bounded by blocks of nodes, no values x values matrix.
    """

    def __init__(
        self, ratings: np.ndarray, present: np.ndarray, weights: np.ndarray | None = None
    ) -> None:
        super().__init__(ratings, present, weights)
        if self.values.size and self.values[0] < 0:
            raise ValueError("ratio level needs ratings >= 0 (a ratio scale has an absolute zero)")
        if self.dense and self.values.size**2 <= BLOCK:
            # Few distinct values: P_u = sum_{c,k} n_uc n_uk d(c, k) from the counts.
            distances = _ratio_distance(self.values[:, None], self.values[None, :])
            within = ((self._counts @ distances) * self._counts).sum(axis=1)
        else:
            within = _ratio_within_units(ratings, present)
        self._stats = np.column_stack([self.m, within / (self.m - 1.0)])
        # The metric is scale-free: work on values scaled into [0, 1].
        top = self.values[-1] if self.values.size and self.values[-1] > 0 else 1.0
        self._scaled = self.values / top
        positive = self._scaled[self._scaled > 0]
        self._nodes, self._weights = _laplace_nodes(positive.min() if positive.size else 1.0)

    def _disagreements(self, counts):
        n, observed = (counts @ self._stats).T
        return observed, self._expected(counts @ self._counts), n

    def _expected(self, per_value: np.ndarray) -> np.ndarray:
        x = self._scaled
        total = np.zeros(per_value.shape[0])
        step = max(1, BLOCK // max(x.size, 1))
        for start in range(0, self._nodes.size, step):
            t = self._nodes[start : start + step]
            decay = np.exp(-np.outer(x, t))
            # Centre each node's sums on the whole data's weighted mean (the same for every
            # resample), so that A0 A2 - A1^2 does not cancel.
            mass = self._pooled @ decay
            mu = np.divide(
                self._pooled @ (x[:, None] * decay), mass, out=np.zeros_like(t), where=mass > 0
            )
            shifted = x[:, None] - mu
            a0 = per_value @ decay
            a1 = per_value @ (shifted * decay)
            a2 = per_value @ (shifted * shifted * decay)
            total += (2.0 * (a0 * a2 - a1 * a1)) @ self._weights[start : start + step]
        return total


_TERMS: dict[str, type[AlphaTerms]] = {
    "nominal": NominalTerms,
    "ordinal": OrdinalTerms,
    "interval": IntervalTerms,
    "ratio": RatioTerms,
}


def alpha_terms(data: RatingData, level: str = "interval") -> AlphaTerms:
    """Sufficient statistics of alpha for the pairable units of `data` (raters x units)."""
    terms_class = _TERMS[check_level(level)]
    ratings, present = _pairable(data)
    return terms_class(ratings, present)


@dataclass(frozen=True)
class UnitPatterns:
    """The pairable units grouped by pattern: the multiset of a unit's values.

    Units with the same values, each as often, have the same m_u, P_u and value counts, so
    they weigh the same in D_o, D_e and the no-variation check: alpha of any multiset of
    units depends only on how many units of each pattern it holds. `terms` has one column
    per pattern; `counts[k]` units have pattern k; `of_unit[u]` is the pattern of pairable
    unit u (in the data's order).
    """

    terms: AlphaTerms
    counts: np.ndarray
    of_unit: np.ndarray


def unit_patterns(data: RatingData, level: str = "interval") -> UnitPatterns:
    """The pairable units of `data` grouped by pattern, with alpha's terms per pattern."""
    terms_class = _TERMS[check_level(level)]
    ratings, _ = _pairable(data)
    n_units = ratings.shape[1]
    # Each unit's values sorted (NaN last, then as +inf so that equal patterns compare
    # equal); units sorted by those columns, and a new pattern wherever a column changes.
    keys = np.sort(ratings, axis=0)
    keys[np.isnan(keys)] = np.inf
    order = np.lexsort(keys[::-1]) if n_units else np.empty(0, dtype=np.intp)
    keys = keys[:, order]
    starts = np.ones(n_units, dtype=bool)
    starts[1:] = (keys[:, 1:] != keys[:, :-1]).any(axis=0)
    of_unit = np.empty(n_units, dtype=np.intp)
    of_unit[order] = np.cumsum(starts) - 1
    counts = np.bincount(of_unit, minlength=int(starts.sum())).astype(np.float64)
    patterns = keys[:, starts]
    patterns[np.isinf(patterns)] = np.nan
    terms = terms_class(patterns, ~np.isnan(patterns), counts)
    return UnitPatterns(terms=terms, counts=counts, of_unit=of_unit)


def krippendorff_alpha(data: RatingData, level: Level = "interval") -> float:
    """Krippendorff's alpha of `data` (raters x units, None or NaN = missing).

    level: "nominal", "ordinal", "interval" or "ratio" (ValueError otherwise); ratio needs
    ratings >= 0. Units with fewer than two ratings are not pairable and drop out; the ordinal
    ranks are the distinct pairable values, weighted by their frequencies.
    Returns NaN when alpha is undefined: no pairable unit (D_o and D_e are 0/0), or no
    variation at all, every pairable value being the same (D_e = 0).
    """
    terms = alpha_terms(data, level)
    return float(terms.alphas(np.ones((1, terms.n_units)))[0])


def alpha_without_each_rater(data: RatingData, level: Level = "interval") -> np.ndarray:
    """Alpha with each rater (row) left out in turn: entry i is alpha without rater i."""
    ratings = rating_matrix(data)
    check_level(level)
    return np.array(
        [
            krippendorff_alpha(np.delete(ratings, rater, axis=0), level)
            for rater in range(len(ratings))
        ],
        dtype=np.float64,
    )


def _pairable(data: RatingData) -> tuple[np.ndarray, np.ndarray]:
    """The ratings (raters x units) of the units with two ratings or more, and where present."""
    ratings = rating_matrix(data)
    present = ~np.isnan(ratings)
    pairable = present.sum(axis=0) >= 2
    if not pairable.all():
        ratings = np.compress(pairable, ratings, axis=1)
        present = np.compress(pairable, present, axis=1)
    return ratings, present


def _unit_value_counts(ratings: np.ndarray, present: np.ndarray, values: np.ndarray):
    """Units x distinct values: how many of the unit's ratings have that value."""
    import scipy.sparse

    n_units = ratings.shape[1]
    # Dense when small (fast matrix products; one comparison pass per value is quicker
    # than sorting the ratings); sparse otherwise, so memory stays O(ratings) even for
    # nominal or ratio data with a great many distinct values.
    if n_units * values.size <= BLOCK:
        counts = np.zeros((n_units, values.size))
        for code, value in enumerate(values):
            counts[:, code] = np.count_nonzero(ratings == value, axis=0)
        return counts
    units = np.nonzero(present)[1]
    codes = np.searchsorted(values, ratings[present])
    ones = np.ones(units.size)
    return scipy.sparse.csr_array((ones, (units, codes)), shape=(n_units, values.size))


def _ratio_within_units(ratings: np.ndarray, present: np.ndarray) -> np.ndarray:
    """For each unit, the ratio distance summed over its ordered pairs of ratings."""
    m = present.sum(axis=0)
    packed = np.sort(ratings, axis=0)  # NaN sorts last: each unit's ratings come first
    total = np.zeros(ratings.shape[1])
    # Units grouped by their number of ratings, so the work is the number of pairs.
    for size in np.unique(m):
        columns = np.flatnonzero(m == size)
        block = packed[:size, columns]
        for i in range(size - 1):
            total[columns] += 2.0 * _ratio_distance(block[i], block[i + 1 :]).sum(axis=0)
    return total


def _ratio_distance(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """((c - k) / (c + k))^2, and 0 for c = k = 0, broadcasting."""
    both = first + second
    ratio = np.divide(first - second, both, out=np.zeros(both.shape), where=both != 0)
    return ratio * ratio


def _laplace_nodes(smallest: float, step: float = 0.25) -> tuple[np.ndarray, np.ndarray]:
    """Nodes t and weights w with sum_q w_q exp(-s t_q) = 1 / s^2 for smallest <= s <= 2.

    Trapezoidal rule in y = log t over the integrand t^2 exp(-s t), which is smooth and
    decays fast at both ends; step 0.25 gives a relative error near 5e-15. The range drops
    tails below 1e-16 (t^2 / 2 below, exp(-40) above).
    """
    low = math.log(math.sqrt(2e-16) / 2.0)
    high = math.log(40.0 / smallest)
    y = np.arange(low, high + step, step)
    t = np.exp(y)
    return t, step * t * t
