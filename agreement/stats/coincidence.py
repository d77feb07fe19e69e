"""Krippendorff's alpha from integer tallies that a change of one unit updates in O(V^2).

A unit's ratings are its value counts n_uc (how many of its m_u ratings have value c).
Grouped by m, the tally keeps, as integers:

    U_m            units with m ratings (m = 1 too: they count as judgments)
    N_m[c]         sum over those units of n_uc
    O_m[c, k]      sum over those units of n_uc n_uk (c <= k)

Every figure below is exact (``fractions.Fraction`` over the values as stored):

    n = sum_{m>=2, c} N_m[c],   D_o = sum_{m>=2} 1/(m-1) sum_{c,k} O_m[c, k] d(c, k),
    D_e = sum_{c,k} n_c n_k d(c, k),   alpha = 1 - (n - 1) D_o / D_e

which is the formula of ``krippendorff.py``, with P_u summed per m. Adding or removing a
unit touches only its own m, so a rating submitted, revised or withdrawn changes the tally
of its unit alone, and the same units always give the same integers whatever the order:
the incremental tally and a from-scratch one are equal, not merely close.
Nothing here imports Django.
"""

from collections.abc import Iterable
from fractions import Fraction

import numpy as np

# Past this many distinct values a dimension is not tallied (the V x V counts would grow):
# its alpha stays with the from-scratch run.
MAX_VALUES = 64

UnitCounts = dict[float, int]


def unit_counts(values: Iterable[float]) -> UnitCounts:
    """A unit's value counts from its ratings (NaN, i.e. missing, left out)."""
    counts: UnitCounts = {}
    for value in values:
        if value == value:  # not NaN
            value = float(value) + 0.0  # -0.0 is 0.0, under one key
            counts[value] = counts.get(value, 0) + 1
    return counts


def _key(value: float) -> str:
    return repr(float(value))  # repr round-trips a float exactly


