"""The rubric as the rating form and its help show it, and each dimension's adjudication rule."""

from ..models import (
    AdjudicationRule,
    Study,
)


def rubric_for_display(*, rubric) -> list[dict]:
    """Everything the rating form and its help need about each dimension."""
    dimensions = []
    for dimension in rubric.dimensions.all():
        scoring = dimension.scoring()
        # What every dimension may carry; the kind's own settings come from its class.
        config = dimension.config
        dimensions.append(
            {
                "key": dimension.key,
                "name": dimension.name,
                "kind": dimension.kind,
                "scope": scoring.scope,
                "min": scoring.min_points,
                "max": scoring.max_points,
                "measure": config.get("measure", ""),
                "example": config.get("example", ""),
                "edge_cases": config.get("edge_cases", ""),
                # unit, item, half_weight_hint, bands, band_labels, criteria.
                **scoring.rating_help(),
                # Scales, categories and pairwise labels: [{"value", "label", "anchor"}].
                "options": scoring.display_options(),
                "counts_in_total": scoring.max_points > 0,
                "required": scoring.required,
                "lists_items": scoring.lists_items,
                "level": dimension.level,
            }
        )
    return dimensions


def adjudication_rules_table(*, study: Study) -> list[dict]:
    """Each dimension of the rubric in order with its adjudication rule ("never" when it has
    none), what its kind allows (the values a rule may name, whether a tolerance applies)
    and 7.3's switch, if taken."""
    rules = {rule.dimension_key: rule for rule in study.adjudication_rules.all()}
    rows = []
    for dimension in study.rubric.dimensions.order_by("position"):
        scoring = dimension.scoring()
        rule = rules.get(dimension.key)
        rows.append(
            {
                "key": dimension.key,
                "name": dimension.name,
                "kind_label": scoring.label,
                "scope": scoring.scope,
                "trigger": rule.trigger if rule else AdjudicationRule.Trigger.NEVER,
                "values": list(rule.values) if rule else [],
                "tolerance": rule.tolerance if rule else 0,
                "choices": [
                    {"value": value, "label": label}
                    for value, label in scoring.adjudication_values()
                ],
                "spread": scoring.adjudication_spread,
                "switched_at": rule.switched_at if rule else None,
                "switched_reason": rule.switched_reason if rule else "",
            }
        )
    return rows
