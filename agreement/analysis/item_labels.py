"""Each question's items labelled by the analysis plan's rule (``aggregation``), and how
they were labelled: the cases excluded, tied, adjudicated and changed (no Django)."""

from dataclasses import dataclass, field

import numpy as np

from agreement.analysis.aggregation import Aggregate, aggregate
from agreement.analysis.comparison_data import ComparisonData
from agreement.analysis.roles import (
    MAJORITY,
    MEAN,
    RULES,
    TOTAL_MEASURE,
    DimensionRole,
    dimension_measure,
    has_score,
    rule_for,
)


def rule_of(data: ComparisonData, role: DimensionRole) -> str:
    """The analysis plan's rule for a dimension, or its default when none fits."""
    return rule_for(data.rules, role)


@dataclass(frozen=True)
class _Labels:
    """A question's items labelled by its rule: ``labels`` is cases x labels (a response's
    dimension, the total) or cases (a preference), NaN where an item has no label; a case
    with a response under the minimum of valid ratings has none on any of its responses.

    Counts say what they count: an **item** is what gets a label (a response, or a case
    for a preference), a **case** a test case (holding one item per response). The
    excluded are counted in cases, as a case is left out of the question whole."""

    labels: np.ndarray
    rule: str
    excluded: int  # cases under the minimum of valid ratings (left out of the question)
    ties: int  # cases holding a tie (no single majority; a preference's balanced verdict)
    adjudicated: int  # cases holding an item labelled by an adjudicated answer
    changed: int  # cases holding an item whose adjudicated answer differs from the majority
    tied_items: int = 0  # the items with a tie, in the cases the question counts
    adjudicated_items: int = 0
    changed_items: int = 0
    # Per case: left out of the question (the robustness check and ranking read it too).
    excluded_cases: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))


def _label(data: ComparisonData, key: str, matrix, *, rule: str, sides: bool = False) -> _Labels:
    n_cases, n_labels = data.case_systems.shape
    result: Aggregate = aggregate(
        matrix, rule=rule, min_ratings=data.min_ratings,
        adjudicated=data.adjudicated.get(key) if key else None, sides=sides,
    )  # fmt: skip
    labels = result.labels.copy()
    if sides:  # one unit per case

        def per_item(flags):
            return flags

        def per_case(flags):
            return flags

    else:
        labels = labels.reshape(n_cases, n_labels)
        present = data.case_systems >= 0

        def per_item(flags):
            return flags.reshape(n_cases, n_labels) & present

        def per_case(flags):
            return per_item(flags).any(axis=1)

    excluded = per_case(result.excluded)
    labels[excluded] = np.nan
    counted = excluded if sides else excluded[:, None]
    # A preference's tie is its balanced verdict (0), which the win rates count.
    tied = result.labels == 0 if sides else result.ties

    def cases(flags) -> int:
        return int((per_case(flags) & ~excluded).sum())

    def items(flags) -> int:
        return int((per_item(flags) & ~counted).sum())

    return _Labels(
        labels=labels,
        rule=rule,
        excluded=int(excluded.sum()),
        ties=cases(tied),
        adjudicated=cases(result.adjudicated),
        changed=cases(result.changed),
        tied_items=items(tied),
        adjudicated_items=items(result.adjudicated),
        changed_items=items(result.changed),
        excluded_cases=excluded,
    )


def _labelled(data: ComparisonData) -> dict[str, tuple[np.ndarray, _Labels]]:
    """Measure -> (labels, how) for the total (the mean of the raters' totals) and each
    scored dimension and preference, by its rule."""
    total = _label(data, "", data.totals, rule=MEAN)
    labelled = {TOTAL_MEASURE: (total.labels, total)}
    for role, dim in zip(data.roles, data.dimensions, strict=True):
        if role.scored or role.preference:
            rule = rule_of(data, role)
            how = _label(data, role.key, dim.matrix, rule=rule, sides=role.preference)
            labelled[dimension_measure(role.key)] = (how.labels, how)
    return labelled


def _outcome_labels(data: ComparisonData, dim, role: DimensionRole) -> _Labels:
    """A yes/no outcome's or a category's label per response: the majority (a mean's rule
    reads as the majority: a category has no mean), or the adjudicated answer."""
    rule = rule_of(data, role)
    return _label(data, role.key, dim.matrix, rule=MAJORITY if rule == MEAN else rule)


def _aggregation_summary(data: ComparisonData, labelled: dict, outcomes: dict) -> dict:
    """How each question's items were labelled: its rule, and the cases excluded (under the
    minimum of valid ratings), and the items and the cases tied, adjudicated, and changed
    by adjudication. ``excluded_items`` is the old name of ``excluded_cases`` (deprecated,
    docs/api.md); the other ``*_items`` count items since issue 39 (they counted cases)."""
    rows = []
    total = labelled[TOTAL_MEASURE][1]
    entries = [(TOTAL_MEASURE, "Total score", total)] if has_score(data.roles) else []
    for role in data.roles:
        how = labelled.get(dimension_measure(role.key), (None, None))[1]
        if how is None and role.key in outcomes:
            how = outcomes[role.key]
        if how is not None:
            entries.append((dimension_measure(role.key), role.name, how))
    for measure, name, how in entries:
        rows.append(
            {
                "measure": measure,
                "name": name,
                "rule": how.rule,
                "rule_name": RULES[how.rule],
                "excluded_cases": how.excluded,
                "tied_items": how.tied_items,
                "tied_cases": how.ties,
                "adjudicated_items": how.adjudicated_items,
                "adjudicated_cases": how.adjudicated,
                "changed_items": how.changed_items,
                "changed_cases": how.changed,
                # Deprecated (issue 39): it counted cases; read excluded_cases.
                "excluded_items": how.excluded,
            }
        )
    return {"min_ratings": data.min_ratings, "questions": rows}
