"""A job's life: created running (one per study and kind), its progress and heartbeat while
it runs, how it ended, and where it is for the pages' poller and the API.

A job's writes are usually one transaction, seen by no one until it commits (and on SQLite
a second connection cannot write beside it), so what it reports while it runs is kept in
the cache, not in its row. The entry lapses when the job stops being heard from: a job whose
process died is then reported as stopped, and nothing of it was kept. The job must not
depend on the cache: when it cannot be reached the job runs all the same, and a running
job is taken to be alive (``UNKNOWN``) rather than stopped, so that no second one starts.
"""

import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import TypedDict

from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.utils import timezone

from .files import job_files_remove
from .models import Job

logger = logging.getLogger(__name__)

# A running job's progress lapses this long after it was last heard from.
PROGRESS_TIMEOUT = 120
# At most one progress write per this many seconds (and one per stage).
PROGRESS_INTERVAL = 0.5
# While its process lives, a run says so this often, whatever it is doing: waiting for the
# study's lock (behind another job, say) is not being stopped.
HEARTBEAT_SECONDS = 20
# Finished jobs kept per study and kind, the latest (their pages show how each ended).
JOBS_KEPT = 20


class Progress(TypedDict):
    """A running job's progress as the cache keeps it."""

    stage: str
    done: int
    total: int
    message: str


UNKNOWN: Progress = {"stage": "unknown", "done": 0, "total": 0, "message": ""}
WAITING: Progress = {"stage": "waiting", "done": 0, "total": 0, "message": "Waiting to start"}

# Why a job ended without its result, by kind, for the user.
STOPPED: dict[str, str] = {
    Job.Kind.CASE_IMPORT: "The import stopped before it finished; nothing was imported.",
    Job.Kind.ASSIGN: (
        "The assignment stopped before it finished; nothing was assigned. Press Assign again."
    ),
    Job.Kind.ANALYSIS: "The analysis stopped before it finished. Press Compute again.",
    Job.Kind.WORKSHEET_IMPORT: (
        "The worksheet import stopped before it finished; nothing was imported. Choose the "
        "file again."
    ),
    Job.Kind.EXPORT: "The export stopped before it finished. Press Prepare again.",
}
SERVER_ERROR: dict[str, str] = {
    Job.Kind.CASE_IMPORT: "The import stopped on an error of the server; nothing was imported.",
    Job.Kind.ASSIGN: "The assignment stopped on an error of the server; nothing was assigned.",
    Job.Kind.ANALYSIS: "The analysis stopped on an error of the server.",
    Job.Kind.WORKSHEET_IMPORT: (
        "The worksheet import stopped on an error of the server; nothing was imported."
    ),
    Job.Kind.EXPORT: "The export stopped on an error of the server. Press Prepare again.",
}


class JobStopped(Exception):  # an outcome, not an error of the code
    """The job was recorded as stopped before it began its work: it gives up."""


class JobFailed(Exception):  # an outcome, not an error of the code
    """The job's work refused, with a message for the user (and what to keep of it)."""

    def __init__(self, message: str, *, result: dict | None = None):
        super().__init__(message)
        self.result = result or {}


def progress_key(job: Job) -> str:
    return f"job:{job.uuid}"


def _progress_set(key: str, value: Progress) -> None:
    try:
        cache.set(key, value, PROGRESS_TIMEOUT)
    except Exception:  # see the module docstring
        logger.warning("The progress of %s could not be written to the cache", key)


def _progress_get(key: str) -> Progress | None:
    try:
        return cache.get(key)
    except Exception:  # see the module docstring
        logger.warning("The progress of %s could not be read from the cache", key)
        return UNKNOWN


def _progress_delete(key: str) -> None:
    try:
        cache.delete(key)
    except Exception:  # it lapses by itself
        logger.warning("The progress of %s could not be removed from the cache", key)


def job_create(
    *,
    kind: str,
    study_id: int,
    requested_by=None,
    subject: uuid.UUID | None = None,
    name: str = "",
) -> Job | None:
    """A new running job, or None when the study has an active job of this kind (and
    name) already."""
    job = Job(uuid=uuid.uuid4(), kind=kind, study_id=study_id, subject=subject, name=name)
    job.requested_by = requested_by
    # Heard from before it exists: another request must not take it for a dead job.
    _progress_set(progress_key(job), WAITING)
    try:
        with transaction.atomic():
            job.save()
    except IntegrityError:
        _progress_delete(progress_key(job))
        return None
    _finished_prune(kind=kind, study_id=study_id)
    return job


def job_fail(*, job: Job, error: str) -> None:
    """Record a job that could not be started (no broker to take its task) as failed, with
    the message its page shows."""
    Job.objects.filter(pk=job.pk).update(
        state=Job.State.FAILED, error=error, finished_at=timezone.now()
    )


def job_discard(*, job: Job) -> None:
    """Remove a job that never started (what it needed could not be kept for it)."""
    Job.objects.filter(pk=job.pk).delete()
    _progress_delete(progress_key(job))


def job_file_record(*, job: Job, recorded: dict) -> None:
    """Record a job's written file on its row (``jobs.files.job_file_write``)."""
    Job.objects.filter(pk=job.pk).update(**recorded)
    for field, value in recorded.items():
        setattr(job, field, value)


