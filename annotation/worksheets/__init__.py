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
from annotation.services import (
    RatingClosedError,
    RatingInvalidError,
    design_room_check,
    ratings_import,
)
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
    progress: Callable[[str, int, int, str], None] | None = None,
) -> ImportResult:
    """Check a worksheet and, unless ``dry_run``, record it for the rater; all or nothing.

    ``progress(stage, done, total, message)`` is told when the check and the writing begin.
    """
    report = progress or (lambda stage, done, total, message: None)
    rater = _rater(study, pseudonym)
    report("checking", 0, 1, "Checking the worksheet")
    cases, skipped = worksheet_parse(study=study, rater=rater, filename=filename, data=data)
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
            counts = ratings_import(rater=rater, answers=answers, actor=actor, source_name=filename)
        except (RatingClosedError, RatingInvalidError) as error:
            raise WorksheetError([WorksheetProblem(None, None, str(error))]) from error
        # What the import did under its locks (a second import at once finds the first done).
        result = replace(result, created=counts.created, updated=counts.updated)
    return result


def _design_check(*, study: Study, rater, cases, assigned: set) -> None:
    """A dry run refuses what the import would: a case beyond the k-raters design."""
    new = [c.test_case_id for c in cases if c.test_case_id not in assigned]
    try:
        with transaction.atomic():  # the check locks the cases it counts
            design_room_check(study=study, rater=rater, test_case_ids=new)
    except RatingInvalidError as error:
        raise WorksheetError([WorksheetProblem(None, None, str(error))]) from error
