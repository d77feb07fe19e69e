"""The worksheet import (and its "Check only") as a job of the job runner (``jobs``), by the
mechanism of ``file_import_jobs``: upload, check as a job, then import as a job.

``annotation.worksheets.worksheet_import`` is the rule, all or nothing: a job that fails or
stops has recorded nothing.
"""

from jobs.models import Job
from studies.models import Study

from . import worksheets
from .file_import_jobs import FileImportJobs

CHECK, IMPORT = "check", "import"


def _perform(*, study: Study, job: Job, kept: dict, dry_run: bool, progress) -> dict:
    result = worksheets.worksheet_import(
        study=study,
        pseudonym=kept["rater"],
        filename=kept["filename"],
        data=kept["data"],
        actor=job.requested_by,
        dry_run=dry_run,
        progress=progress,
    )
    return {
        "rater": result.rater,
        "cases": result.cases,
        "created": result.created,
        "updated": result.updated,
        "assigned": result.assigned,
        "skipped": result.skipped,
        "skips": result.skips,
        "dry_run": result.dry_run,
    }


WORKSHEETS = FileImportJobs(
    check=CHECK,
    import_=IMPORT,
    key_prefix="worksheet-job",
    busy={
        True: "A worksheet check of this study is running; try again once it has finished.",
        False: "A worksheet import of this study is running; try again once it has finished.",
    },
    task="import_worksheet",
    perform=_perform,
    extra=("rater",),
)


# The task's and the pages' names (the views call ``WORKSHEETS`` for the rest).
worksheet_job_run = WORKSHEETS.run
worksheet_job_status = WORKSHEETS.status


def _result(done: dict) -> worksheets.ImportResult:
    return worksheets.ImportResult(
        rater=done["rater"],
        cases=done["cases"],
        created=done["created"],
        updated=done["updated"],
        skipped=done["skipped"],
        dry_run=done["dry_run"],
        skips=done.get("skips", 0),
        assigned=done.get("assigned", 0),
    )


def worksheet_job_outcome(*, job: Job) -> tuple[dict, worksheets.ImportResult | None, list]:
    """(status, the result once done, the problems once failed) for the page."""
    status, result, problems = WORKSHEETS.outcome(job=job, done=_result)
    return status, result, problems  # type: ignore[return-value]
