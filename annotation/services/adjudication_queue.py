"""The adjudication queue: which cases an adjudicator resolves, and why (protocol 5.3, 7.3).

The worker refreshes the queue with the other quality checks after each submission
(``agreement.services.recompute``); a lead sends a case by hand with a reason. Each kind
says whether its answers trigger (``in_named_values``, ``disagree`` in
``studies.rubric``); nothing here reads an answer.

Locks: only the ``Adjudication`` rows written, in id order, and last in the order of
``studies.locks`` (after the assignments). A refresh and a manual send of the same case
insert the row with ``ON CONFLICT DO NOTHING`` and then merge into the locked row, so
whichever comes second keeps the other's triggers.
"""

from collections import defaultdict
from collections.abc import Iterable

from django.contrib.auth.models import User
from django.db import transaction

from annotation.models import Adjudication, Assignment, Rating
from annotation.selectors.skips import HOLDS_A_PLACE
from core.errors import ApplicationError
from core.user_input import reason_text
from studies.bulk_rows import batches
from studies.events import study_event_record
from studies.models import AdjudicationRule, Membership, Study, StudyEvent, TestCase

Trigger = Adjudication.Trigger
# Cases read and written at a time by a refresh.
CHUNK = 500
MAX_REASON = 2000


class AdjudicationSendError(ApplicationError):
    """A case cannot be sent to adjudication; the message says why."""


def expected_ratings(*, study: Study) -> int:
    """The ratings a sample case has once every rater the design gives it has submitted:
    the study's raters per case, or every active rater when each rates every case."""
    return study.raters_per_item or (
        study.memberships.filter(
            role=Membership.Role.RATER, status=Membership.Status.ACTIVE
        ).count()
    )


def _rules(study: Study) -> list[tuple[str, object, AdjudicationRule]]:
    """(dimension key, kind, rule) for each dimension whose rule can trigger, in rubric
    order; a rule of a dimension no longer in the rubric is ignored."""
    rules = {rule.dimension_key: rule for rule in study.adjudication_rules.all()}
    if not rules:
        return []  # most studies: no second read
    active = []
    for dimension in study.rubric.dimensions.order_by("position"):
        rule = rules.get(dimension.key)
        if rule and (rule.trigger != AdjudicationRule.Trigger.NEVER or rule.switched_at):
            active.append((dimension.key, dimension.scoring(), rule))
    return active


def _case_triggers(rules, answers: dict) -> dict[str, list[str]]:
    """{dimension key: [trigger, ...]} for one case; ``answers`` holds, per dimension key
    and unit (a response's key label, or "" for a per-case dimension), the raters'
    (stored value, flipped)."""
    triggers: dict[str, list[str]] = {}
    for key, scoring, rule in rules:
        found = []
        units = answers.get(key, {}).values()
        if rule.trigger == AdjudicationRule.Trigger.VALUES and any(
            scoring.in_named_values(unit, values=rule.values) for unit in units
        ):
            found.append(Trigger.VALUES)
        if rule.trigger == AdjudicationRule.Trigger.DISAGREEMENT and any(
            scoring.disagree(unit, tolerance=rule.tolerance) for unit in units
        ):
            found.append(Trigger.DISAGREEMENT)
        # 7.3's switch: every disagreement, with no tolerance.
        if rule.switched_at and any(scoring.disagree(unit, tolerance=0) for unit in units):
            found.append(Trigger.TARGET_MISSED)
        if found:
            triggers[key] = [str(trigger) for trigger in found]
    return triggers


def _submitted(study: Study, case_ids: list[int]):
    """The counted submissions of these cases: raters' (excluded raters' left out, as the
    analysis leaves them out)."""
    return Assignment.objects.filter(
        test_case_id__in=case_ids,
        status=Assignment.Status.SUBMITTED,
        rater__role=Membership.Role.RATER,
    ).exclude(rater__status=Membership.Status.EXCLUDED)


