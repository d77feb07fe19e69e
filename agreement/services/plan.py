"""The analysis plan a coordinator sets: the strata's real shares (all-or-nothing), the
measure of the primary question, and each question's aggregation rule with the minimum of
valid ratings per item."""

import math

from django.contrib.auth.models import User
from django.db import transaction

from agreement.analysis.roles import (
    RULES,
    TOTAL_MEASURE,
    default_min_ratings,
    dimension_measure,
    has_score,
)
from agreement.models import AnalysisPlan
from agreement.selectors import dimension_role, study_min_ratings
from studies.errors import ApplicationError
from studies.events import study_event_record
from studies.locks import study_lock
from studies.models import Study, StudyEvent
from studies.signals import analysis_inputs_announce

MAX_TEXT = 5_000
MAX_STRATA = 100
NO_STRATUM = "(none)"  # how the cases without a stratum are named here
NO_PRIMARY = "none named (every question is corrected with Holm's method)"


class AnalysisPlanError(ApplicationError):
    """The shares cannot be used; the message says why."""


def stratum_shares_parse(*, text: str, strata: list[str]) -> dict[str, float]:
    """ "stratum: share" per line (a percentage, e.g. 70, or a fraction, 0.7) -> {stratum:
    fraction}. Every stratum of the sample once, shares summing to 100%; empty = none."""
    if len(text) > MAX_TEXT:
        raise AnalysisPlanError(f"Give at most {MAX_TEXT} characters.")
    lines = [line.strip() for line in text.replace("\x00", "").splitlines() if line.strip()]
    if not lines:
        return {}
    if len(lines) > MAX_STRATA:
        raise AnalysisPlanError(f"Give at most {MAX_STRATA} strata.")
    shares: dict[str, float] = {}
    for number, line in enumerate(lines, start=1):
        name, sep, value = line.rpartition(":")
        name = name.strip()
        name = "" if name == NO_STRATUM else name
        if not sep or (not name and NO_STRATUM not in line):
            raise AnalysisPlanError(f"Line {number}: write 'stratum: share', e.g. 'policy: 70'.")
        try:
            share = float(value.strip().rstrip("%"))
        except ValueError:
            raise AnalysisPlanError(
                f"Line {number}: {value.strip()[:20]!r} is not a number."
            ) from None
        if not math.isfinite(share) or share <= 0 or share > 100:
            raise AnalysisPlanError(f"Line {number}: a share lies above 0 and at most 100%.")
        if name not in strata:
            raise AnalysisPlanError(f"Line {number}: the sample has no stratum {name[:50]!r}.")
        if name in shares:
            raise AnalysisPlanError(f"Line {number}: {name[:50]!r} is given twice.")
        shares[name] = share
    missing = [s or NO_STRATUM for s in strata if s not in shares]
    if missing:
        raise AnalysisPlanError(
            f"Give a share for every stratum; missing: {', '.join(missing)[:200]}."
        )
    total = sum(shares.values())
    scale = 100.0 if total > 1.0 + 1e-9 else 1.0
    if abs(total / scale - 1.0) > 0.005:
        raise AnalysisPlanError(f"The shares add up to {total:g}; they must add up to 100%.")
    return {name: share / total for name, share in shares.items()}


@transaction.atomic
def stratum_shares_set(*, study: Study, actor: User, text: str) -> AnalysisPlan:
    """Store the strata's shares, record it in the study's history and ask for a recompute."""
    strata = sorted(set(study.test_cases.in_sample().values_list("stratum", flat=True)))
    shares = stratum_shares_parse(text=text, strata=strata)
    return _plan_update(
        study=study,
        actor=actor,
        field="stratum_shares",
        value=shares,
        reason="Stratum shares for the overall estimate"
        + (": " + ", ".join(f"{k} {v:.1%}" for k, v in shares.items()) if shares else " removed"),
    )


def _plan_update(*, study: Study, actor, field: str, value, reason: str) -> AnalysisPlan:
    """Set one decision of the study's analysis plan; a change is recorded in the study's
    history (``reason``; listed as a deviation once the study is open) and recomputed."""
    plan, _ = AnalysisPlan.objects.select_for_update().get_or_create(study=study)
    if getattr(plan, field) == value:
        return plan
    setattr(plan, field, value)
    plan.save(update_fields=[field, "updated_at"])
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.SETTINGS_CHANGED,
        reason=reason,
        analysis_plan={field: value},
    )
    analysis_inputs_announce(study_id=study.pk, reason=field.replace("_", " "))
    return plan


