"""A job's life: created running (one per study and kind), its heartbeat and progress while
it runs, how it ended, and where it is for the pages' poller and the API. A job's row is
written here only (its file too, ``job_file_write``).

Whether a running job is alive is its heartbeat in its row: a thread of its run writes the
database's time there every ``HEARTBEAT_SECONDS``, on a connection of its own, whatever the
work is doing (waiting for the study's lock is not being stopped). A job not heard from for
``PROGRESS_TIMEOUT`` is recorded as stopped, by one conditional statement, and nothing of it
was kept. The heartbeat is in the database, not in the cache (Redis), so a restart of the
broker and cache does not make a live job look dead, nor let a second run start beside it.

Two runs of one job never work at once, by two holds of the database rather than a check:
the partial unique constraint on the running jobs of a study, kind and name; and, from its
first progress report, a run that works in one transaction locks its own row until that
transaction ends. A run that finds its row stopped at that report gives up; a row a live
transaction has locked is never recorded as stopped (``skip_locked``).

Its progress while it runs (stage, done of total) is kept in the cache, often and cheaply,
and also written with each heartbeat into the row, so a page shows the last of it after the
cache was emptied. On SQLite (the embedded default) a second connection cannot write beside
the job's transaction, so the heartbeat may not reach the row there; the cache (this
process's memory, where the job runs in a thread) then vouches for it: a job is heard from
when either says so. A job must not depend on the cache: when it is down the job runs all
the same and the row decides.
"""

import logging
import threading
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import IO, TypedDict

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.db.models.functions import Now
from django.utils import timezone

from .files import (
    file_store,
    file_unlink,
    job_file_expired,
    job_files_root,
    parts_expire,
)
from .models import Job

logger = logging.getLogger(__name__)

# A running job is taken to have died this long after it was last heard from.
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
    except Exception:  # see the module docstring: the row decides
        logger.warning("The progress of %s could not be read from the cache", key)
        return None


def _progress_delete(key: str) -> None:
    try:
        cache.delete(key)
    except Exception:  # it lapses by itself
        logger.warning("The progress of %s could not be removed from the cache", key)


def _lapsed() -> Q:
    """A row whose run has not been heard from for ``PROGRESS_TIMEOUT``, by the database's
    clock (the one every heartbeat writes, whichever host it runs on), or never (a job
    created before the heartbeat was kept in the row)."""
    cutoff = Now() - timedelta(seconds=PROGRESS_TIMEOUT)
    return Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=cutoff)


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
    job.heartbeat_at = Now()  # heard from as it is created: it waits for its worker
    _progress_set(progress_key(job), WAITING)
    try:
        with transaction.atomic():
            job.save()
    except IntegrityError:
        _progress_delete(progress_key(job))
        return None
    job.refresh_from_db(fields=["heartbeat_at"])
    _finished_prune(kind=kind, study_id=study_id)
    return job


def job_fail(*, job: Job, error: str) -> None:
    """Record a job that could not be started (no broker to take its task) as failed, with
    the message its page shows."""
    Job.objects.filter(pk=job.pk, state=Job.State.RUNNING).update(
        state=Job.State.FAILED, error=error, finished_at=timezone.now()
    )


def job_discard(*, job: Job) -> None:
    """Remove a job that never started (what it needed could not be kept for it, or its
    task handed over): nothing of it is kept."""
    Job.objects.filter(pk=job.pk, started_at__isnull=True).delete()
    _progress_delete(progress_key(job))


def _finished_prune(*, kind: str, study_id: int) -> None:
    """Keep the study's latest finished jobs of the kind, ``JOBS_KEPT`` with the one just
    started: a client pressing a button in a loop must not grow the table without end."""
    finished = Job.objects.filter(kind=kind, study_id=study_id).exclude(state=Job.State.RUNNING)
    old = finished.order_by("-created_at", "-pk").values_list("pk", flat=True)[JOBS_KEPT - 1 :]
    pruned = Job.objects.filter(pk__in=list(old))
    job_files_remove(jobs=pruned)
    pruned.delete()


