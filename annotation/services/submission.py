"""Submitted ratings: the one write that records them (``_submissions_store``), whatever
their source, with the earlier answer kept as a revision and the change announced to the
analysis; and the rating screen's submit (``rating_submit``)."""

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from annotation.models import Assignment, Rating, RatingRevision
from annotation.selectors import screen_labels
from annotation.selectors.imported import imported_ratings_held
from studies.bulk_rows import rows_update
from studies.rubric import response_total
from studies.services.webhooks import webhook_event_announce
from studies.signals import analysis_inputs_announce

from .rating_checks import (
    IMPORTED_HELD_MESSAGE,
    STALE_MESSAGE,
    RatingClosedError,
    RatingInvalidError,
    StaleVersionError,
    submission_check,
)
from .rating_locks import _locked, _saved

NO_VERSION_MESSAGE = (
    "The form did not say which version of this case it was opened at, so it was not "
    "saved. Reload the page and submit again."
)


@dataclass(frozen=True)
class Submission:
    """A cleaned answer (``submission_check``) for a locked assignment, with what each key
    label stands for: the label on screen (``shown``) and the response (``responses``)."""

    assignment: Assignment
    submitted: dict
    shown: dict
    responses: dict
    active_seconds: int = 0


# Rows per statement when a worksheet writes thousands of cases at once.
STORE_BATCH = 1000
# What a submission changes on its assignment (``rows_update`` writes only these; the
# update time is set here, as a bulk update does not stamp ``auto_now``).
_STORED_FIELDS = [
    "draft", "case_scores", "confidence", "notes", "source", "status", "submitted_at",
    "active_seconds", "version", "last_saved_at", "flipped", "updated_at",
]  # fmt: skip


def _submitted_now(assignment: Assignment, ratings: list[Rating]) -> dict:
    return {
        "responses": {rating.label: rating.scores for rating in ratings},
        "case": assignment.case_scores,
        "confidence": assignment.confidence,
        "notes": assignment.notes,
    }


def _revisions_keep(*, replacing: list["Submission"], now) -> None:
    """Keep what was submitted before as history, for each answer that changes it: one
    read of the earlier ratings and one insert, however many answers are replaced."""
    if not replacing:
        return
    earlier: dict[int, list[Rating]] = {s.assignment.pk: [] for s in replacing}
    for rating in Rating.objects.filter(assignment_id__in=list(earlier)).order_by("pk"):
        earlier[rating.assignment_id].append(rating)
    revisions = []
    for submission in replacing:
        assignment, ratings = submission.assignment, earlier[submission.assignment.pk]
        previous = _submitted_now(assignment, ratings)
        if previous == submission.submitted or not ratings:
            continue
        revisions.append(
            RatingRevision(
                assignment=assignment,
                submitted={**previous, "totals": {r.label: r.total for r in ratings}},
                submitted_at=assignment.submitted_at or now,
                replaced_at=now,
            )
        )
    RatingRevision.objects.bulk_create(revisions, batch_size=STORE_BATCH)


def _submissions_store(*, submissions: list[Submission], source: str, now) -> None:
    """Record cleaned answers on locked assignments: the one write of submitted ratings,
    for one case from the screen or a whole worksheet at once, in a few statements
    however many cases (a statement per case made a 10,000-case worksheet take minutes).
    """
    if not submissions:
        return
    _revisions_keep(
        replacing=[s for s in submissions if s.assignment.status == Assignment.Status.SUBMITTED],
        now=now,
    )
    # A new rating per label, or the earlier one replaced in place (same row, same id), as
    # a revision does.
    dimensions = {}
    for submission in submissions:
        study = submission.assignment.test_case.study
        if study.pk not in dimensions:
            dimensions[study.pk] = study.rubric.scoring_dimensions()
    Rating.objects.bulk_create(
        [
            Rating(
                assignment=submission.assignment,
                label=label,
                response_id=submission.responses[label],
                shown_label=submission.shown[label],
                scores=scores,
                total=response_total(dimensions[submission.assignment.test_case.study.pk], scores),
                submitted_at=now,
            )
            for submission in submissions
            for label, scores in submission.submitted["responses"].items()
        ],
        update_conflicts=True,
        unique_fields=["assignment", "label"],
        update_fields=["response", "shown_label", "scores", "total", "submitted_at"],
        batch_size=STORE_BATCH,
    )
    for submission in submissions:
        assignment, submitted = submission.assignment, submission.submitted
        assignment.draft = submitted
        assignment.case_scores = submitted["case"]
        assignment.confidence = submitted["confidence"]
        assignment.notes = submitted["notes"]
        assignment.source = source
        assignment.status = Assignment.Status.SUBMITTED
        assignment.submitted_at = now
        _saved(assignment, claimed_seconds=submission.active_seconds, now=now)
        assignment.updated_at = now
    rows_update(Assignment, [s.assignment for s in submissions], _STORED_FIELDS)
    touched: dict[int, list[int]] = {}
    for s in submissions:
        touched.setdefault(s.assignment.test_case.study_id, []).append(s.assignment.test_case_id)
    for study_id, case_ids in sorted(touched.items()):
        analysis_inputs_announce(study_id=study_id, reason="rating", case_ids=case_ids)
        webhook_event_announce(study_id=study_id, event="rating.milestone")


@transaction.atomic
def rating_submit(
    *,
    assignment: Assignment,
    payload: dict,
    expected_version: int | None = None,
    any_version: bool = False,
    active_seconds: int = 0,
) -> Assignment:
    """Record the rater's scores for every response of the case; repeat submits update.

    ``expected_version`` is the version the form was opened at; a submit from the screen
    must carry it, so that a stale tab cannot overwrite a newer answer. Only a caller
    that writes on the rater's behalf (the demo loader) may pass ``any_version=True``.
    """
    if expected_version is None and not any_version:
        raise RatingInvalidError(NO_VERSION_MESSAGE)
    locked = _locked(assignment)
    # Asked under the study's lock, which an import by system holds exclusively.
    if imported_ratings_held(study_id=locked.test_case.study_id):
        raise RatingClosedError(IMPORTED_HELD_MESSAGE)
    labels = screen_labels(assignment=locked)
    submitted = submission_check(
        study=locked.test_case.study,
        labels=sorted(label for _, label, _ in labels),
        payload=payload,
    )
    if expected_version is not None and expected_version != locked.version:
        # A double click or a retried request carries the same answers: it is the same
        # submission, already recorded. Anything else is a stale tab and is refused.
        if locked.status == Assignment.Status.SUBMITTED and locked.draft == submitted:
            return locked
        raise StaleVersionError(STALE_MESSAGE)
    submission = Submission(
        assignment=locked,
        submitted=submitted,
        shown={label: shown for shown, label, _ in labels},
        responses={label: response_id for _, label, response_id in labels},
        active_seconds=active_seconds,
    )
    _submissions_store(
        submissions=[submission], source=Assignment.Source.SCREEN, now=timezone.now()
    )
    return locked
