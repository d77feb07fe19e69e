"""Adjudication rules: when a dimension's ratings of a case go to an adjudicator.

Set per dimension before the study opens and frozen with the protocol (they are in the
protocol document, ``studies.protocol``). The one change allowed once the study is open is
7.3's action: a dimension that misses its agreement target is switched to "every
disagreement" by the lead, with a reason, and the switch is a deviation the report lists.
Each kind says which values a rule may name and whether a tolerance applies
(``adjudication_values``, ``adjudication_spread``).
"""

from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from core.user_input import reason_text
from studies.errors import StudySetupError
from studies.events import study_event_record
from studies.locks import study_lock
from studies.models import AdjudicationRule, Study, StudyEvent
from studies.signals import analysis_inputs_announce

Trigger = AdjudicationRule.Trigger
# A spread no scale in a rubric comes near (a counted dimension's points stay far below).
MAX_TOLERANCE = 1000
MAX_REASON = 2000


class AdjudicationRuleError(StudySetupError):
    """A rule cannot be saved or switched; the message says why."""


def _value_text(value) -> str:
    return f"“{value}”" if isinstance(value, str) else str(value)


def _checked_rule(dimension, raw: Any) -> dict:
    """One rule as saved: {"trigger", "values", "tolerance"}, or an error naming the dimension."""
    name = dimension.name
    if not isinstance(raw, dict):
        raise AdjudicationRuleError(f"{name}: give the rule as an object with a trigger.")
    unknown = sorted(set(raw) - {"dimension", "trigger", "values", "tolerance"})
    if unknown:
        raise AdjudicationRuleError(f"{name}: unknown field {', '.join(unknown)}.")
    trigger = raw.get("trigger", Trigger.NEVER)
    if trigger not in Trigger.values:
        raise AdjudicationRuleError(f"{name}: the trigger is one of {', '.join(Trigger.values)}.")
    scoring = dimension.scoring()
    values = raw.get("values") or []
    tolerance = raw.get("tolerance") or 0
    if not isinstance(values, list):
        raise AdjudicationRuleError(f"{name}: give the values as a list.")
    if not isinstance(tolerance, int) or isinstance(tolerance, bool):
        raise AdjudicationRuleError(f"{name}: the tolerance is a whole number of points.")
    if trigger == Trigger.VALUES:
        values = _checked_values(name, scoring, values)
    elif values:
        raise AdjudicationRuleError(f"{name}: values are chosen only for “any rating in values”.")
    if trigger == Trigger.DISAGREEMENT and scoring.adjudication_spread:
        if not 0 <= tolerance <= MAX_TOLERANCE:
            raise AdjudicationRuleError(
                f"{name}: the tolerance is a whole number of points from 0 to {MAX_TOLERANCE}."
            )
    elif tolerance:
        raise AdjudicationRuleError(
            f"{name}: a tolerance applies only to “any disagreement” on a scale or points."
        )
    return {"trigger": trigger, "values": values, "tolerance": tolerance}


def _checked_values(name: str, scoring, values: list) -> list:
    """The named values of a "values" rule, each one of the kind's, in the kind's order."""
    allowed = [value for value, _ in scoring.adjudication_values()]
    if not allowed:
        raise AdjudicationRuleError(
            f"{name}: this kind of dimension has no named values; use “any disagreement”."
        )
    if not values:
        raise AdjudicationRuleError(f"{name}: choose at least one value that triggers.")
    for value in values:
        # Exactly one of the kind's stored values (True is not the scale's 1, "2" not 2).
        if not any(type(a) is type(value) and a == value for a in allowed):
            raise AdjudicationRuleError(
                f"{name}: {_value_text(value)} is not one of its values "
                f"({', '.join(_value_text(a) for a in allowed)})."
            )
    # Stored in the kind's order, so that the same choice is always the same rule.
    return [a for a in allowed if any(type(a) is type(v) and a == v for v in values)]