def job_heard_from(*, job: Job) -> bool:
    """Whether a running job's run has been heard from lately (its row's heartbeat, or its
    progress in the cache): a read that records nothing, for pages' GETs."""
    if _progress_get(progress_key(job)) is not None:
        return True
    return Job.objects.filter(pk=job.pk, state=Job.State.RUNNING).exclude(_lapsed()).exists()


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
    that starts later gives up, see ``_Reporter``). False if it was heard from lately, its
    row is locked by its live run's transaction, or it had ended meanwhile."""
    with transaction.atomic():
        # One statement decides, against the heartbeat as the database holds it; a row a
        # live run holds is skipped, not waited for.
        lapsed = Job.objects.select_for_update(skip_locked=True).filter(
            _lapsed(), pk=job.pk, state=Job.State.RUNNING
        )
        if not list(lapsed.values_list("pk", flat=True)):
            return False
        return bool(
            Job.objects.filter(pk=job.pk).update(
                state=Job.State.STOPPED, error=STOPPED[job.kind], finished_at=timezone.now()
            )
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
        # "nothing was kept"), it must not go on after all. Inside the work's transaction
        # the row stays locked until it ends, so from now on it cannot be recorded as
        # stopped (``job_stopped_record``), and no second run can start.
        if not self.stage:
            running = Job.objects.filter(pk=self.job.pk, state=Job.State.RUNNING)
            if connection.in_atomic_block:
                running = running.select_for_update()
            if not list(running.values_list("pk", flat=True)):
                raise JobStopped(STOPPED[self.job.kind])
        now = time.monotonic()
        if stage == self.stage and now - self.at < PROGRESS_INTERVAL and done < total:
            return
        self.stage, self.at = stage, now
        self.value = {"stage": stage, "done": done, "total": total, "message": message}
        _progress_set(self.key, self.value)


def _heartbeat_write(*, job: Job, progress: Progress) -> None:
    """The run is alive: the database's time into its row, with its latest progress; and
    its progress into the cache again (an emptied cache learns it back). Skipped when its
    own transaction holds the row: that lock says it is alive."""
    _progress_set(progress_key(job), progress)
    try:
        with transaction.atomic():
            mine = Job.objects.select_for_update(skip_locked=True).filter(
                pk=job.pk, state=Job.State.RUNNING
            )
            if list(mine.values_list("pk", flat=True)):
                Job.objects.filter(pk=job.pk).update(
                    heartbeat_at=Now(),
                    done=progress["done"],
                    total=progress["total"],
                    message=progress["message"][:200],
                )
    except Exception:  # the database is away a moment (or SQLite is locked): next time
        logger.warning("The heartbeat of job %s could not be written", job.uuid, exc_info=True)


def job_execute(*, job_id: int, work: Callable[[Job, Callable], dict]) -> Job | None:
    """Run ``work(job, report)`` as the job, with a heartbeat, and record how it ended.

    ``work`` returns the job's result, or raises ``JobFailed`` with the user's message; any
    other error is recorded as the server's and raised again. None when the job is not
    running (ended already: a task delivered twice; recorded as stopped; pruned since).
    """
    job = Job.objects.select_related("requested_by").filter(pk=job_id).first()
    if job is None or job.state != Job.State.RUNNING:
        return None
    started = Job.objects.filter(pk=job.pk, state=Job.State.RUNNING).update(
        started_at=timezone.now(), heartbeat_at=Now()
    )
    if not started:
        return None  # recorded as stopped a moment ago
    report = _Reporter(job)
    finished = threading.Event()

    def heartbeat() -> None:
        try:
            while not finished.wait(HEARTBEAT_SECONDS):
                _heartbeat_write(job=job, progress=report.value)
        finally:
            connection.close()  # this thread's own connection

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
    if not job.is_active:
        return status
    progress = _progress_get(progress_key(job))
    if progress is not None:
        status.update(progress)
    elif job_stopped_record(job=job):
        status.update(state=Job.State.STOPPED, error=STOPPED[job.kind])
    else:
        job.refresh_from_db()
        if not job.is_active:  # it ended between the two reads: say how
            return job_status(job=job)
        # Alive by its heartbeat, its progress gone with the cache: the last it wrote.
        status.update(stage="running", done=job.done, total=job.total, message=job.message)
    return status


# --- A job's file (an export) ----------------------------------------------------------------


def job_file_write(
    *, job: Job, name: str, content_type: str, write: Callable[[IO[bytes]], None]
) -> dict:
    """Write the job's file with ``write(file)`` (a seekable binary file), then record it on
    the job and remove the file of every earlier job of its study, kind and name.

    Returns what was recorded (for the job's result). Should ``write`` raise, nothing is
    kept and the error goes on.
    """
    stored = str(job.uuid)
    size, sha256 = file_store(stored=stored, write=write)
    recorded = {
        "file_path": stored,
        "file_name": name[:200],
        "file_size": size,
        "file_type": content_type[:100],
        "file_sha256": sha256,
    }
    Job.objects.filter(pk=job.pk).update(**recorded)
    for field, value in recorded.items():
        setattr(job, field, value)
    replaced = Job.objects.filter(
        kind=job.kind, study_id=job.study_id, name=job.name, created_at__lte=job.created_at
    ).exclude(pk=job.pk)
    job_files_remove(jobs=replaced)
    return {key: value for key, value in recorded.items() if key != "file_path"}


def job_file_path(*, job: Job):
    """Where the job's file is, or None when it has none (any more): never written, replaced,
    expired (removed now if it had: the shapes without beat remove them as they are
    asked for)."""
    if not job.file_path:
        return None
    if job_file_expired(job=job):
        job_files_remove(jobs=Job.objects.filter(pk=job.pk))
        job.file_path = ""
        return None
    return job_files_root() / job.file_path


def job_files_remove(*, jobs) -> int:
    """Remove the files of these jobs (a queryset), and say so on them; how many."""
    removed = 0
    for pk, stored in jobs.exclude(file_path="").values_list("pk", "file_path"):
        # The row first: a download that reads it after finds no file, rather than a file
        # that is gone under it (an open file stays readable until it is closed).
        if Job.objects.filter(pk=pk, file_path=stored).update(file_path=""):
            file_unlink(stored=stored)
            removed += 1
    return removed


def job_files_expire() -> int:
    """Remove every job file past its expiry (``JOB_FILES_HOURS`` after its job ended), and
    any temporary file left as long by a run that died while writing; how many files were
    removed. Beat runs it hourly; a file job's start runs it too (no beat in the embedded
    default)."""
    cutoff = timezone.now() - timedelta(hours=settings.JOB_FILES_HOURS)
    return job_files_remove(jobs=Job.objects.filter(finished_at__lte=cutoff)) + parts_expire()
