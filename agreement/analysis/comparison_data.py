"""A study's ratings laid out for comparing systems, and the helpers every estimate of the
comparison shares: JSON-ready numbers, responses by system, each case's pair (no Django)."""

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from agreement.analysis.agreement import DimensionData
from agreement.analysis.roles import DimensionRole

MAX_PLOT_POINTS = 2_000


@dataclass(frozen=True)
class ComparisonData:
    """One study's ratings laid out for comparing systems.

    ``case_systems`` (cases x key labels) is the system index of each response, -1 where
    a case has no response under that label; ``totals`` is raters x cases x labels;
    ``dimensions`` are the agreement matrices (preferences already in system order: a
    negative value prefers the pair's system that comes first in ``systems``);
    ``lengths`` is cases x labels (characters), ``confidence`` raters x cases (1-3).
    """

    systems: list[str]
    labels: list[str]
    strata: list[str]
    case_systems: np.ndarray
    totals: np.ndarray
    dimensions: list[DimensionData]
    roles: list[DimensionRole]
    lengths: np.ndarray
    confidence: np.ndarray
    stratum_shares: dict[str, float] = field(default_factory=dict)
    # The measure of the primary question (``TOTAL_MEASURE`` or ``dimension_measure``);
    # "" = the default rule.
    primary_measure: str = ""
    # The analysis plan's aggregation rule per dimension key (missing: the role's default),
    # and the minimum of valid ratings per item (1: every rated item counts).
    rules: dict[str, str] = field(default_factory=dict)
    min_ratings: int = 1
    # Per dimension key, the adjudicated answer of each unit (NaN where none), laid out as
    # the dimension's matrix's columns and in its orientation.
    adjudicated: dict[str, np.ndarray] = field(default_factory=dict)


def _plain(value):
    if value is None or isinstance(value, bool | int | str):
        return value
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else value


def _quiet():
    """Silence numpy's "mean of empty slice": an unrated case is NaN on purpose."""
    return warnings.catch_warnings(action="ignore", category=RuntimeWarning)


def _by_system(per_label: np.ndarray, case_systems: np.ndarray, n_systems: int) -> np.ndarray:
    """cases x labels -> cases x systems (NaN where a case has no response of a system)."""
    result = np.full((per_label.shape[0], n_systems), np.nan)
    rows, columns = np.nonzero(case_systems >= 0)
    result[rows, case_systems[rows, columns]] = per_label[rows, columns]
    return result


def _case_pairs(data: ComparisonData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per case: the pair's first and second system (in system order), and whether the
    key's label A holds the first (the first two labels of the case)."""
    first = np.min(np.where(data.case_systems[:, :2] >= 0, data.case_systems[:, :2], 10**9), 1)
    second = np.max(data.case_systems[:, :2], axis=1)
    valid = (data.case_systems[:, :2] >= 0).all(axis=1) & (first != second)
    return first, second, valid