@transaction.atomic
def adjudication_rules_set(
    *, study: Study, actor: User | None, rules: list
) -> list[AdjudicationRule]:
    """Replace the study's adjudication rules: [{"dimension", "trigger", "values",
    "tolerance"}], at most one per dimension; a dimension left out is never adjudicated
    automatically. All or nothing; refused once the study is open."""
    if not isinstance(rules, list):
        raise AdjudicationRuleError("Give the rules as a list, one per dimension.")
    study = study_lock(study.pk, exclusive=True)
    if study.is_frozen:
        raise AdjudicationRuleError(
            "The study is open: its adjudication rules are part of the frozen protocol. "
            "A dimension that misses its agreement target can be switched to every "
            "disagreement from the agreement page."
        )
    dimensions = {d.key: d for d in study.rubric.dimensions.all()}
    wanted: dict[str, dict] = {}
    for raw in rules:
        key = raw.get("dimension") if isinstance(raw, dict) else None
        if not isinstance(key, str) or key not in dimensions:
            raise AdjudicationRuleError(
                f"No dimension {_value_text(key)} in the rubric; use one of "
                f"{', '.join(dimensions) or 'its dimensions'}."
            )
        if key in wanted:
            raise AdjudicationRuleError(f"{dimensions[key].name}: give one rule per dimension.")
        wanted[key] = _checked_rule(dimensions[key], raw)
    saved = {rule.dimension_key: rule for rule in study.adjudication_rules.all()}
    before = {key: _as_dict(rule) for key, rule in saved.items()}
    # A rule of "never" is no row: old studies and studies without rules stay alike.
    kept = {key: rule for key, rule in wanted.items() if rule["trigger"] != Trigger.NEVER}
    study.adjudication_rules.exclude(dimension_key__in=kept).delete()
    result = []
    for key, rule in kept.items():
        row, _ = AdjudicationRule.objects.update_or_create(
            study=study, dimension_key=key, defaults=rule
        )
        result.append(row)
    after = {key: rule for key, rule in kept.items()}
    if after != {key: value for key, value in before.items() if key in dimensions}:
        study_event_record(
            study=study, actor=actor, kind=StudyEvent.Kind.ADJUDICATION_RULES_SET, rules=after
        )
        # A pilot's ratings are already in: the worker's next run fills the queue by them.
        analysis_inputs_announce(study_id=study.pk, reason="adjudication rules")
    return result


def _as_dict(rule: AdjudicationRule) -> dict:
    return {"trigger": rule.trigger, "values": rule.values, "tolerance": rule.tolerance}


@transaction.atomic
def adjudication_rule_switch(
    *, study: Study, actor: User | None, dimension_key: str, reason: str
) -> AdjudicationRule:
    """7.3's action: adjudicate every disagreement of a dimension from now on, whatever its
    rule, recorded with the reason as a deviation from the protocol. Only once the study
    is open (before, change the rule itself); the next queue refresh applies it.

    Whether the dimension missed its agreement target is the caller's to check (the
    agreement app's ``adjudication_switch_for_missed_target``).
    """
    reason = reason_text(
        reason,
        limit=MAX_REASON,
        missing="Give the reason; the report lists it with the deviation.",
        error=AdjudicationRuleError,
    )
    study = study_lock(study.pk, exclusive=True)
    if not study.is_frozen:
        raise AdjudicationRuleError(
            "The study is not open yet: change the dimension's adjudication rule instead."
        )
    if study.is_unblinded:
        raise AdjudicationRuleError(
            "The study is unblinded; its adjudication can no longer change."
        )
    dimension = study.rubric.dimensions.filter(key=dimension_key).first()
    if dimension is None:
        raise AdjudicationRuleError("The rubric has no such dimension.")
    rule, _ = AdjudicationRule.objects.select_for_update(of=("self",)).get_or_create(
        study=study, dimension_key=dimension.key
    )
    if rule.switched_at is not None:
        raise AdjudicationRuleError(
            f"{dimension.name}: every disagreement is adjudicated already (switched "
            f"{rule.switched_at:%Y-%m-%d})."
        )
    rule.switched_at = timezone.now()
    rule.switched_by = actor if getattr(actor, "pk", None) else None
    rule.switched_reason = reason
    rule.save(update_fields=["switched_at", "switched_by", "switched_reason"])
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.ADJUDICATION_SWITCHED,
        reason=f"{dimension.name}: {reason}",
        dimension=dimension.key,
    )
    # The queue is filled by the worker's run, which a new rating would otherwise be the
    # first to start (and in a closed study none comes).
    analysis_inputs_announce(study_id=study.pk, reason="adjudication switched")
    return rule
