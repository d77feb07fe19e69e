"""One label per item from its raters' ratings, by the analysis plan's rule (no Django).

Rules (protocol section 9, "unit of analysis"; named in ``roles``, with the plan's other
terms):

- ``mean``: the mean of the item's ratings (a score's rule today);
- ``majority``: the value most raters gave; when two or more values share the most votes
  the item is a tie and has no label (it is counted, never broken silently). A preference
  takes the side more raters preferred (``preference_majority``, the sign of the sum of
  their sides; a rater's tie chooses no side): a balance is the tie verdict 0, which the
  win rates count as a tie;
- ``adjudicated``: the adjudicated answer where the item has one, else the majority.

``ratings_disagree`` says, by the same rules, where an item's ratings so far disagree: the
adaptive design's reason to add a rater.

An item rated fewer than ``min_ratings`` times (valid ratings, i.e. answered) gets no
label under any rule: it is excluded and counted. Formulas: docs/statistics.md.
"""

import warnings
from dataclasses import dataclass

import numpy as np

from agreement.analysis.roles import ADJUDICATED, MEAN, RULES


@dataclass(frozen=True)
class Aggregate:
    """Per unit: its label (NaN without one), and why it has none or where it came from."""

    labels: np.ndarray
    n_ratings: np.ndarray  # valid ratings per unit
    excluded: np.ndarray  # fewer valid ratings than the minimum (none included)
    ties: np.ndarray  # majority without a single winner (values only, not preference sides)
    adjudicated: np.ndarray  # the label is the adjudicated answer
    changed: np.ndarray  # an adjudicated answer that differs from the majority label


def aggregate(
    matrix,
    *,
    rule: str,
    min_ratings: int,
    adjudicated=None,
    sides: bool = False,
) -> Aggregate:
    """Raters x units -> one label per unit by ``rule``.

    ``adjudicated``: per unit the adjudicated value (NaN where none), in the matrix's
    orientation; read under the ``adjudicated`` rule only (``changed`` is given whatever
    the rule). ``sides``: a preference, whose majority is the side most raters chose.
    """
    if rule not in RULES:
        raise ValueError(f"No aggregation rule is named {rule!r}")
    values = np.asarray(matrix, dtype=float)
    if values.ndim != 2:
        raise ValueError("matrix must be raters x units")
    n_units = values.shape[1]
    counts = (~np.isnan(values)).sum(axis=0)
    kept = counts >= max(min_ratings, 1)
    excluded = ~kept
    majority, majority_ties = (_sides if sides else _majority)(values)
    ties = majority_ties
    if rule == MEAN:
        with warnings.catch_warnings(action="ignore", category=RuntimeWarning):
            labels = np.nanmean(values, axis=0) if values.shape[0] else np.full(n_units, np.nan)
        if sides:
            labels = np.sign(labels)
        ties = np.zeros(n_units, bool)
    else:
        labels = majority.copy()
    given = np.full(n_units, np.nan) if adjudicated is None else np.asarray(adjudicated, float)
    if sides:
        given = np.sign(given)
    has_given = ~np.isnan(given) & kept
    changed = has_given & (majority_ties | (given != majority))
    used = has_given if rule == ADJUDICATED else np.zeros(n_units, bool)
    labels[used] = given[used]
    ties = ties & ~used & kept
    labels[~kept] = np.nan
    return Aggregate(
        labels=labels,
        n_ratings=counts,
        excluded=excluded,
        ties=ties,
        adjudicated=used,
        changed=changed,
    )


def _majority(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per unit the value given most often, NaN and a tie where two or more share it."""
    n_units = values.shape[1]
    labels = np.full(n_units, np.nan)
    ties = np.zeros(n_units, bool)
    choices = np.unique(values[~np.isnan(values)])
    if not choices.size:
        return labels, ties
    votes = np.stack([(values == choice).sum(axis=0) for choice in choices])  # choices x units
    most = votes.max(axis=0)
    winners = (votes == most) & (most > 0)
    n_winners = winners.sum(axis=0)
    single = n_winners == 1
    labels[single] = choices[np.argmax(winners[:, single], axis=0)]
    ties = n_winners > 1
    return labels, ties


def preference_majority(matrix) -> np.ndarray:
    """The one rule for the raters' majority of a preference, per unit (raters x units of
    signed preferences on any scale, NaN = not rated): the side more raters chose, the sign
    of the sum of their sides. A rater's tie chooses neither side, so (tie, tie, A) is A;
    as many for each side is the tie verdict 0; NaN where nobody answered. The report's
    per-case preference and the judges' calibration both ask it."""
    values = np.asarray(matrix, dtype=float)
    rated = (~np.isnan(values)).any(axis=0)
    return np.where(rated, np.sign(np.nansum(np.sign(values), axis=0)), np.nan)


def _sides(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A preference's majority (``preference_majority``); never a tie of votes."""
    return preference_majority(values), np.zeros(values.shape[1], bool)


def ratings_disagree(matrix, *, rule: str, sides: bool = False) -> np.ndarray:
    """Per unit (raters x units, NaN = not rated): whether its ratings so far disagree by
    ``rule``, which is what the adaptive design adds a rater for. A mean is the label
    however the ratings spread, so it never disagrees (a preference's mean takes its sign,
    so its sides are read); the majority (and the adjudicated rule, whose label is the
    majority until an adjudicator decides) disagrees where the raters gave more than one
    value, or, for a preference, more than one side (a rater's tie is a side of its own:
    (tie, A) is not yet a clear A)."""
    if rule not in RULES:
        raise ValueError(f"No aggregation rule is named {rule!r}")
    values = np.asarray(matrix, dtype=float)
    if values.ndim != 2:
        raise ValueError("matrix must be raters x units")
    if rule == MEAN and not sides:
        return np.zeros(values.shape[1], bool)
    if sides:
        values = np.sign(values)
    rated = ~np.isnan(values)
    with warnings.catch_warnings(action="ignore", category=RuntimeWarning):
        low = np.where(rated, values, np.inf).min(axis=0)
        high = np.where(rated, values, -np.inf).max(axis=0)
    return rated.any(axis=0) & (high > low)