def stratum_shares_text(*, study: Study) -> str:
    plan = AnalysisPlan.objects.filter(study=study).first()
    shares = plan.stratum_shares if plan else {}
    return "\n".join(f"{name or NO_STRATUM}: {100 * share:g}" for name, share in shares.items())


def primary_measure_choices(*, study: Study) -> list[tuple[str, str]]:
    """The measures a primary question can be on, as (key, what its question tests), in the
    order the report asks them (``outcomes._questions``): each preference's win rate, the
    total score (when the rubric gives points), each scored dimension, each yes/no
    dimension."""
    roles = [dimension_role(d) for d in study.rubric.dimensions.order_by("position")]
    choices = [
        (dimension_measure(r.key), f"{r.name}: win rate (exact binomial test)")
        for r in roles
        if r.preference
    ]
    if has_score(roles):
        choices.append(
            (TOTAL_MEASURE, "Total score: paired difference (Wilcoxon signed-rank test)")
        )
    choices += [
        (dimension_measure(r.key), f"{r.name}: paired difference (Wilcoxon signed-rank test)")
        for r in roles
        if r.scored
    ]
    choices += [
        (dimension_measure(r.key), f"{r.name}: yes/no outcome (McNemar's exact test)")
        for r in roles
        if r.binary and not r.scored
    ]
    return choices


def win_rate_measures(*, study: Study) -> set[str]:
    """The measures whose question is a win rate (a preference's): the ones the
    anytime-valid monitor can follow (``services.monitor``)."""
    roles = [dimension_role(d) for d in study.rubric.dimensions.order_by("position")]
    return {dimension_measure(r.key) for r in roles if r.preference}


def primary_measure_get(*, study: Study) -> str:
    """The measure the analysis plan names for the primary question; "" = none named."""
    plan = AnalysisPlan.objects.filter(study=study).values_list("primary_measure", flat=True)
    return plan.first() or ""


@transaction.atomic
def primary_measure_set(*, study: Study, actor: User, measure: str) -> AnalysisPlan:
    """Name the primary question's measure ("" = none: every question corrected), record it
    in the study's history and ask for a recompute. Refused once the study is unblinded:
    the results are known by then, and a primary question chosen after them is not one."""
    study = study_lock(study.pk)  # shared: unblinding waits for this, raters do not
    if study.is_unblinded:
        raise AnalysisPlanError(
            "The study is unblinded: its results are known, so the primary question can no "
            "longer change."
        )
    choices = dict(primary_measure_choices(study=study))
    if measure and measure not in choices:
        raise AnalysisPlanError("Choose one of the measures listed for the primary question.")
    _refuse_unless_monitor_follows(study=study, measure=measure)
    return _plan_update(
        study=study,
        actor=actor,
        field="primary_measure",
        value=measure,
        reason=f"Primary question: {choices[measure] if measure else NO_PRIMARY}",
    )


def _refuse_unless_monitor_follows(*, study: Study, measure: str) -> None:
    """With monitored collection, the primary question stays a win rate, and once the study
    is open it is frozen with the monitor (it is part of the protocol's fingerprint)."""
    plan = AnalysisPlan.objects.filter(study=study, monitoring=True).first()
    if plan is None or measure == plan.primary_measure:
        return
    if study.is_frozen:
        raise AnalysisPlanError(
            "The primary question is monitored, and the monitor is frozen with the protocol: "
            "its question can no longer change."
        )
    if measure not in win_rate_measures(study=study):
        raise AnalysisPlanError(
            "The primary question is monitored, which needs a win rate: turn monitoring off "
            "first, or choose a win rate."
        )


def primary_measure_named(*, study: Study) -> dict | None:
    """When the primary question's measure was last named (or set back to the rule), and
    whether that was before the study opened: what the report says of its pre-registration.
    None if it never was."""
    event = (
        study.events.filter(
            kind=StudyEvent.Kind.SETTINGS_CHANGED, detail__analysis_plan__has_key="primary_measure"
        )
        .order_by("-created_at", "-pk")
        .first()
    )
    if event is None:
        return None
    opened = study.opened_at
    return {
        "at": event.created_at.isoformat(),
        "measure": event.detail["analysis_plan"]["primary_measure"],
        "before_opening": opened is None or event.created_at < opened,
    }


MAX_MIN_RATINGS = 50


def min_ratings_highest(*, study: Study) -> int:
    """The highest minimum of valid ratings a plan may ask: the raters per item (a higher
    one would exclude every item), or a bound when every rater rates every case."""
    return max(1, study.raters_per_item or MAX_MIN_RATINGS)


