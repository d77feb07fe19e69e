"""Each question's items labelled by the analysis plan's rule (``aggregation``), and how
they were labelled: the cases excluded, tied, adjudicated and changed (no Django)."""

from dataclasses import dataclass

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
    with a response under the minimum of valid ratings has none on any of its responses."""

    labels: np.ndarray
    rule: str
    excluded: int  # cases under the minimum of valid ratings
    ties: int  # cases with a tie (no single majority; a preference's balanced verdict)
    adjudicated: int  # cases labelled by an adjudicated answer
    changed: int  # cases whose adjudicated answer differs from the majority label


def _label(data: ComparisonData, key: str, matrix, *, rule: str, sides: bool = False) -> _Labels:
    n_cases, n_labels = data.case_systems.shape
    result: Aggregate = aggregate(
        matrix, rule=rule, min_ratings=data.min_ratings,
        adjudicated=data.adjudicated.get(key) if key else None, sides=sides,
    )  # fmt: skip
    labels = result.labels.copy()
    if sides:  # one unit per case

        def per_case(flags):
            return flags

    else:
        labels = labels.reshape(n_cases, n_labels)
        present = data.case_systems >= 0

        def per_case(flags):
            return (flags.reshape(n_cases, n_labels) & present).any(axis=1)

    excluded = per_case(result.excluded)
    labels[excluded] = np.nan
    return _Labels(
        labels=labels,
        rule=rule,
        excluded=int(excluded.sum()),
        # A preference's tie is its balanced verdict (0), which the win rates count.
        ties=int((per_case(result.labels == 0 if sides else result.ties) & ~excluded).sum()),
        adjudicated=int((per_case(result.adjudicated) & ~excluded).sum()),
        changed=int((per_case(result.changed) & ~excluded).sum()),
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
    minimum of valid ratings), tied, adjudicated, and changed by adjudication."""
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
                "excluded_items": how.excluded,
                "tied_items": how.ties,
                "adjudicated_items": how.adjudicated,
                "changed_items": how.changed,
            }
        )
    return {"min_ratings": data.min_ratings, "questions": rows}
