"""Import of filled-in worksheets (.csv, .xlsx) from raters who worked offline.

The file is the worksheet raters know (see ``columns``). Everything is checked against the
study's rubric before anything is written (``validation``); a file with any problem imports
nothing. Offline raters read the responses in key order, so each rating's shown label is its
key label and the assignment is recorded as not flipped.
"""

from collections.abc import Callable
from dataclasses import dataclass, replace

from django.db import transaction

from annotation.models import Assignment
from annotation.selectors.imported import imported_ratings_held
from annotation.services import (
    IMPORTED_HELD_MESSAGE,
    RatingInvalidError,
    design_room_check,
    ratings_import,
)
from annotation.services.skipping import case_skip
from studies.errors import ApplicationError
from studies.models import Study

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
from .validation import _rater, worksheet_headings, worksheet_parse

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
    cases: int  # the cases recorded: each is ``created`` or ``updated``
    created: int  # cases rated for the first time (no rating of the rater's before)
    updated: int  # cases whose submitted rating was replaced
    skipped: list[str]  # the ids of cases left blank
    dry_run: bool
    skips: int = 0  # cases the rater marked skipped (the Skipped column)
    assigned: int = 0  # of ``created``, the cases newly given to the rater


def worksheet_import(
    *,
    study: Study,
    pseudonym: str,
    filename: str,
    data: bytes,
    actor=None,
    dry_run: bool = False,
    progress: Callable[[str, int, int, str], None] | None = None,
) -> ImportResult:
    """Check a worksheet and, unless ``dry_run``, record it for the rater; all or nothing.

    ``progress(stage, done, total, message)`` is told when the check and the writing begin.
    """
    report = progress or (lambda stage, done, total, message: None)
    rater = _rater(study, pseudonym)
    if imported_ratings_held(study_id=study.pk):  # the check says what the import would
        raise WorksheetError([WorksheetProblem(None, None, IMPORTED_HELD_MESSAGE)])
    report("checking", 0, 1, "Checking the worksheet")
    parsed, skipped = worksheet_parse(study=study, rater=rater, filename=filename, data=data)
    cases = [case for case in parsed if not case.skip]
    skips = _skips_check(rater=rater, marked=[case for case in parsed if case.skip])
    plural = "s" if len(cases) != 1 else ""
    if dry_run:
        report("checking", 1, 1, f"Checked {len(cases)} test case{plural}; checking the design")
    else:
        report("writing", 0, len(cases), f"Recording {len(cases)} test case{plural}")
    assigned = set(
        rater.assignments.filter(test_case_id__in=[c.test_case_id for c in cases]).values_list(
            "test_case_id", flat=True
        )
    )
    newly_assigned = sum(1 for c in cases if c.test_case_id not in assigned)
    submitted = set(
        rater.assignments.filter(status=Assignment.Status.SUBMITTED).values_list(
            "test_case_id", flat=True
        )
    )
    updated = sum(1 for c in cases if c.test_case_id in submitted)
    result = ImportResult(
        rater=rater.pseudonym,
        cases=len(cases),
        created=len(cases) - updated,
        updated=updated,
        skipped=skipped,
        dry_run=dry_run,
        skips=len(skips),
        assigned=newly_assigned,
    )
    if dry_run:
        _design_check(study=study, rater=rater, cases=cases, assigned=assigned)
    else:
        answers = {
            case.test_case_id: {
                "responses": case.scores,
                "case": case.case_scores,
                "confidence": case.confidence,
                "notes": case.notes,
            }
            for case in cases
        }
        try:
            # One transaction for the scores and the skips: a skip refused after the scores
            # are written (the rater paused, the study closed, the case submitted in a tab
            # meanwhile) undoes them too. A skip may then lock the rater it hands the case
            # to after this rater, against ``studies.locks``' id order; the one wait that
            # could close a cycle (that rater skipping at this moment and picking this
            # one) ends in PostgreSQL's deadlock error, which fails the job with nothing
            # recorded.
            with transaction.atomic():
                if answers:
                    counts = ratings_import(
                        rater=rater, answers=answers, actor=actor, source_name=filename
                    )
                    # What the import did under its locks (a second import at once finds
                    # the first done): every case is stored, new or replacing one.
                    result = replace(
                        result,
                        created=len(cases) - counts.updated,
                        updated=counts.updated,
                        assigned=counts.created,
                    )
                # Each skip as on the screen: the case goes to another rater.
                for assignment, case in skips:
                    case_skip(
                        assignment=assignment,
                        reason=case.skip_reason,
                        note=case.notes,
                        actor=actor,
                    )
        except ApplicationError as error:
            raise WorksheetError([WorksheetProblem(None, None, str(error))]) from error
    return result


def _skips_check(*, rater, marked) -> list[tuple[Assignment, object]]:
    """The rater's assignments for the cases marked skipped; a case not theirs, or already
    submitted, is a problem (nothing is imported)."""
    if not marked:
        return []
    assignments = {
        a.test_case_id: a
        for a in rater.assignments.select_related("test_case").filter(
            test_case_id__in=[case.test_case_id for case in marked]
        )
    }
    problems, skips = [], []
    for case in marked:
        assignment = assignments.get(case.test_case_id)
        if assignment is None:
            problems.append(
                WorksheetProblem(
                    None, "Skipped", f"{case.case_id} is not assigned to {rater.pseudonym}, "
                    "so it cannot be skipped."
                )
            )  # fmt: skip
        elif assignment.status == Assignment.Status.SUBMITTED:
            problems.append(
                WorksheetProblem(
                    None, "Skipped", f"{case.case_id} was submitted already, so it cannot be "
                    "skipped; leave Skipped empty to keep the rating."
                )
            )  # fmt: skip
        elif assignment.status != Assignment.Status.SKIPPED:
            skips.append((assignment, case))
    if problems:
        raise WorksheetError(problems)
    return skips


def _design_check(*, study: Study, rater, cases, assigned: set) -> None:
    """A dry run refuses what the import would: a case beyond the k-raters design."""
    new = [c.test_case_id for c in cases if c.test_case_id not in assigned]
    try:
        with transaction.atomic():  # the check locks the cases it counts
            design_room_check(study=study, rater=rater, test_case_ids=new)
    except RatingInvalidError as error:
        raise WorksheetError([WorksheetProblem(None, None, str(error))]) from error
