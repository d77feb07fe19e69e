"""Assign as a job, with its progress: on the Celery worker, in a thread, or in the request.

``annotation.services.assignment.study_assign`` is the rule; a job only runs it, in its one
transaction (all or nothing), and reports how far it has come through its progress
callback. Every Assign goes through ``assignment_job_start``: the raters page, the API and
the ``assign_cases`` command.

Where it runs: a design of fewer than ``settings.ASSIGN_JOB_FROM`` assignments (a fraction
of a second) runs inside the request that asked for it; a larger one runs on the Celery
worker, or, with in-process tasks (the embedded default), in a thread after the response
(``ASSIGN_IN_PROCESS = "background"``; "inline" runs it in the request: the tests' choice).
The page behaves the same either way: it shows the progress while a job runs, then the
raters page with the result.

Two presses at once, or a press while a job runs, start one job: a study has at most one
running job (a partial unique constraint), and the second press is shown the first's
progress. Should two runs still meet (the command next to a job, a job declared stopped
that was only slow), ``study_assign`` locks the study row exclusively before it reads what
is assigned (on SQLite, transactions take the write lock when they begin), so the second
run plans on the first's committed result and adds nothing twice.
"""

import logging
import threading
import time
import uuid

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, close_old_connections, connection, transaction
from django.utils import timezone

from annotation.services.assignment import study_assign
from studies.errors import ApplicationError
from studies.models import Membership, Study, TestCase

from .models import AssignmentJob

logger = logging.getLogger(__name__)

# A running job's progress lapses this long after it was last heard from: the job is then
# reported as stopped (its transaction was undone with its process).
PROGRESS_TIMEOUT = 120
# At most one progress write per this many seconds (and one per stage).
PROGRESS_INTERVAL = 0.5
# While its process lives, a run says so this often, whatever it is doing: waiting for the
# study's lock (behind a case import, say) is not being stopped.
HEARTBEAT_SECONDS = 20
# Jobs kept per study, the latest (their pages show how each ended).
JOBS_KEPT = 20

STOPPED = "The assignment stopped before it finished; nothing was assigned. Press Assign again."
UNREACHABLE = (
    "The assignment could not be started (the task queue is unreachable); nothing was "
    "assigned. Try again in a moment."
)
SERVER_ERROR = "The assignment stopped on an error of the server; nothing was assigned."


def _progress_key(job_uuid) -> str:
    return f"assignment-job:{job_uuid}"


# The progress lives in the cache (Redis in production). Assign must not depend on it: when
# the cache cannot be reached the job runs all the same, and a running job is taken to be
# alive (``UNKNOWN``) rather than stopped, so that no second job starts beside it.
UNKNOWN = {"stage": "unknown", "done": 0, "total": 0}


def _progress_set(key: str, value: dict) -> None:
    try:
        cache.set(key, value, PROGRESS_TIMEOUT)
    except Exception:  # noqa: BLE001 - see above
        logger.warning("The progress of %s could not be written to the cache", key)


def _progress_get(key: str) -> dict | None:
    try:
        return cache.get(key)
    except Exception:  # noqa: BLE001 - see above
        logger.warning("The progress of %s could not be read from the cache", key)
        return UNKNOWN


def _progress_delete(key: str) -> None:
    try:
        cache.delete(key)
    except Exception:  # noqa: BLE001 - it lapses by itself
        logger.warning("The progress of %s could not be removed from the cache", key)


def assignment_design_size(*, study: Study) -> int:
    """Assignments the study's design asks for: its sample cases times the raters per case
    (or the active raters, when every rater rates every case). Two counts."""
    cases = study.test_cases.filter(purpose=TestCase.Purpose.SAMPLE).count()
    per_case = study.raters_per_item or (
        study.memberships.filter(
            role=Membership.Role.RATER, status=Membership.Status.ACTIVE
        ).count()
    )
    return cases * per_case


def assignment_job_running(*, study: Study) -> AssignmentJob | None:
    """The study's running job, if it is still heard from."""
    job = study.assignment_jobs.filter(state=AssignmentJob.State.RUNNING).first()
    if job is None or _progress_get(_progress_key(job.uuid)) is None:
        return None
    return job


def assignment_job_start(*, study: Study, actor, inline: bool | None = None) -> AssignmentJob:
    """Start Assign for the study, or return its job that is running already.

    The job runs inside this call when ``inline`` is true, or when it is None and the
    design is small (see the module docstring); it is then done or failed on return.
    Otherwise it is scheduled after the current transaction commits and returned running.
    """
    if inline is None:
        inline = assignment_design_size(study=study) < settings.ASSIGN_JOB_FROM
    for _ in range(3):
        running = _running_or_stopped(study)
        if running is not None:
            return running
        job = _job_create(study=study, actor=actor)
        if job is not None:
            break
        # Another request started one a moment ago: show that one (or, should it have
        # ended meanwhile, start again: it finds what that one assigned).
    else:
        raise IntegrityError("Could not start an assignment job.")
    if inline:
        assignment_job_run(job_id=job.pk)
    else:
        _schedule(job)
    job.refresh_from_db()
    return job


def _job_create(*, study: Study, actor) -> AssignmentJob | None:
    """A new running job, or None when the study has one already."""
    job_uuid = uuid.uuid4()
    # Heard from before it exists: another request must not take it for a dead job.
    key = _progress_key(job_uuid)
    _progress_set(key, {"stage": "waiting", "done": 0, "total": 0})
    try:
        with transaction.atomic():
            job = AssignmentJob.objects.create(uuid=job_uuid, study=study, requested_by=actor)
    except IntegrityError:
        _progress_delete(key)
        return None
    _finished_prune(study)
    return job


