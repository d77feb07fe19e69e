"""The import of ratings by system (and its check) as jobs of the job runner (``jobs``).

As the worksheet import (``worksheet_jobs``), whose job kind these jobs share under names of
their own: the request keeps the file in the cache and starts the job; the page and the API
show its progress, then what was checked or imported, or every problem. A check's file is
kept ``CHECKED_SECONDS`` for "Import now". ``annotation.ratings_by_system`` is the rule, all
or nothing: a job that fails or stops has recorded nothing.
"""

import uuid

from django.core.cache import cache
from django.utils import timezone

from jobs.models import Job
from jobs.runner import job_schedule
from jobs.services import SERVER_ERROR, STOPPED, JobFailed, job_create, job_execute, job_status
from studies.models import Study

from .ratings_by_system import ImportSummary, ratings_file_import
from .worksheets import WorksheetError, WorksheetProblem

KIND = Job.Kind.WORKSHEET_IMPORT
CHECK, IMPORT = "ratings-check", "ratings-import"
CHECKED_SECONDS = 30 * 60

UNREACHABLE = (
    "The import could not be started (the task queue is unreachable); nothing was "
    "imported. Try again in a moment."
)
NOT_KEPT = "The checked file is no longer kept; choose it again."
# The kind's words are the worksheet's: these say what stopped.
ENDED = {
    STOPPED[KIND]: "The import stopped before it finished; nothing was imported. Choose the "
    "file again.",
    SERVER_ERROR[KIND]: "The import stopped on an error of the server; nothing was imported.",
}


def _file_key(job_uuid) -> str:
    return f"ratings-import-job:{job_uuid}"


def _problem(message: str) -> WorksheetError:
    return WorksheetError([WorksheetProblem(None, None, message)])


def ratings_import_job_start(
    *,
    study: Study,
    actor,
    filename: str,
    data: bytes,
    dry_run: bool,
    checked_by: Job | None = None,
) -> Job:
    """Start checking (``dry_run``) or importing a file of ratings by system, as a job.

    Raises ``WorksheetError`` when the study runs such a job already or the job cannot be
    started; nothing is then kept.
    """
    job = job_create(
        kind=KIND, study_id=study.pk, requested_by=actor, name=CHECK if dry_run else IMPORT
    )
    if job is None:
        what = "A check" if dry_run else "An import"
        raise _problem(f"{what} of ratings is running; try again once it has finished.")
    kept = {"filename": filename, "data": data}
    if checked_by is not None:
        kept["check_job"] = str(checked_by.uuid)
    try:
        cache.set(_file_key(job.uuid), kept, CHECKED_SECONDS)
    except Exception:  # the cache (Redis) is down: so is the broker; keep nothing
        Job.objects.filter(pk=job.pk).delete()
        raise _problem(UNREACHABLE) from None
    from .tasks import import_ratings  # the task module imports this one

    def unreachable() -> None:
        Job.objects.filter(pk=job.pk).update(
            state=Job.State.FAILED, error=UNREACHABLE, finished_at=timezone.now()
        )
        cache.delete(_file_key(job.uuid))

    job_schedule(import_ratings, args=[job.pk], on_unreachable=unreachable)
    job.refresh_from_db()
    return job


def ratings_checked_import_start(*, study: Study, actor, token: str) -> Job:
    """ "Import now": import the file a check job of this person passed, checked again."""
    check = ratings_import_job_of(study=study, job_uuid=token)
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
    return ratings_import_job_start(
        study=study,
        actor=actor,
        filename=kept["filename"],
        data=kept["data"],
        dry_run=False,
        checked_by=check,
    )


def ratings_import_job_of(*, study: Study, job_uuid) -> Job | None:
    """The study's ratings import job with this UUID; None for another's, or no UUID."""
    try:
        job_uuid = uuid.UUID(str(job_uuid))
    except ValueError:
        return None
    return Job.objects.filter(
        kind=KIND, study_id=study.pk, uuid=job_uuid, name__in=(CHECK, IMPORT)
    ).first()


def _problem_dict(row, column, message) -> dict:
    return {"row": row, "column": column, "message": message}


def ratings_import_job_run(*, job_id: int) -> None:
    """The job: check the file, and record it unless it is a check."""
    job = Job.objects.filter(pk=job_id, kind=KIND, name__in=(CHECK, IMPORT)).first()
    if job is None:
        return
    key = _file_key(job.uuid)

    def work(job: Job, report) -> dict:
        kept = cache.get(key)
        if kept is None:
            raise JobFailed(NOT_KEPT, result={"problems": [_problem_dict(None, None, NOT_KEPT)]})
        try:
            summary = ratings_file_import(
                study=Study.objects.get(pk=job.study_id),
                filename=kept["filename"],
                data=kept["data"],
                actor=job.requested_by,
                dry_run=job.name == CHECK,
                progress=report,
            )
        except WorksheetError as error:
            problems = [_problem_dict(p.row, p.column, p.message) for p in error.problems]
            raise JobFailed(str(error), result={"problems": problems}) from error
        return {
            **summary.__dict__,
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


def ratings_import_job_status(*, job: Job) -> dict:
    """Where the job is (JSON for the page's poller and the API): running (its stage),
    done (what was checked or imported), failed or stopped (the problems)."""
    status = job_status(job=job)
    error = ENDED.get(status["error"], status["error"])
    problems = status["result"].get("problems") or (
        [_problem_dict(None, None, error)] if error else []
    )
    return {**status, "error": error, "problems": problems, "dry_run": job.name == CHECK}


def ratings_import_job_outcome(*, job: Job) -> tuple[dict, ImportSummary | None, list]:
    """(status, the summary once done, the problems once failed) for the page."""
    status = ratings_import_job_status(job=job)
    problems = [WorksheetProblem(**p) for p in status["problems"]]
    summary = None
    if status["state"] == Job.State.DONE:
        fields = ImportSummary.__dataclass_fields__
        summary = ImportSummary(**{k: v for k, v in status["result"].items() if k in fields})
    return status, summary, problems
