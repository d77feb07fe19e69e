"""Import of filled-in worksheets (.csv, .xlsx) from raters who worked offline.

The file is the worksheet raters know (see ``columns``). Everything is checked against the
study's rubric before anything is written (``validation``); a file with any problem imports
nothing. Offline raters read the responses in key order, so each rating's shown label is its
key label and the assignment is recorded as not flipped.
"""

from dataclasses import dataclass

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from agreement.services import agreement_request_recompute
from annotation.models import Assignment, Rating, RatingRevision
from annotation.services import assignments_create
from studies.models import BlindedLabel, Membership, Study, StudyEvent

from .columns import (
    MAX_BYTES,
    DimensionColumn,
    cell_read,
    cell_value,
    dimension_columns,
    neutralise,
    unneutralise,
)
from .reading import WorksheetError, WorksheetProblem, read_table
from .validation import CaseScores, _rater, worksheet_headings, worksheet_parse

__all__ = [
    "MAX_BYTES",
    "DimensionColumn",
    "ImportResult",
    "WorksheetError",
    "WorksheetProblem",
    "cell_read",
    "cell_value",
    "dimension_columns",
    "neutralise",
    "read_table",
    "unneutralise",
    "worksheet_headings",
    "worksheet_import",
    "worksheet_parse",
]


@dataclass(frozen=True)
class ImportResult:
    rater: str
    cases: int
    created: int
    updated: int
    skipped: list[str]
    dry_run: bool


def worksheet_import(
    *,
    study: Study,
    pseudonym: str,
    filename: str,
    data: bytes,
    actor=None,
    dry_run: bool = False,
) -> ImportResult:
    """Check a worksheet and, unless ``dry_run``, record it for the rater; all or nothing."""
    rater = _rater(study, pseudonym)
    cases, skipped = worksheet_parse(study=study, rater=rater, filename=filename, data=data)
    assigned = set(
        rater.assignments.filter(test_case_id__in=[c.test_case_id for c in cases]).values_list(
            "test_case_id", flat=True
        )
    )
    created = sum(1 for c in cases if c.test_case_id not in assigned)
    submitted = set(
        rater.assignments.filter(status=Assignment.Status.SUBMITTED).values_list(
            "test_case_id", flat=True
        )
    )
    updated = sum(1 for c in cases if c.test_case_id in submitted)
    result = ImportResult(
        rater=rater.pseudonym,
        cases=len(cases),
        created=created,
        updated=updated,
        skipped=skipped,
        dry_run=dry_run,
    )
    if not dry_run:
        _record(study=study, rater=rater, cases=cases, filename=filename, actor=actor)
    return result


def _revision_keep(assignment: Assignment, case: CaseScores, now) -> None:
    """Keep the answer being replaced as a revision, as a resubmission on screen does."""
    ratings = list(assignment.ratings.all())
    previous = {
        "responses": {rating.label: rating.scores for rating in ratings},
        "case": assignment.case_scores,
        "confidence": assignment.confidence,
        "notes": assignment.notes,
    }
    replacing = {
        "responses": case.scores,
        "case": case.case_scores,
        "confidence": case.confidence,
        "notes": case.notes,
    }
    if ratings and previous != replacing:
        RatingRevision.objects.create(
            assignment=assignment,
            submitted={**previous, "totals": {rating.label: rating.total for rating in ratings}},
            submitted_at=assignment.submitted_at or now,
            replaced_at=now,
        )


@transaction.atomic
def _record(*, study: Study, rater: Membership, cases: list[CaseScores], filename: str, actor):
    # Lock the study, then the rater: a status change (closing) or a second import for the
    # same rater waits, and what was checked before the locks is checked again under them.
    study = Study.objects.select_for_update().get(pk=study.pk)
    rater = Membership.objects.select_for_update().get(pk=rater.pk)
    if not study.accepts_ratings or rater.status != Membership.Status.ACTIVE:
        _rater(study, rater.pseudonym)  # raises the same error as before the check
    wanted = [c.test_case_id for c in cases]
    have = set(
        rater.assignments.filter(test_case_id__in=wanted).values_list("test_case_id", flat=True)
    )
    missing = [c.case_id for c in cases if c.test_case_id not in have]
    if missing:
        assignments_create(study=study, rater=rater, case_ids=missing)
    assignments = {
        a.test_case_id: a
        for a in Assignment.objects.select_for_update().filter(rater=rater, test_case_id__in=wanted)
    }
    responses = dict(
        ((test_case_id, label), response_id)
        for test_case_id, label, response_id in BlindedLabel.objects.filter(
            test_case_id__in=wanted
        ).values_list("test_case_id", "label", "response_id")
    )
    now = timezone.now()
    updated = 0
    for case in cases:
        assignment = assignments[case.test_case_id]
        if assignment.status == Assignment.Status.SUBMITTED:
            updated += 1
            _revision_keep(assignment, case, now)
        for label, scores in case.scores.items():
            Rating.objects.update_or_create(
                assignment=assignment,
                label=label,
                defaults={
                    "response_id": responses[case.test_case_id, label],
                    "shown_label": label,
                    "scores": scores,
                    "total": sum(score["points"] for score in scores.values()),
                    "submitted_at": now,
                },
            )
        # The rater read the responses in key order, off screen: record that, so the shown
        # labels and any pairwise sign are read the right way round.
        assignment.flipped = False
        assignment.source = Assignment.Source.WORKSHEET
        assignment.case_scores = case.case_scores
        assignment.confidence = case.confidence
        assignment.notes = case.notes
        assignment.draft = {
            "responses": {},
            "case": {},
            "confidence": case.confidence,
            "notes": case.notes,
        }
        assignment.status = Assignment.Status.SUBMITTED
        assignment.submitted_at = now
        assignment.version = F("version") + 1
        assignment.save()
    StudyEvent.objects.create(
        study=study,
        actor=actor,
        kind="worksheet_imported",
        membership=rater,
        detail={
            "file": filename[:200],
            "cases": len(cases),
            "created": len(missing),
            "updated": updated,
        },
    )
    # The agreement statistics are recomputed after new ratings, as after a submit.
    study_id = study.pk
    transaction.on_commit(lambda: agreement_request_recompute(study_id=study_id))
