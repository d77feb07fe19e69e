"""Writes for training examples, qualification tests and the coordinator's settings for them.

Answers are scored with the study's rubric exactly as ratings are, but they are never
ratings: nothing here writes a ``Rating``.
"""

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from annotation.models import OnboardingSettings, QualificationAttempt, TrainingAnswer, TrainingItem
from annotation.qualification import compare, is_blank, pass_rule
from annotation.selectors import onboarding_settings, qualification_next_item, training_items
from studies.errors import ApplicationError
from studies.locks import membership_lock
from studies.models import Membership, Study, StudyEvent
from studies.rubric import RubricValueError, score_form

from .participation import event_record

MAX_RESPONSES = 4


class TrainingError(ApplicationError):
    """The answer or item cannot be stored; the message says what to fix."""


def answer_score(*, study: Study, payload: dict, labels: list[str]) -> dict:
    """Score a form payload against the study rubric: {"responses": {...}, "case": {...}}."""
    try:
        scored, case = score_form(study.rubric.scoring_dimensions(), payload, labels=labels)
    except RubricValueError as error:
        raise TrainingError(str(error)) from error
    return {"responses": scored, "case": case}


def _labels(item: TrainingItem) -> list[str]:
    return [chr(ord("A") + index) for index in range(len(item.responses))]


@transaction.atomic
def onboarding_settings_save(*, study: Study, **values) -> OnboardingSettings:
    settings = onboarding_settings(study=study)
    if values.get("pass_percent") is not None and not 0 <= values["pass_percent"] <= 100:
        raise TrainingError("The pass mark is a percentage from 0 to 100.")
    if values.get("max_attempts") is not None and values["max_attempts"] < 1:
        raise TrainingError("Allow at least one attempt.")
    practice = values.get("practice_case")
    if practice is not None and practice.study_id != study.pk:
        raise TrainingError("The practice case must be one of this study's test cases.")
    for name, value in values.items():
        setattr(settings, name, value)
    settings.save()
    return settings


@transaction.atomic
def training_item_save(
    *,
    study: Study,
    item: TrainingItem | None = None,
    kind: str,
    title: str,
    prompt: str,
    responses: list[str],
    explanation: str = "",
) -> TrainingItem:
    """Create or edit an item. Changing the number of responses clears its answer key."""
    if kind not in TrainingItem.Kind.values:
        raise TrainingError("Unknown kind of item.")
    texts = [str(text).strip() for text in responses if str(text or "").strip()]
    # An item is rated as a test case is, so it has as many responses as the study's cases.
    systems = study.systems.count()
    if systems >= 2 and len(texts) != systems:
        raise TrainingError(
            f"Give all {systems} responses: every test case of this study has {systems}, and "
            "raters practise on an item that looks like one."
        )
    if not 2 <= len(texts) <= MAX_RESPONSES:
        raise TrainingError(
            f"Give between 2 and {MAX_RESPONSES} responses: raters compare the responses of "
            "every test case."
        )
    if not str(title).strip() or not str(prompt).strip():
        raise TrainingError("Give the item a title and a prompt.")
    if item is None:
        last = study.training_items.filter(kind=kind).aggregate(last=Max("position"))["last"]
        item = TrainingItem(study=study, kind=kind, position=(last or 0) + 1)
    elif len(texts) != len(item.responses):
        item.key = {}
    item.title = title.strip()
    item.prompt = prompt.strip()
    item.responses = texts
    # Only worked examples show an explanation (after the rater answers); a qualification
    # item never does, so it keeps none.
    kept = kind == TrainingItem.Kind.TRAINING
    item.explanation = str(explanation or "").strip() if kept else ""
    item.save()
    return item


@transaction.atomic
def training_item_key_save(*, item: TrainingItem, payload: dict) -> TrainingItem:
    item.key = answer_score(study=item.study, payload=payload, labels=_labels(item))
    item.save(update_fields=["key", "updated_at"])
    return item


def training_item_delete(*, item: TrainingItem) -> None:
    item.delete()


