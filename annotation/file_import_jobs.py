"""Upload a file, check it as a job, then import it as a job: the one mechanism behind the
worksheet import (``worksheet_jobs``) and the import of ratings by system
(``ratings_import_jobs``), which share the job kind ``WORKSHEET_IMPORT`` under names of
their own.

A file of 20,000 rows takes tens of seconds to check and to record, more than a web request
may hold a worker; so the request only starts the job and the page shows its progress.

The file travels from the request to the job through the cache (the same Redis the worker
reads in production; this process's memory in the embedded default, where the job runs in a
thread of it): a checked file stays there ``CHECKED_SECONDS`` for "Import now", which
starts an import job with it, checked again in full; the check's file is used up once the
import is done. A job whose file is no longer kept fails and asks for it again. A study runs
at most one check and one import at a time (the runner's constraint). Each import's rule is
all or nothing: a job that fails or stops has recorded nothing.
"""

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from django.core.cache import cache

from jobs.models import Job
from jobs.runner import job_schedule
from jobs.services import (
    JobFailed,
    job_create,
    job_discard,
    job_execute,
    job_fail,
    job_status,
)
from studies.models import Study

from .worksheets import WorksheetError, WorksheetProblem

KIND = Job.Kind.WORKSHEET_IMPORT
# A checked file is kept on the server this long, for "Import now" after "Check only".
CHECKED_SECONDS = 30 * 60

UNREACHABLE = (
    "The import could not be started (the task queue is unreachable); nothing was "
    "imported. Try again in a moment."
)
NOT_KEPT = "The checked file is no longer kept; choose it again."


def problem_error(message: str) -> WorksheetError:
    """A ``WorksheetError`` of one problem of the whole file."""
    return WorksheetError([WorksheetProblem(None, None, message)])


def _problem_dict(row, column, message) -> dict:
    return {"row": row, "column": column, "message": message}


@dataclass(frozen=True)
class FileImportJobs:
    """One kind of file import: its job names, where its file is kept, its task and its
    work.

    ``perform(study=, job=, kept=, dry_run=, progress=)`` checks (and, unless ``dry_run``,
    records) the kept file, returning the job's result; it raises ``WorksheetError`` with
    every problem. ``extra`` names what else is kept beside the file (the worksheet's rater,
    say), handed back to ``start`` by "Import now".
    """

    check: str
    import_: str
    key_prefix: str
    busy: dict[bool, str]  # by dry_run: the message when such a job runs already
    task: str  # the name of its task in ``annotation.tasks``
    perform: Callable[..., dict]
    ended: dict[str, str] = field(default_factory=dict)  # the runner's words, said otherwise
    extra: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, str]:
        return (self.check, self.import_)

    def file_key(self, job_uuid) -> str:
        return f"{self.key_prefix}:{job_uuid}"

    def start(
        self,
        *,
        study: Study,
        actor,
        filename: str,
        data: bytes,
        dry_run: bool,
        checked_by: Job | None = None,
        **extra,
    ) -> Job:
        """Start checking (``dry_run``) or importing the file, as a job; an import of the
        file that ``checked_by`` checked uses that check's file up once done.

        Raises ``WorksheetError`` when the study runs such a job already or the job cannot
        be started; nothing is then kept.
        """
        name = self.check if dry_run else self.import_
        job = job_create(kind=KIND, study_id=study.pk, requested_by=actor, name=name)
        if job is None:
            raise problem_error(self.busy[dry_run])
        kept = {**{k: extra[k] for k in self.extra}, "filename": filename, "data": data}
        if checked_by is not None:
            kept["check_job"] = str(checked_by.uuid)
        key = self.file_key(job.uuid)
        try:
            cache.set(key, kept, CHECKED_SECONDS)
        except Exception:  # the cache (Redis) is down: so is the broker; keep nothing
            job_discard(job=job)
            raise problem_error(UNREACHABLE) from None
        from . import tasks  # the task module imports the users of this one

        def unreachable() -> None:
            job_fail(job=job, error=UNREACHABLE)
            cache.delete(key)

        job_schedule(getattr(tasks, self.task), args=[job.pk], on_unreachable=unreachable)
        job.refresh_from_db()
        return job

    def checked_import_start(self, *, study: Study, actor, token: str) -> Job:
        """ "Import now": import the file a check job of this person passed, checked again
        in full."""
        check = self.job_of(study=study, job_uuid=token)
        kept = None
        if (
            check is not None
            and check.name == self.check
            and check.state == Job.State.DONE
            and check.requested_by_id == actor.pk
        ):
            kept = cache.get(self.file_key(check.uuid))
        if kept is None:
            raise problem_error(NOT_KEPT)
        return self.start(
            study=study,
            actor=actor,
            filename=kept["filename"],
            data=kept["data"],
            dry_run=False,
            checked_by=check,
            **{k: kept[k] for k in self.extra},
        )

    def job_of(self, *, study: Study, job_uuid) -> Job | None:
        """The study's job of this import with this UUID; None for another study's, another
        import's, or no UUID."""
        try:
            job_uuid = uuid.UUID(str(job_uuid))
        except ValueError:
            return None
        return Job.objects.filter(
            kind=KIND, study_id=study.pk, uuid=job_uuid, name__in=self.names
        ).first()

    def run(self, *, job_id: int) -> None:
        """The job: check the file, and record it unless it is a check."""
        job = Job.objects.filter(pk=job_id, kind=KIND, name__in=self.names).first()
        if job is None:
            return
        key = self.file_key(job.uuid)

        def work(job: Job, report) -> dict:
            kept = cache.get(key)
            if kept is None:
                problems = [_problem_dict(None, None, NOT_KEPT)]
                raise JobFailed(NOT_KEPT, result={"problems": problems})
            try:
                result = self.perform(
                    study=Study.objects.get(pk=job.study_id),
                    job=job,
                    kept=kept,
                    dry_run=job.name == self.check,
                    progress=report,
                )
            except WorksheetError as error:
                problems = [_problem_dict(p.row, p.column, p.message) for p in error.problems]
                raise JobFailed(str(error), result={"problems": problems}) from error
            return {
                **result,
                "filename": kept["filename"],
                "check_job": kept.get("check_job", ""),
            }

        checked = None
        try:
            ended = job_execute(job_id=job.pk, work=work)
            if ended is not None and ended.state == Job.State.DONE:
                checked = ended.result.get("check_job")
        finally:
            if job.name != self.check:
                cache.delete(key)  # imported or not, this copy is used up
        if checked:
            cache.delete(self.file_key(checked))  # "Import now" imports a checked file once

    def status(self, *, job: Job) -> dict:
        """Where the job is (JSON for the page's poller and the API): running (its stage),
        done (what was checked or imported), failed or stopped (the problems)."""
        status = job_status(job=job)
        error = self.ended.get(status["error"], status["error"])
        problems = status["result"].get("problems") or (
            [_problem_dict(None, None, error)] if error else []
        )
        return {**status, "error": error, "problems": problems}

    def outcome(self, *, job: Job, done: Callable[[dict], object]) -> tuple[dict, object, list]:
        """(status, ``done`` of the job's result once done, the problems once failed) for
        the page."""
        status = self.status(job=job)
        problems = [WorksheetProblem(**p) for p in status["problems"]]
        result = done(status["result"]) if status["state"] == Job.State.DONE else None
        return status, result, problems