def _answers(study: Study, rules, case_ids: list[int]) -> tuple[dict, dict]:
    """Per case: the number of counted submissions, and {key: {unit: [(value, flipped)]}}."""
    keys = {key for key, _, _ in rules}
    case_keys = {key for key, scoring, _ in rules if scoring.scope == "case"}
    counts: dict[int, int] = defaultdict(int)
    answers: dict[int, dict] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    assignments = _submitted(study, case_ids)
    flipped_of = {}
    for pk, case_id, flipped, case_scores in assignments.values_list(
        "pk", "test_case_id", "flipped", "case_scores"
    ).order_by("pk"):
        counts[case_id] += 1
        flipped_of[pk] = (case_id, flipped)
        for key in case_keys:
            answers[case_id][key][""].append(((case_scores or {}).get(key), flipped))
    if keys - case_keys:
        ratings = Rating.objects.filter(assignment__in=assignments).order_by("pk")
        for assignment_id, label, scores in ratings.values_list("assignment_id", "label", "scores"):
            case_id, flipped = flipped_of[assignment_id]
            for key in keys - case_keys:
                answers[case_id][key][label].append(((scores or {}).get(key), flipped))
    return counts, answers


def adjudication_triggered(*, study: Study, case_ids: list[int]) -> set[int]:
    """The cases among ``case_ids`` whose submitted ratings so far trigger a dimension's
    rule (or 7.3's switch), however many they have: the adaptive design adds a rater to
    them (``annotation.services.adaptive``)."""
    rules = _rules(study)
    if not rules or not case_ids:
        return set()
    _, answers = _answers(study, rules, case_ids)
    return {case_id for case_id in case_ids if _case_triggers(rules, answers[case_id])}