@transaction.atomic
def training_answer_submit(
    *, rater: Membership, item: TrainingItem, payload: dict
) -> TrainingAnswer:
    """Record the rater's answer to a worked example; answering again replaces it."""
    if item.kind != TrainingItem.Kind.TRAINING:
        raise TrainingError("This item is part of the qualification test.")
    answer = answer_score(study=rater.study, payload=payload, labels=_labels(item))
    record, _ = TrainingAnswer.objects.update_or_create(
        item=item,
        rater=rater,
        attempt=None,
        defaults={"answer": answer, "submitted_at": timezone.now()},
    )
    return record


@transaction.atomic
def qualification_attempt_start(*, rater: Membership) -> QualificationAttempt:
    """Open an attempt, or return the one already open."""
    locked = membership_lock(rater.pk, exclusive=True)
    attempts = list(locked.qualification_attempts.all())
    open_attempt = next((a for a in attempts if a.finished_at is None), None)
    if open_attempt is not None:
        return open_attempt
    if any(a.passed for a in attempts):
        raise TrainingError("You have already passed the qualification test.")
    if len(attempts) >= onboarding_settings(study=locked.study).max_attempts:
        raise TrainingError("You have used every attempt at the qualification test.")
    return QualificationAttempt.objects.create(
        rater=locked, number=len(attempts) + 1, started_at=timezone.now()
    )


@transaction.atomic
def qualification_answer_submit(
    *, rater: Membership, attempt: QualificationAttempt, item: TrainingItem, payload: dict
) -> QualificationAttempt:
    """Record one answer of an open attempt; the last answer scores the attempt."""
    attempt = QualificationAttempt.objects.select_for_update(of=("self",), no_key=True).get(
        pk=attempt.pk, rater=rater
    )
    if attempt.finished_at is not None:
        raise TrainingError("This attempt is already finished.")
    if item.kind != TrainingItem.Kind.QUALIFICATION or item.study_id != rater.study_id:
        raise TrainingError("This item is not part of the qualification test.")
    answer = answer_score(study=rater.study, payload=payload, labels=_labels(item))
    # A repeated post of the same item (a double click) keeps the first answer.
    TrainingAnswer.objects.get_or_create(
        item=item,
        attempt=attempt,
        defaults={"rater": rater, "answer": answer, "submitted_at": timezone.now()},
    )
    if qualification_next_item(rater=rater, attempt=attempt) is None:
        _attempt_score(rater=rater, attempt=attempt)
    return attempt


def _attempt_score(*, rater: Membership, attempt: QualificationAttempt) -> None:
    settings = onboarding_settings(study=rater.study)
    dimensions = rater.study.rubric.scoring_dimensions()
    items = {item.pk: item for item in training_items(study=rater.study, kind="qualification")}
    comparisons = []
    answers = [answer for answer in attempt.answers.all() if answer.item_id in items]
    for answer in answers:
        item = items[answer.item_id]
        comparisons += compare(
            item=item.title,
            answer=answer.answer,
            key=item.key,
            dimensions=dimensions,
            tolerance=settings.tolerance,
        )
    outcome = pass_rule(
        comparisons=comparisons,
        pass_percent=settings.pass_percent,
        blank=all(is_blank(answer.answer, dimensions) for answer in answers),
    )
    percent, passed = outcome.percent, outcome.passed
    names = {d.key: d.name for d in dimensions}
    attempt.finished_at = timezone.now()
    attempt.percent = percent
    attempt.passed = passed
    attempt.detail = {
        "pass_percent": settings.pass_percent,
        "tolerance": settings.tolerance,
        "rule": "per_dimension",
        "blank": outcome.blank,
        "dimensions": [
            {"key": key, "name": names.get(key, key), **values}
            for key, values in outcome.dimensions.items()
        ],
        "compared": len(comparisons),
        "within": sum(1 for c in comparisons if c.within),
        "outside": [
            {"item": c.item, "label": c.label, "dimension": c.dimension,
             "points": c.points, "key_points": c.key_points}
            for c in comparisons if not c.within
        ],
    }  # fmt: skip
    attempt.save()
    event_record(
        membership=rater,
        kind=StudyEvent.Kind.QUALIFICATION_PASSED
        if passed
        else StudyEvent.Kind.QUALIFICATION_FAILED,
        detail={"attempt": attempt.number, "percent": str(percent)},
    )
