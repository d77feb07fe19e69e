"""A rater's answers against a coordinator's key: the qualification pass rule.

Plain Python over scored answers in the shape a submitted rating takes,
``{"responses": {label: {dimension key: {"points": p, ...}}}, "case": {key: {...}}}``, so
the rule can be tested without a database.

The rule, per dimension (``RULE`` says it in words, for the pages):

- every (response, dimension) score of every item is compared with the key; a score agrees
  when it is within ``tolerance`` points. Dimensions answered with a choice compare the
  choice instead: numbers (scales, preferences) within the tolerance, category codes
  exactly;
- each dimension is scored on its own: the share of its scores that agree;
- an answer to an item that gives nothing (no choice, no point, no listed item, no ticked
  criterion anywhere) is blank: none of its scores agrees, even where the key is 0, so an
  empty form cannot ride on the key's zeros;
- the rater passes when every dimension's share reaches ``pass_percent`` and not every
  answer is blank. The attempt's percent is its weakest dimension's share.
"""

from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Decimal


@dataclass(frozen=True)
class Comparison:
    item: str
    label: str  # "" for a dimension rated once per case
    dimension: str
    points: int | str | None  # the rater's value: points, or the choice where there is one
    key_points: int | str
    within: bool


def _points(scored: dict, key: str) -> int | str | None:
    entry = scored.get(key) if isinstance(scored, dict) else None
    if not isinstance(entry, dict):
        return None
    value = entry["choice"] if "choice" in entry else entry.get("points")
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return int(value)
    return value if isinstance(value, str) and value else None


RULE = (
    "Each dimension is scored on its own: a score agrees with the key when it is within the "
    "tolerance (a choice of category must match exactly). You pass when, on every dimension, "
    "the share of your scores that agree reaches the pass mark. An item left blank (no "
    "choice, point, listed item or ticked criterion anywhere) agrees on nothing, even where "
    "the key is 0, and an attempt left entirely blank never passes."
)


def _answered(entry) -> bool:
    if not isinstance(entry, dict):
        return False
    if "choice" in entry:
        return entry["choice"] is not None
    return bool(entry.get("points") or entry.get("items") or any(entry.get("checked") or ()))


def is_blank(answer: dict) -> bool:
    """True when the answer gives nothing anywhere (see the module's rule)."""
    answer = answer if isinstance(answer, dict) else {}
    entries = [
        entry
        for scores in (answer.get("responses") or {}).values()
        if isinstance(scores, dict)
        for entry in scores.values()
    ]
    entries += list((answer.get("case") or {}).values())
    return not any(_answered(entry) for entry in entries)


def compare(
    *, item: str, answer: dict, key: dict, dimensions: list[tuple[str, str]], tolerance: int
) -> list[Comparison]:
    """One comparison per scored cell of the key; ``dimensions`` is [(key, scope)]. A blank
    answer agrees nowhere."""
    blank = is_blank(answer)
    comparisons = []
    for label, key_scores in sorted((key.get("responses") or {}).items()):
        rater_scores = (answer.get("responses") or {}).get(label) or {}
        for dimension, scope in dimensions:
            if scope != "response" or _points(key_scores, dimension) is None:
                continue
            comparisons.append(
                _one(
                    item, label, dimension, _points(rater_scores, dimension), key_scores, tolerance
                )
            )
    for dimension, scope in dimensions:
        key_case = key.get("case") or {}
        if scope != "case" or _points(key_case, dimension) is None:
            continue
        rater_case = _points(answer.get("case") or {}, dimension)
        comparisons.append(_one(item, "", dimension, rater_case, key_case, tolerance))
    if blank:
        return [replace(c, within=False) for c in comparisons]
    return comparisons


def _one(item, label, dimension, points, key_scores, tolerance) -> Comparison:
    key_points = _points(key_scores, dimension)
    if isinstance(points, int) and isinstance(key_points, int):
        within = abs(points - key_points) <= tolerance
    else:
        within = points == key_points
    return Comparison(item, label, dimension, points, key_points, within)


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