def aggregation_choices(*, study: Study) -> list[dict]:
    """Each question that labels its items, in the rubric's order: its dimension's key and
    name, the rules that fit it ((rule, name), the default first) and the rule the plan
    names (the default unless set)."""
    plan = AnalysisPlan.objects.filter(study=study).values_list("aggregation", flat=True)
    stored = plan.first() or {}
    rows = []
    for dimension in study.rubric.dimensions.order_by("position"):
        role = dimension_role(dimension)
        if not role.rules:
            continue
        rule = stored.get(role.key)
        rows.append(
            {
                "key": role.key,
                "name": role.name,
                "rules": [(r, RULES[r]) for r in role.rules],
                "default": role.rules[0],
                "rule": rule if rule in role.rules else role.rules[0],
                "apart": [label for _, label in role.apart],
            }
        )
    return rows


def aggregation_get(*, study: Study) -> dict:
    """The plan's aggregation: the rule per question and the minimum of valid ratings per
    item, whether it was set or is the default, and the default."""
    plan = AnalysisPlan.objects.filter(study=study).first()
    return {
        "rules": {row["key"]: row["rule"] for row in aggregation_choices(study=study)},
        "min_ratings": study_min_ratings(study=study, plan=plan),
        "min_ratings_set": bool(plan and plan.min_ratings),
        "min_ratings_default": default_min_ratings(study.raters_per_item),
        "min_ratings_highest": min_ratings_highest(study=study),
    }


@transaction.atomic
def aggregation_set(
    *, study: Study, actor: User, rules: dict[str, str], min_ratings: int | None
) -> AnalysisPlan:
    """Name each question's aggregation rule (a question left out keeps its default) and
    the minimum of valid ratings per item (None = the default), record each change in the
    study's history (a deviation once the study is open) and ask for a recompute. Refused
    once the study is unblinded, like the primary question: a rule chosen after the results
    are known is not a plan."""
    study = study_lock(study.pk)  # shared: unblinding waits for this, raters do not
    if study.is_unblinded:
        raise AnalysisPlanError(
            "The study is unblinded: its results are known, so the aggregation can no "
            "longer change."
        )
    choices = {row["key"]: row for row in aggregation_choices(study=study)}
    if not isinstance(rules, dict) or len(rules) > len(choices):
        raise AnalysisPlanError("Give one rule per question of the analysis.")
    chosen = {}
    for key, rule in rules.items():
        row = choices.get(key)
        if row is None:
            raise AnalysisPlanError(f"The rubric has no question {str(key)[:50]!r} to aggregate.")
        if rule not in dict(row["rules"]):
            raise AnalysisPlanError(f"{row['name']}: choose one of the rules listed.")
        if rule != row["default"]:
            chosen[key] = rule
    highest = min_ratings_highest(study=study)
    if min_ratings is not None and (
        isinstance(min_ratings, bool)
        or not isinstance(min_ratings, int)
        or not 1 <= min_ratings <= highest
    ):
        raise AnalysisPlanError(
            f"The minimum of valid ratings per item is a whole number from 1 to {highest} "
            "(the raters per item)."
        )
    named = ", ".join(
        f"{choices[key]['name']}: {RULES[rule].lower()}" for key, rule in chosen.items()
    )
    _plan_update(
        study=study,
        actor=actor,
        field="aggregation",
        value=chosen,
        reason="Aggregation per item: " + (named or "each question's default rule"),
    )
    default = default_min_ratings(study.raters_per_item)
    return _plan_update(
        study=study,
        actor=actor,
        field="min_ratings",
        value=min_ratings,
        reason="Minimum of valid ratings per item: "
        + (str(min_ratings) if min_ratings is not None else f"the default ({default})"),
    )


def plan_setting_named(*, study: Study, fields: tuple[str, ...]) -> dict | None:
    """When one of the analysis plan's ``fields`` last changed, and whether that was before
    the study opened (the report says so of its pre-registration); None if none ever did."""
    events = study.events.filter(kind=StudyEvent.Kind.SETTINGS_CHANGED)
    latest = None
    for name in fields:
        event = (
            events.filter(detail__analysis_plan__has_key=name)
            .order_by("-created_at", "-pk")
            .first()
        )
        if event is not None and (latest is None or event.created_at > latest.created_at):
            latest = event
    if latest is None:
        return None
    opened = study.opened_at
    return {
        "at": latest.created_at.isoformat(),
        "before_opening": opened is None or latest.created_at < opened,
    }
