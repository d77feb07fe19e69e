"""A rater's answers against a coordinator's key: the qualification pass rule.

Plain Python over scored answers in the shape a submitted rating takes,
``{"responses": {label: {dimension key: {"points": p, ...}}}, "case": {key: {...}}}``, so
the rule can be tested without a database.

The rule: every (response, dimension) score of every item is compared with the key; a
score agrees when it is within ``tolerance`` points. Dimensions answered with a choice
compare the choice instead: numbers (scales, preferences) within the tolerance, category
codes exactly. The rater passes when the share of agreeing scores reaches ``pass_percent``.
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


def compare(
    *, item: str, answer: dict, key: dict, dimensions: list[tuple[str, str]], tolerance: int
) -> list[Comparison]:
    """One comparison per scored cell of the key; ``dimensions`` is [(key, scope)]."""
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
    return comparisons


def _one(item, label, dimension, points, key_scores, tolerance) -> Comparison:
    key_points = _points(key_scores, dimension)
    if isinstance(points, int) and isinstance(key_points, int):
        within = abs(points - key_points) <= tolerance
    else:
        within = points == key_points
    return Comparison(item, label, dimension, points, key_points, within)


def pass_rule(*, comparisons: list[Comparison], pass_percent: int) -> tuple[Decimal, bool]:
    """(percent within tolerance, rounded to 0.1; passed). No comparisons: nothing to fail."""
    if not comparisons:
        return Decimal("100.0"), True
    within = sum(1 for c in comparisons if c.within)
    percent = (Decimal(100 * within) / len(comparisons)).quantize(
        Decimal("0.1"), rounding=ROUND_HALF_UP
    )
    # Compared in whole numbers so that rounding can never turn a fail into a pass.
    return percent, 100 * within >= pass_percent * len(comparisons)
