"""The worksheet import (and its "Check only") as a job of the job runner (``jobs``).

A worksheet of 20,000 rows takes tens of seconds to check and to record, more than a web
request may hold a worker; so the request only starts the job and the page shows its
progress. ``annotation.worksheets.worksheet_import`` is the rule, all or nothing: a job that
fails or stops has recorded nothing.

The file travels from the request to the job through the cache (the same Redis the worker
reads in production; this process's memory in the embedded default, where the job runs in a
thread of it): a checked file stays there ``CHECKED_SECONDS`` for "Import now", which
starts an import job with it. A job whose file is no longer kept fails and asks for it again.
A study runs at most one check and one import at a time (the runner's constraint).
"""

import uuid

from django.core.cache import cache
from django.utils import timezone

from jobs.models import Job
from jobs.runner import job_schedule
from jobs.services import JobFailed, job_create, job_execute, job_status
from studies.models import Study

from . import worksheets

# A checked worksheet is kept on the server this long, for "Import now" after "Check only".
CHECKED_SECONDS = 30 * 60
CHECK, IMPORT = "check", "import"

UNREACHABLE = (
    "The import could not be started (the task queue is unreachable); nothing was "
    "imported. Try again in a moment."
)
NOT_KEPT = "The checked file is no longer kept; choose it again."


def _file_key(job_uuid) -> str:
    return f"worksheet-job:{job_uuid}"


def _problem(message: str) -> worksheets.WorksheetError:
    return worksheets.WorksheetError([worksheets.WorksheetProblem(None, None, message)])


def worksheet_job_start(
    *,
    study: Study,
    actor,
    pseudonym: str,
    filename: str,
    data: bytes,
    dry_run: bool,
    checked_by: Job | None = None,
) -> Job:
    """Start checking (``dry_run``) or importing the file for the rater, as a job; an
    import of the file that ``checked_by`` checked uses that check's file up once done.

    Raises ``WorksheetError`` when the study runs such a job already or the job cannot be
    started; nothing is then kept.
    """
    name = CHECK if dry_run else IMPORT
    job = job_create(
        kind=Job.Kind.WORKSHEET_IMPORT, study_id=study.pk, requested_by=actor, name=name
    )
    if job is None:
        what = "A worksheet check" if dry_run else "A worksheet import"
        raise _problem(f"{what} of this study is running; try again once it has finished.")
    kept = {"rater": pseudonym, "filename": filename, "data": data}
    if checked_by is not None:
        kept["check_job"] = str(checked_by.uuid)
    try:
        cache.set(_file_key(job.uuid), kept, CHECKED_SECONDS)
    except Exception:  # the cache (Redis) is down: so is the broker; keep nothing
        Job.objects.filter(pk=job.pk).delete()
        raise _problem(UNREACHABLE) from None
    from .tasks import import_worksheet  # the task module imports this one

    def unreachable() -> None:
        Job.objects.filter(pk=job.pk).update(
            state=Job.State.FAILED, error=UNREACHABLE, finished_at=timezone.now()
        )
        cache.delete(_file_key(job.uuid))

    job_schedule(import_worksheet, args=[job.pk], on_unreachable=unreachable)
    job.refresh_from_db()
    return job


def worksheet_checked_import_start(*, study: Study, actor, token: str) -> Job:
    """ "Import now": import the file a check job of this person passed, checked again in
    full; the check's file is used up once the import is done."""
    check = worksheet_job_of(study=study, job_uuid=token)
    kept = None
    if (
        check is not None
        and check.name == CHECK
        and check.state == Job.State.DONE
        and check.requested_by_id == actor.pk
    ):
        kept = cache.get(_file_key(check.uuid))
    if kept is None:
        raise _problem(NOT_KEPT)
    return worksheet_job_start(
        study=study,
        actor=actor,
        pseudonym=kept["rater"],
        filename=kept["filename"],
        data=kept["data"],
        dry_run=False,
        checked_by=check,
    )


def worksheet_job_of(*, study: Study, job_uuid) -> Job | None:
    """The study's worksheet job with this UUID; None for another study's, or no UUID."""
    try:
        job_uuid = uuid.UUID(str(job_uuid))
    except ValueError:
        return None
    # The kind's other jobs (ratings imported by system, ``ratings_import_jobs``) are not
    # worksheets.
    return Job.objects.filter(
        kind=Job.Kind.WORKSHEET_IMPORT, study_id=study.pk, uuid=job_uuid, name__in=(CHECK, IMPORT)
    ).first()


def worksheet_job_run(*, job_id: int) -> None:
    """The job: check the file, and record it unless it is a check; how it ended."""
    job = Job.objects.filter(pk=job_id, kind=Job.Kind.WORKSHEET_IMPORT).first()
    if job is None:
        return
    key = _file_key(job.uuid)

    def work(job: Job, report) -> dict:
        kept = cache.get(key)
        if kept is None:
            raise JobFailed(NOT_KEPT, result={"problems": [_problem_dict(None, None, NOT_KEPT)]})
        try:
            result = worksheets.worksheet_import(
                study=Study.objects.get(pk=job.study_id),
                pseudonym=kept["rater"],
                filename=kept["filename"],
                data=kept["data"],
                actor=job.requested_by,
                dry_run=job.name == CHECK,
                progress=report,
            )
        except worksheets.WorksheetError as error:
            problems = [_problem_dict(p.row, p.column, p.message) for p in error.problems]
            raise JobFailed(str(error), result={"problems": problems}) from error
        return {
            "rater": result.rater,
            "cases": result.cases,
            "created": result.created,
            "updated": result.updated,
            "skipped": result.skipped,
            "skips": result.skips,
            "dry_run": result.dry_run,
            "filename": kept["filename"],
            "check_job": kept.get("check_job", ""),
        }

    checked = None
    try:
        ended = job_execute(job_id=job.pk, work=work)
        if ended is not None and ended.state == Job.State.DONE:
            checked = ended.result.get("check_job")
    finally:
        if job.name != CHECK:
            cache.delete(key)  # imported or not, this copy is used up
    if checked:
        cache.delete(_file_key(checked))  # "Import now" imports a checked file once


def _problem_dict(row, column, message) -> dict:
    return {"row": row, "column": column, "message": message}


def worksheet_job_status(*, job: Job) -> dict:
    """Where the job is, as JSON for the page's poller: running (its stage), done (what was
    checked or imported), failed or stopped (the problems)."""
    status = job_status(job=job)
    problems = status["result"].get("problems") or (
        [_problem_dict(None, None, status["error"])] if status["error"] else []
    )
    return {**status, "problems": problems}


def worksheet_job_outcome(*, job: Job) -> tuple[dict, worksheets.ImportResult | None, list]:
    """(status, the result once done, the problems once failed) for the page."""
    status = worksheet_job_status(job=job)
    problems = [worksheets.WorksheetProblem(**p) for p in status["problems"]]
    result = None
    if status["state"] == Job.State.DONE:
        done = status["result"]
        result = worksheets.ImportResult(
            rater=done["rater"],
            cases=done["cases"],
            created=done["created"],
            updated=done["updated"],
            skipped=done["skipped"],
            dry_run=done["dry_run"],
            skips=done.get("skips", 0),
        )
    return status, result, problems