def job_file_forget(*, job_id: int, stored: str) -> bool:
    """Say on the job that its file ``stored`` is gone; False if the row names another file
    (or none) by now, and the file is then not this call's to remove."""
    return bool(Job.objects.filter(pk=job_id, file_path=stored).update(file_path=""))


def _finished_prune(*, kind: str, study_id: int) -> None:
    """Keep the study's latest finished jobs of the kind, ``JOBS_KEPT`` with the one just
    started: a client pressing a button in a loop must not grow the table without end."""
    finished = Job.objects.filter(kind=kind, study_id=study_id).exclude(state=Job.State.RUNNING)
    old = finished.order_by("-created_at", "-pk").values_list("pk", flat=True)[JOBS_KEPT - 1 :]
    pruned = Job.objects.filter(pk__in=list(old))
    job_files_remove(jobs=pruned)
    pruned.delete()


def job_active(*, kind: str, study_id: int, name: str = "") -> Job | None:
    """The study's active job of the kind (and name), if it is still heard from; one heard
    from no more is recorded as stopped, and None returned."""
    job = Job.objects.filter(
        kind=kind, study_id=study_id, name=name, state=Job.State.RUNNING
    ).first()
    if job is None:
        return None
    if _progress_get(progress_key(job)) is not None or not job_stopped_record(job=job):
        job.refresh_from_db()  # alive, or it ended just now
        return job if job.is_active else None
    return None


def job_stopped_record(*, job: Job) -> bool:
    """Record an active job heard from no more as stopped: once said, it stays so (a run
    that starts later gives up, see ``job_execute``). False if it had ended meanwhile."""
    active = Job.objects.filter(pk=job.pk, state=Job.State.RUNNING)
    return bool(
        active.update(state=Job.State.STOPPED, error=STOPPED[job.kind], finished_at=timezone.now())
    )


class _Reporter:
    """The progress callback a job's work is given: ``report(stage, done, total, message)``."""

    def __init__(self, job: Job):
        self.job = job
        self.key = progress_key(job)
        self.stage = ""
        self.at = 0.0
        self.value = WAITING.copy()

    def __call__(self, stage: str, done: int, total: int, message: str = "") -> None:
        # The first report comes once the work holds what it needs (the study's lock).
        # Should the job have been recorded as stopped while it waited (its page said
        # "nothing was kept"), it must not go on after all.
        running = Job.objects.filter(pk=self.job.pk, state=Job.State.RUNNING)
        if not self.stage and not running.exists():
            raise JobStopped(STOPPED[self.job.kind])
        now = time.monotonic()
        if stage == self.stage and now - self.at < PROGRESS_INTERVAL and done < total:
            return
        self.stage, self.at = stage, now
        self.value = {"stage": stage, "done": done, "total": total, "message": message}
        _progress_set(self.key, self.value)


def job_execute(*, job_id: int, work: Callable[[Job, Callable], dict]) -> Job | None:
    """Run ``work(job, report)`` as the job, with a heartbeat, and record how it ended.

    ``work`` returns the job's result, or raises ``JobFailed`` with the user's message; any
    other error is recorded as the server's and raised again. None when the job is not
    running (ended already: a task delivered twice; recorded as stopped; pruned since).
    """
    job = Job.objects.select_related("requested_by").filter(pk=job_id).first()
    if job is None or job.state != Job.State.RUNNING:
        return None
    Job.objects.filter(pk=job.pk).update(started_at=timezone.now())
    report = _Reporter(job)
    finished = threading.Event()

    def heartbeat() -> None:
        while not finished.wait(HEARTBEAT_SECONDS):
            _progress_set(report.key, report.value)

    threading.Thread(target=heartbeat, name=f"job-heartbeat-{job.uuid}", daemon=True).start()
    state, result, error = Job.State.FAILED, {}, SERVER_ERROR[job.kind]
    try:
        result = work(job, report) or {}
        state, error = Job.State.DONE, ""
    except JobStopped as stopped:
        state, error = Job.State.STOPPED, str(stopped)
    except JobFailed as failed:
        result, error = failed.result, str(failed)
    except Exception:
        logger.exception("%s job %s failed", job.get_kind_display(), job.uuid)
        raise
    finally:
        finished.set()
        # A job that did its work says so, whatever was recorded meanwhile.
        last = report.value
        Job.objects.filter(pk=job.pk).update(
            state=state,
            result=result,
            error=error,
            done=last["done"],
            total=last["total"],
            message=last["message"][:200],
            finished_at=timezone.now(),
        )
        _progress_delete(report.key)
    job.refresh_from_db()
    return job


def job_status(*, job: Job) -> dict:
    """Where the job is, as JSON for the poller and the API: its state, its stage and
    ``done`` of ``total`` with a line saying so while it runs, its error once it failed or
    stopped, its result once done."""
    status = {
        "state": job.state,
        "stage": "",
        "done": job.done,
        "total": job.total,
        "message": job.message,
        "error": job.error,
        "result": job.result,
    }
    if job.is_active:
        progress = _progress_get(progress_key(job))
        if progress is not None:
            status.update(progress)
        elif job_stopped_record(job=job):
            status.update(state=Job.State.STOPPED, error=STOPPED[job.kind])
        else:  # it ended between the two reads: say how
            job.refresh_from_db()
            return job_status(job=job)
    return status