class Tally:
    """A dimension's tally: per m, units, value sums and value-pair sums (all integers)."""

    def __init__(self, by_m: dict[int, dict] | None = None) -> None:
        self.by_m: dict[int, dict] = by_m or {}

    @classmethod
    def from_matrix(cls, matrix: np.ndarray) -> "Tally":
        """The tally of every unit (column) of ``matrix`` (raters x units, NaN missing) at
        once: the same integers as adding the units one by one."""
        present = ~np.isnan(matrix)
        values = np.unique(matrix[present]) + 0.0  # -0.0 is 0.0, as in ``unit_counts``
        counts = np.zeros((matrix.shape[1], values.size), dtype=np.int64)
        raters, units = np.nonzero(present)
        np.add.at(counts, (units, np.searchsorted(values, matrix[raters, units])), 1)
        per_unit = counts.sum(axis=1)
        by_m = {}
        for m in np.unique(per_unit[per_unit > 0]).tolist():
            block = counts[per_unit == m]
            sums, pairs = block.sum(axis=0), block.T @ block
            c, k = np.nonzero(np.triu(pairs))
            by_m[int(m)] = {
                "units": int(block.shape[0]),
                "values": {float(values[i]): int(sums[i]) for i in np.flatnonzero(sums)},
                "pairs": {
                    (float(values[i]), float(values[j])): int(pairs[i, j])
                    for i, j in zip(c.tolist(), k.tolist(), strict=True)
                },
            }
        return cls(by_m)

    # Storage -----------------------------------------------------------------
    @classmethod
    def from_json(cls, data: dict) -> "Tally":
        by_m = {}
        for m, entry in data.items():
            by_m[int(m)] = {
                "units": int(entry["units"]),
                "values": {float(c): int(n) for c, n in entry["values"].items()},
                "pairs": {
                    tuple(float(v) for v in pair.split()): int(n)
                    for pair, n in entry["pairs"].items()
                },
            }
        return cls(by_m)

    def to_json(self) -> dict:
        return {
            str(m): {
                "units": entry["units"],
                "values": {_key(c): n for c, n in sorted(entry["values"].items())},
                "pairs": {
                    f"{_key(c)} {_key(k)}": n for (c, k), n in sorted(entry["pairs"].items())
                },
            }
            for m, entry in sorted(self.by_m.items())
        }

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tally) and self.to_json() == other.to_json()

    # Updates -----------------------------------------------------------------
    def add(self, counts: UnitCounts, sign: int = 1) -> None:
        """Add a unit (``sign`` -1: take it away) given its value counts: O(V^2)."""
        m = sum(counts.values())
        if m == 0:
            return
        entry = self.by_m.setdefault(m, {"units": 0, "values": {}, "pairs": {}})
        entry["units"] += sign
        values = sorted(counts)
        for i, c in enumerate(values):
            _bump(entry["values"], c, sign * counts[c])
            for k in values[i:]:
                _bump(entry["pairs"], (c, k), sign * counts[c] * counts[k])
        if entry["units"] == 0:
            del self.by_m[m]

    def replace(self, old: UnitCounts, new: UnitCounts) -> None:
        """A unit's counts changed from ``old`` to ``new``."""
        if old != new:
            self.add(old, -1)
            self.add(new, 1)

    # Figures -----------------------------------------------------------------
    @property
    def n_values(self) -> int:
        return len(self.value_counts())

    def value_counts(self) -> dict[float, int]:
        """n_c over the pairable values (units with two ratings or more)."""
        totals: dict[float, int] = {}
        for m, entry in self.by_m.items():
            if m >= 2:
                for c, n in entry["values"].items():
                    _bump(totals, c, n)
        return dict(sorted(totals.items()))

    @property
    def n_units(self) -> int:
        """Pairable units."""
        return sum(entry["units"] for m, entry in self.by_m.items() if m >= 2)

    @property
    def n_pairable(self) -> int:
        return sum(m * entry["units"] for m, entry in self.by_m.items() if m >= 2)

    @property
    def n_judgments(self) -> int:
        return sum(m * entry["units"] for m, entry in self.by_m.items())

    def percent_agreement(self) -> Fraction | None:
        """Agreeing ordered pairs within units over all of them (``kappa.percent_agreement``)."""
        pairs = sum(m * (m - 1) * e["units"] for m, e in self.by_m.items() if m >= 2)
        if not pairs:
            return None
        same = sum(
            n for m, e in self.by_m.items() if m >= 2 for (c, k), n in e["pairs"].items() if c == k
        )
        agreeing = same - self.n_pairable  # sum n_uc^2 - sum n_uc = sum n_uc (n_uc - 1)
        return Fraction(agreeing, pairs)

    def alpha(self, level: str) -> Fraction | None:
        """Krippendorff's alpha, exact; None where undefined (no pairable unit, or no
        variation: every pairable value the same)."""
        totals = self.value_counts()
        n = sum(totals.values())
        distance = _distance(level, totals)
        values = list(totals)
        expected = Fraction(0)
        for i, c in enumerate(values):
            for k in values[i + 1 :]:
                expected += 2 * totals[c] * totals[k] * distance(c, k)
        if n == 0 or expected == 0:
            return None
        observed = Fraction(0)
        for m, entry in self.by_m.items():
            if m < 2:
                continue
            within = sum(
                (2 * count * distance(c, k) for (c, k), count in entry["pairs"].items() if c != k),
                Fraction(0),
            )
            observed += within / (m - 1)
        return 1 - (n - 1) * observed / expected


def _bump(counts: dict, key, by: int) -> None:
    value = counts.get(key, 0) + by
    if value:
        counts[key] = value
    else:
        counts.pop(key, None)


def _distance(level: str, totals: dict[float, int]):
    """d(c, k) of the level, as an exact fraction (the ordinal one reads the counts n_c)."""
    if level == "nominal":
        return lambda c, k: Fraction(int(c != k))
    if level == "interval":
        return lambda c, k: (Fraction(c) - Fraction(k)) ** 2
    if level == "ratio":

        def ratio(c, k):
            if c == k:
                return Fraction(0)
            c, k = Fraction(c), Fraction(k)
            return ((c - k) / (c + k)) ** 2

        return ratio
    if level == "ordinal":
        # Midranks: r_c = n_1 + ... + n_c - n_c / 2; d(c, k) = (r_k - r_c)^2.
        ranks, running = {}, Fraction(0)
        for c, n in totals.items():
            running += n
            ranks[c] = running - Fraction(n, 2)
        return lambda c, k: (ranks[k] - ranks[c]) ** 2
    raise ValueError(f"unknown level {level!r}")
