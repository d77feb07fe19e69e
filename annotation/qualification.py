"""A rater's answers against a coordinator's key: the qualification pass rule.

Plain Python over scored answers in the shape a submitted rating takes,
``{"responses": {label: {dimension key: answer}}, "case": {key: answer}}``, read by the
rubric's kinds, so the rule can be tested without a database.

The rule, per dimension (``RULE`` says it in words, for the pages):

- every (response, dimension) score of every item is compared with the key; a score agrees
  when it is within ``tolerance`` points. Dimensions answered with a choice compare the
  choice instead: numbers (scales, preferences) within the tolerance, category codes
  exactly. Each kind applies this to its own answers (``expected_from_key`` and
  ``expected_met`` in ``studies.rubric``), as it does for gold items;
- each dimension is scored on its own: the share of its scores that agree;
- an answer to an item that gives nothing (no choice, no point, no listed item, no ticked
  criterion anywhere) is blank: none of its scores agrees, even where the key is 0, so an
  empty form cannot ride on the key's zeros;
- the rater passes when every dimension's share reaches ``pass_percent`` and not every
  answer is blank. The attempt's percent is its weakest dimension's share.
"""

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal


@dataclass(frozen=True)
class Comparison:
    item: str
    label: str  # "" for a dimension rated once per case
    dimension: str
    points: int | str | None  # the rater's value: points, or the choice where there is one
    key_points: int | str
    within: bool


RULE = (
    "Each dimension is scored on its own: a score agrees with the key when it is within the "
    "tolerance (a choice of category must match exactly). You pass when, on every dimension, "
    "the share of your scores that agree reaches the pass mark. An item left blank (no "
    "choice, point, listed item or ticked criterion anywhere) agrees on nothing, even where "
    "the key is 0, and an attempt left entirely blank never passes."
)


def _cells(answer: dict, dimensions) -> list[tuple[str, object, dict | None]]:
    """(label, dimension, stored answer) of each response's and each per-case dimension;
    the label is "" for a per-case one."""
    answer = answer if isinstance(answer, dict) else {}
    responses = answer.get("responses") or {}
    cells = [
        (label, dimension, scores.get(dimension.key))
        for label, scores in sorted(responses.items())
        if isinstance(scores, dict)
        for dimension in dimensions
        if dimension.scope == "response"
    ]
    case = answer.get("case") or {}
    cells += [("", d, case.get(d.key)) for d in dimensions if d.scope == "case"]
    return cells


def is_blank(answer: dict, dimensions) -> bool:
    """True when the answer gives nothing anywhere (see the module's rule)."""
    return not any(dimension.answered(value) for _, dimension, value in _cells(answer, dimensions))


def compare(*, item: str, answer: dict, key: dict, dimensions, tolerance: int) -> list[Comparison]:
    """One comparison per answered cell of the key; ``dimensions`` are the rubric's kinds,
    each of which says whether the rater's answer meets what the key's expects
    (``expected_from_key``, ``expected_met``). A blank answer agrees nowhere."""
    blank = is_blank(answer, dimensions)
    answer = answer if isinstance(answer, dict) else {}
    comparisons = []
    for label, dimension, key_value in _cells(key, dimensions):
        expected = dimension.expected_from_key(key_value, tolerance=tolerance)
        if expected is None:
            continue
        scores = (answer.get("responses") or {}).get(label) if label else answer.get("case")
        value = scores.get(dimension.key) if isinstance(scores, dict) else None
        comparisons.append(
            Comparison(
                item,
                label,
                dimension.key,
                dimension.key_value(value),
                dimension.key_value(key_value),
                not blank and dimension.expected_met(expected, value),
            )
        )
    return comparisons


@dataclass(frozen=True)
class Outcome:
    percent: Decimal  # the weakest dimension's share, rounded to 0.1 for display
    passed: bool
    dimensions: dict[str, dict]  # key -> {"compared", "within", "percent"} in rubric order
    blank: bool  # every answer was blank


def _percent(within: int, compared: int) -> Decimal:
    return (Decimal(100 * within) / compared).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP)


def pass_rule(*, comparisons: list[Comparison], pass_percent: int, blank: bool = False) -> Outcome:
    """The rule applied per dimension. No comparisons: nothing to fail, unless blank."""
    by_dimension: dict[str, list[Comparison]] = {}
    for comparison in comparisons:
        by_dimension.setdefault(comparison.dimension, []).append(comparison)
    dimensions = {}
    passed = not blank
    for dimension, rows in by_dimension.items():
        within = sum(1 for c in rows if c.within)
        dimensions[dimension] = {
            "compared": len(rows),
            "within": within,
            "percent": str(_percent(within, len(rows))),
        }
        # Compared in whole numbers so that rounding can never turn a fail into a pass.
        passed = passed and 100 * within >= pass_percent * len(rows)
    if not dimensions:
        return Outcome(Decimal("0.0") if blank else Decimal("100.0"), passed, {}, blank)
    weakest = min(Decimal(d["percent"]) for d in dimensions.values())
    return Outcome(Decimal("0.0") if blank else weakest, passed, dimensions, blank)
