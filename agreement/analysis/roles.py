"""The analysis plan's terms: what a dimension can be compared on (its role), the rules
that give an item one label from its raters' ratings, the least number of ratings an item
needs, and how a question names its measure.

``aggregation`` applies the rules and ``outcomes`` compares the systems by them; the plan's
pages and services read these terms only. Pure Python, without numpy: a page that shows or
sets the plan loads no statistics.
"""

from dataclasses import dataclass

MEAN = "mean"
MAJORITY = "majority"
ADJUDICATED = "adjudicated"
RULES = {
    MAJORITY: "Majority per item (ties stated as ties)",
    MEAN: "Mean over raters",
    ADJUDICATED: "Adjudicated answer, else the majority",
}
DEFAULT_MIN_RATINGS = 2


@dataclass(frozen=True)
class DimensionRole:
    """What a dimension can be compared on: points (a mean score), a yes/no outcome
    (McNemar), or a preference between the pair (a win rate)."""

    key: str
    name: str
    scored: bool = False
    binary: bool = False
    preference: bool = False
    max_points: int = 0
    # Values analysed apart from the main comparison, as (value, label): "partly correct".
    apart: tuple[tuple[float, str], ...] = ()

    @property
    def aggregated(self) -> bool:
        """Whether the analysis labels its items (and so takes an aggregation rule)."""
        return self.scored or self.binary or self.preference or bool(self.apart)

    @property
    def rules(self) -> tuple[str, ...]:
        """The aggregation rules that fit it, the default first: a score's mean (the rule of
        the analysis before rules could be chosen); for a label (a preference, a yes/no
        outcome, a category) the adjudicated answer where one exists, else the majority
        (protocol 9 and 11; without adjudications it is the majority). A category has no
        mean; a yes/no outcome's would be its majority."""
        if self.scored:
            return (MEAN, MAJORITY, ADJUDICATED)
        if self.preference:
            return (ADJUDICATED, MAJORITY, MEAN)
        return (ADJUDICATED, MAJORITY) if self.aggregated else ()


# How a question names its measure (the analysis plan stores one): the total score, or a
# dimension by its key. A dimension may be keyed "total" too: the prefix keeps them apart.
TOTAL_MEASURE = "total"


def dimension_measure(key: str) -> str:
    return f"dimension:{key}"


def has_score(roles: list[DimensionRole]) -> bool:
    """Whether a rubric gives points, and so a total score to compare: a preference-only
    study's total is 0 for every response, a measure of nothing."""
    return any(role.max_points > 0 for role in roles)


def rule_for(rules: dict, role: DimensionRole) -> str:
    """The rule of ``rules`` (the analysis plan's, by dimension key) for a dimension that
    takes one (``role.aggregated``), or its default when none fits."""
    rule = rules.get(role.key, "")
    return rule if rule in role.rules else role.rules[0]


def default_min_ratings(raters_per_item: int | None) -> int:
    """The protocol's minimum of 2 valid ratings per item, or fewer when the design plans
    fewer raters per item (a study of one rater per item would otherwise exclude every
    item); ``None``: every rater rates every case, so 2."""
    if raters_per_item is None:
        return DEFAULT_MIN_RATINGS
    return max(1, min(DEFAULT_MIN_RATINGS, raters_per_item))