def adjudication_queue_refresh(*, study: Study) -> int:
    """Bring the study's adjudication queue up to date; returns the cases added or changed.

    Every sample case (gold items and attention checks are not adjudicated) that has all
    its ratings (``expected_ratings``) is checked against each dimension's rule, 7.3's
    switch included, and its ``Adjudication`` created or updated (waiting) with the
    triggers found. Idempotent: a second run changes nothing.

    A resolved case (done, or cannot be resolved) is never reopened or changed, even when
    its ratings changed after it was resolved: the resolution stands, as it was made on
    the ratings the adjudicator saw. A waiting case whose ratings no longer trigger leaves
    the queue, unless it was sent by hand or an adjudicator has begun it (its draft kept);
    a case sent by hand keeps its manual trigger whatever the ratings say. Once the study
    is unblinded, nothing changes.
    """
    if study.is_unblinded:
        return 0  # the analysis is final: the queue no longer changes
    rules = _rules(study)
    waiting = Adjudication.objects.filter(
        test_case__study=study, status=Adjudication.Status.WAITING
    )
    if not rules and not waiting.exists():
        return 0  # nothing to add and nothing to take out: most studies
    k = expected_ratings(study=study)
    if not k:
        return 0  # no active rater to wait for: leave the queue as it is
    cases = (
        TestCase.objects.filter(study=study, purpose=TestCase.Purpose.SAMPLE)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    # The adaptive design: a case waiting for an extra rater's rating is left as it is, so
    # that it joins the queue with all its ratings (the worker adds raters first).
    still_rating = _cases_still_rating(study) if study.adaptive_raters else set()
    changed = 0
    for chunk in batches(cases.iterator(chunk_size=CHUNK), CHUNK):
        chunk = [case_id for case_id in chunk if case_id not in still_rating]
        if rules:
            counts, answers = _answers(study, rules, chunk)
            wanted = {
                case_id: _case_triggers(rules, answers[case_id])
                for case_id in chunk
                if counts.get(case_id, 0) >= k
            }
        else:
            wanted = {}
        changed += _write(chunk, {c: t for c, t in wanted.items() if t})
    return changed


def _cases_still_rating(study: Study) -> set[int]:
    """The sample cases with a rater holding a place who has not submitted yet."""
    return set(
        Assignment.objects.filter(
            HOLDS_A_PLACE,
            test_case__study=study,
            status__in=[Assignment.Status.TODO, Assignment.Status.DRAFT],
        ).values_list("test_case_id", flat=True)
    )


def _merged(existing: dict, computed: dict) -> dict:
    """The computed triggers, with the manual ones the case already had."""
    merged = {key: list(value) for key, value in computed.items()}
    for key, triggers in (existing or {}).items():
        if Trigger.MANUAL in triggers:
            merged[key] = [*merged.get(key, []), str(Trigger.MANUAL)]
    return merged


def _outcome(row: Adjudication, computed: dict) -> dict | None:
    """The triggers a waiting row should have now; None when it leaves the queue."""
    triggers = _merged(row.triggers, computed)
    if not triggers and not row.draft and row.adjudicator_id is None:
        return None
    return triggers or row.triggers


@transaction.atomic
def _write(case_ids: list[int], wanted: dict[int, dict]) -> int:
    """Create and update the queue's rows for these cases; returns how many changed.

    Only the rows that change are locked (in id order), and read again under the lock.
    """
    if wanted:
        Adjudication.objects.bulk_create(
            [Adjudication(test_case_id=case_id, triggers={}) for case_id in sorted(wanted)],
            ignore_conflicts=True,
        )
    waiting = Adjudication.objects.filter(
        test_case_id__in=case_ids, status=Adjudication.Status.WAITING
    )
    stale = [
        row.pk
        for row in waiting.only("pk", "test_case", "triggers", "draft", "adjudicator")
        if _outcome(row, wanted.get(row.test_case_id, {})) != row.triggers
    ]
    if not stale:
        return 0
    rows = (
        Adjudication.objects.select_for_update(of=("self",), no_key=True)
        .filter(pk__in=stale, status=Adjudication.Status.WAITING)
        .order_by("pk")
    )
    changed = 0
    for row in rows:
        triggers = _outcome(row, wanted.get(row.test_case_id, {}))
        if triggers is None:
            row.delete()
            changed += 1
        elif triggers != row.triggers:
            row.triggers = triggers
            row.save(update_fields=["triggers", "updated_at"])
            changed += 1
    return changed


def _clean_reason(reason: str) -> str:
    return reason_text(
        reason,
        limit=MAX_REASON,
        missing="Give the reason; the adjudicator and the report see it.",
        error=AdjudicationSendError,
    )


@transaction.atomic
def adjudication_send(
    *, study: Study, actor: User | None, test_case: TestCase, reason: str
) -> Adjudication:
    """A lead sends a case to adjudication by hand, with a reason (trigger "manual" on
    every dimension: the whole case is to be decided). It joins the queue as waiting, or
    keeps its place there with the manual trigger added; a resolved case is refused."""
    reason = _clean_reason(reason)
    if test_case.study_id != study.pk or test_case.purpose != TestCase.Purpose.SAMPLE:
        raise AdjudicationSendError("Only the study's sample cases are adjudicated.")
    if study.is_draft:
        raise AdjudicationSendError("The study has not started; there is nothing to adjudicate.")
    if study.is_unblinded:
        raise AdjudicationSendError(
            "The study is unblinded; its adjudication can no longer change."
        )
    if not _submitted(study, [test_case.pk]).exists():
        raise AdjudicationSendError(f"{test_case.case_id} has no submitted rating yet.")
    Adjudication.objects.bulk_create(
        [Adjudication(test_case=test_case, triggers={})], ignore_conflicts=True
    )
    row = Adjudication.objects.select_for_update(of=("self",), no_key=True).get(test_case=test_case)
    if row.status != Adjudication.Status.WAITING:
        status = row.get_status_display().lower()
        raise AdjudicationSendError(f"{test_case.case_id} has been adjudicated already ({status}).")
    if row.sent_by_id is not None or row.sent_reason:
        raise AdjudicationSendError(f"{test_case.case_id} was sent to adjudication already.")
    keys = _dimension_keys(study)
    triggers = {key: list(value) for key, value in row.triggers.items()}
    for key in keys:
        if Trigger.MANUAL not in triggers.get(key, []):
            triggers[key] = [*triggers.get(key, []), str(Trigger.MANUAL)]
    row.triggers = triggers
    row.sent_reason = reason
    row.sent_by = actor if getattr(actor, "pk", None) else None
    row.save(update_fields=["triggers", "sent_reason", "sent_by", "updated_at"])
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.ADJUDICATION_SENT,
        reason=reason,
        case_id=test_case.case_id,
    )
    return row


def _dimension_keys(study: Study) -> Iterable[str]:
    return study.rubric.dimensions.order_by("position").values_list("key", flat=True)
