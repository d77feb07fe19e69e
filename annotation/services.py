"""Writes for rating: assignments, autosaved drafts and submitted ratings."""

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from agreement.services import agreement_request_recompute
from studies.blinding import seeded_permutation
from studies.models import Membership, Study
from studies.rubric import RubricValueError, score_form, total_points

from .models import Assignment, Rating, RatingRevision
from .selectors import blinded_responses

MAX_NOTES_LENGTH = 5000
MAX_ACTIVE_SECONDS_PER_SAVE = 6 * 60 * 60


class StaleVersionError(Exception):
    """The save was based on an older version than the one stored."""


class RatingClosedError(Exception):
    """The study does not accept ratings now."""


class RatingInvalidError(ValueError):
    """The submitted form does not fit the rubric; the message says what to fix."""


@transaction.atomic
def assignments_create_all(*, study: Study, rater: Membership) -> list[Assignment]:
    """Give a rater every test case, in an order shuffled from the study seed.

    In a balanced side design, half of the rater's screens (chosen by the same seeded
    shuffle, keyed ``sides:{pseudonym}``) show the responses in reverse order.
    """
    cases = {case.case_id: case for case in study.test_cases.all()}
    return assignments_create(study=study, rater=rater, case_ids=list(cases), cases=cases)


def assignments_create(
    *, study: Study, rater: Membership, case_ids: list[str], cases: dict | None = None
) -> list[Assignment]:
    """Give a rater the named test cases (those not yet assigned), in a seeded order."""
    cases = cases or {c.case_id: c for c in study.test_cases.filter(case_id__in=case_ids)}
    existing = set(rater.assignments.values_list("test_case__case_id", flat=True))
    new_ids = [case_id for case_id in case_ids if case_id not in existing]
    order = seeded_permutation(
        seed=study.blinding_seed, key=f"order:{rater.pseudonym}", items=new_ids
    )
    flipped = set()
    if study.side_mode == "balanced":
        sides = seeded_permutation(
            seed=study.blinding_seed, key=f"sides:{rater.pseudonym}", items=new_ids
        )
        flipped = set(sides[: len(sides) // 2])
    start = rater.assignments.count()
    return Assignment.objects.bulk_create(
        Assignment(
            rater=rater,
            test_case=cases[case_id],
            position=start + index,
            flipped=case_id in flipped,
        )
        for index, case_id in enumerate(order)
    )


def _clean_case_fields(payload: dict) -> tuple[str, str]:
    confidence = str(payload.get("confidence") or "")
    if confidence and confidence not in Assignment.Confidence.values:
        raise RatingInvalidError("Confidence must be Low, Medium or High.")
    notes = str(payload.get("notes") or "").strip()
    if len(notes) > MAX_NOTES_LENGTH:
        raise RatingInvalidError(f"Notes are limited to {MAX_NOTES_LENGTH} characters.")
    return confidence, notes


def _clean_active_seconds(value) -> int:
    try:
        seconds = int(value or 0)
    except (TypeError, ValueError):
        return 0
    return max(0, min(seconds, MAX_ACTIVE_SECONDS_PER_SAVE))


def _score_all(*, assignment: Assignment, payload: dict) -> tuple[dict, dict]:
    """Per-response scores {label: {key: value}} and per-case scores {key: value}."""
    dimensions = assignment.test_case.study.rubric.scoring_dimensions()
    labels = list(assignment.test_case.labels.values_list("label", flat=True))
    try:
        return score_form(dimensions, payload, labels=labels)
    except RubricValueError as error:
        raise RatingInvalidError(str(error)) from error


STALE_MESSAGE = (
    "This case was saved from another tab or device after you opened it. "
    "Reload to see the newer version; your unsaved answers are kept in this tab."
)


def _locked(assignment: Assignment) -> Assignment:
    locked = (
        Assignment.objects.select_for_update()
        .select_related("rater", "test_case__study__rubric")
        .get(pk=assignment.pk)
    )
    if not locked.test_case.study.accepts_ratings:
        raise RatingClosedError("This study is not accepting ratings at the moment.")
    if locked.rater.status != Membership.Status.ACTIVE:
        raise RatingClosedError("Your participation in this study is on hold.")
    return locked


@transaction.atomic
def draft_save(
    *, assignment: Assignment, payload: dict, expected_version: int, active_seconds: int = 0
) -> Assignment:
    """Store the form as the rater left it. Refuses a save based on an older version."""
    locked = _locked(assignment)
    if expected_version != locked.version:
        raise StaleVersionError(STALE_MESSAGE)
    _score_all(assignment=locked, payload=payload)  # reject what could never be submitted
    confidence, notes = _clean_case_fields(payload)
    locked.draft = {
        "responses": payload.get("responses") or {},
        "case": payload.get("case") or {},
        "confidence": confidence,
        "notes": notes,
    }
    if locked.status == Assignment.Status.TODO:
        locked.status = Assignment.Status.DRAFT
    locked.version = F("version") + 1
    locked.active_seconds = F("active_seconds") + _clean_active_seconds(active_seconds)
    locked.save()
    locked.refresh_from_db()
    return locked


def _revision_keep(*, assignment: Assignment, replacing: dict, now) -> RatingRevision | None:
    """Keep what was submitted before as history, if the new submission changes it."""
    ratings = list(assignment.ratings.all())
    previous = {
        "responses": {rating.label: rating.scores for rating in ratings},
        "case": assignment.case_scores,
        "confidence": assignment.confidence,
        "notes": assignment.notes,
    }
    if previous == replacing or not ratings:
        return None
    return RatingRevision.objects.create(
        assignment=assignment,
        submitted={**previous, "totals": {rating.label: rating.total for rating in ratings}},
        submitted_at=assignment.submitted_at or now,
        replaced_at=now,
    )


@transaction.atomic
def rating_submit(
    *,
    assignment: Assignment,
    payload: dict,
    expected_version: int | None,
    active_seconds: int = 0,
) -> Assignment:
    """Record the rater's scores for every response of the case; repeat submits update."""
    locked = _locked(assignment)
    confidence, notes = _clean_case_fields(payload)
    if not confidence:
        raise RatingInvalidError("Choose your confidence (Low, Medium or High) before submitting.")
    scored, case_scored = _score_all(assignment=locked, payload=payload)
    submitted = {
        "responses": scored,
        "case": case_scored,
        "confidence": confidence,
        "notes": notes,
    }
    if expected_version is not None and expected_version != locked.version:
        # A double click or a retried request carries the same answers: it is the same
        # submission, already recorded. Anything else is a stale tab and is refused.
        if locked.status == Assignment.Status.SUBMITTED and locked.draft == submitted:
            return locked
        raise StaleVersionError(STALE_MESSAGE)
    responses = {row.label: row.response_id for row in locked.test_case.labels.all()}
    shown = {label: shown for shown, label, _ in blinded_responses(assignment=locked)}
    now = timezone.now()
    if locked.status == Assignment.Status.SUBMITTED:
        _revision_keep(assignment=locked, replacing=submitted, now=now)
    for label, scores in scored.items():
        Rating.objects.update_or_create(
            assignment=locked,
            label=label,
            defaults={
                "response_id": responses[label],
                "shown_label": shown[label],
                "scores": scores,
                "total": total_points(scores),
                "submitted_at": now,
            },
        )
    locked.draft = submitted
    locked.source = Assignment.Source.SCREEN
    locked.case_scores = case_scored
    locked.confidence = confidence
    locked.notes = notes
    locked.status = Assignment.Status.SUBMITTED
    locked.submitted_at = now
    locked.version = F("version") + 1
    locked.active_seconds = F("active_seconds") + _clean_active_seconds(active_seconds)
    locked.save()
    locked.refresh_from_db()
    study_id = locked.test_case.study_id
    transaction.on_commit(lambda: agreement_request_recompute(study_id=study_id))
    return locked