def _finished_prune(study: Study) -> None:
    """Keep the study's latest finished jobs, ``JOBS_KEPT`` with the one just started: a
    client pressing Assign in a loop must not grow the table without end. What Assign did
    stays in the history."""
    finished = study.assignment_jobs.exclude(state=AssignmentJob.State.RUNNING)
    old = finished.order_by("-started_at", "-pk").values_list("pk", flat=True)[JOBS_KEPT - 1 :]
    AssignmentJob.objects.filter(pk__in=list(old)).delete()


def _running_or_stopped(study: Study) -> AssignmentJob | None:
    """The running job; one heard from no more is recorded as stopped, and None returned."""
    job = study.assignment_jobs.filter(state=AssignmentJob.State.RUNNING).first()
    if job is None:
        return None
    if _progress_get(_progress_key(job.uuid)) is not None:
        return job
    _stopped_record(job)
    return None


def _stopped_record(job: AssignmentJob) -> None:
    """Record a running job heard from no more as stopped: once said, it stays so (a run
    that starts or takes the study's lock later gives up, see ``assignment_job_run``)."""
    AssignmentJob.objects.filter(pk=job.pk, state=AssignmentJob.State.RUNNING).update(
        state=AssignmentJob.State.STOPPED, problem=STOPPED, finished_at=timezone.now()
    )


class _JobStopped(ApplicationError):
    """The job was recorded as stopped before it could take the study's lock."""


def assignment_job_run(*, job_id: int) -> None:
    """The job: ``study_assign`` in its one transaction, then how it ended."""
    job = AssignmentJob.objects.select_related("study", "requested_by").filter(pk=job_id).first()
    if job is None or job.state != AssignmentJob.State.RUNNING:
        # Ended already (a task delivered twice), recorded as stopped, or, stopped long
        # ago, pruned since (``_finished_prune``).
        return
    key = _progress_key(job.uuid)
    last = {"stage": "", "at": 0.0, "value": {"stage": "waiting", "done": 0, "total": 0}}

    def progress(stage: str, done: int, total: int) -> None:
        # The first report comes with the study's lock held. Should the job have been
        # recorded as stopped while it waited (its page said "nothing was assigned"), it
        # must not assign after all.
        running = AssignmentJob.objects.filter(pk=job.pk, state=AssignmentJob.State.RUNNING)
        if not last["stage"] and not running.exists():
            raise _JobStopped(STOPPED)
        now = time.monotonic()
        if stage == last["stage"] and now - last["at"] < PROGRESS_INTERVAL and done < total:
            return
        last.update(stage=stage, at=now, value={"stage": stage, "done": done, "total": total})
        _progress_set(key, last["value"])

    finished = threading.Event()

    def heartbeat() -> None:
        while not finished.wait(HEARTBEAT_SECONDS):
            _progress_set(key, last["value"])

    threading.Thread(target=heartbeat, name="assignment-job-heartbeat", daemon=True).start()
    state, created, problem = AssignmentJob.State.FAILED, {}, SERVER_ERROR
    try:
        created = study_assign(study=job.study, actor=job.requested_by, progress=progress)
        state, problem = AssignmentJob.State.DONE, ""
    except _JobStopped as error:
        state, problem = AssignmentJob.State.STOPPED, str(error)
    except ApplicationError as error:
        problem = str(error)
    except Exception:
        logger.exception("Assignment job %s failed", job.uuid)
        raise
    finally:
        finished.set()
        # A job that took the lock assigned, and says so, whatever was recorded meanwhile.
        AssignmentJob.objects.filter(pk=job.pk).update(
            state=state, created=created, problem=problem, finished_at=timezone.now()
        )
        _progress_delete(key)


def assignment_job_status(*, job: AssignmentJob) -> dict:
    """Where the job is: running (its stage, done of total), done (the new cases per
    rater), failed or stopped (with the reason); JSON for the page's script and the API."""
    status = {
        "state": job.state,
        "stage": "",
        "done": 0,
        "total": 0,
        "created": job.created,
        "assigned": sum(job.created.values()),
        "problem": job.problem,
    }
    if job.state == AssignmentJob.State.RUNNING:
        progress = _progress_get(_progress_key(job.uuid))
        if progress is None:
            _stopped_record(job)
            status.update(state=AssignmentJob.State.STOPPED, problem=STOPPED)
        else:
            status.update(progress)
    return status


def _schedule(job: AssignmentJob) -> None:
    from .tasks import assign_study

    if not settings.CELERY_TASK_ALWAYS_EAGER:
        try:
            assign_study.delay_on_commit(job.pk)
        except Exception:  # noqa: BLE001 - the broker is down: say so, assign nothing
            logger.warning("Could not enqueue assignment job %s", job.uuid)
            _progress_delete(_progress_key(job.uuid))
            AssignmentJob.objects.filter(pk=job.pk).update(
                state=AssignmentJob.State.FAILED, problem=UNREACHABLE, finished_at=timezone.now()
            )
    elif settings.ASSIGN_IN_PROCESS == "inline":
        assignment_job_run(job_id=job.pk)
    else:
        transaction.on_commit(
            lambda: threading.Thread(
                target=_run, args=(job.pk,), name="assignment-job", daemon=True
            ).start()
        )


def _run(job_id: int) -> None:
    close_old_connections()
    try:
        assignment_job_run(job_id=job_id)
    except Exception:  # noqa: BLE001 - logged; the job records that it failed
        logger.exception("Assignment job %s failed", job_id)
    finally:
        connection.close()
