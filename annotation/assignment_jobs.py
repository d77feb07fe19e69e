"""Assign as a job of the job runner (``jobs``), with its progress.

``annotation.services.assignment.study_assign`` is the rule; a job only runs it, in its one
transaction (all or nothing), and reports how far it has come through its progress
callback. Every Assign goes through ``assignment_job_start``: the raters page, the API and
the ``assign_cases`` command.

Where it runs: a design of fewer than ``settings.ASSIGN_JOB_FROM`` assignments (a fraction
of a second) runs inside the request that asked for it; a larger one where ``JOBS_RUN``
says (the Celery worker, a thread after the response, or inline in the tests). The page
behaves the same either way: it shows the progress while a job runs, then the raters page
with the result.

Two presses at once, or a press while a job runs, start one job: a study has at most one
active Assign job (the runner's constraint), and the second press is shown the first's
progress. Should two runs still meet (the command next to a job, a job declared stopped
that was only slow), ``study_assign`` locks the study row exclusively before it reads what
is assigned (on SQLite, transactions take the write lock when they begin), so the second
run plans on the first's committed result and adds nothing twice.
"""

from django.conf import settings
from django.db import IntegrityError
from django.db.models import Max

from annotation.selectors.imported import imported_ratings_held
from annotation.services.assignment import study_assign
from jobs.models import Job
from jobs.runner import job_schedule
from jobs.services import (
    JobFailed,
    job_active,
    job_create,
    job_execute,
    job_fail,
    job_status,
)
from studies.errors import ApplicationError
from studies.models import TAKES_NEW_CASES, Membership, Study, TestCase

UNREACHABLE = (
    "The assignment could not be started (the task queue is unreachable); nothing was "
    "assigned. Try again in a moment."
)


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


def assignment_job_running(*, study: Study) -> Job | None:
    """The study's running Assign job, if it is still heard from."""
    return job_active(kind=Job.Kind.ASSIGN, study_id=study.pk)


def assignment_job_of(*, study: Study, job_uuid) -> Job | None:
    """The study's Assign job with this UUID; None for another study's."""
    return Job.objects.filter(kind=Job.Kind.ASSIGN, study_id=study.pk, uuid=job_uuid).first()


def assignment_job_start(*, study: Study, actor, inline: bool | None = None) -> Job:
    """Start Assign for the study, or return its job that is running already.

    The job runs inside this call when ``inline`` is true, or when it is None and the
    design is small (see the module docstring); it is then done or failed on return.
    Otherwise it is scheduled after the current transaction commits and returned running.
    """
    if inline is None:
        inline = assignment_design_size(study=study) < settings.ASSIGN_JOB_FROM
    for _ in range(3):
        running = assignment_job_running(study=study)
        if running is not None:
            return running
        job = job_create(kind=Job.Kind.ASSIGN, study_id=study.pk, requested_by=actor)
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


def _stage_message(stage: str, done: int, total: int) -> str:
    if stage == "planning":
        return f"Planning: {done} of {total} test cases"
    return f"Writing: the cases of {done} of {total} raters"


def assignment_auto_start(*, study_id: int) -> Job | None:
    """Give a study's raters their cases by its design, with no one pressing Assign.

    Called once a change that may leave raters without cases has committed: the study began
    to accept ratings (pilot, open, reopen), or a rater joined one that does. Nothing when
    the study does not accept ratings or has no active rater or test case yet. Safe to call
    twice at once: a running Assign job is returned (it picks up every rater who joined
    before it locked the study; ``assignment_job_run`` starts another for those who joined
    while it ran), and ``study_assign`` adds nothing twice.
    """
    study = Study.objects.filter(pk=study_id).first()
    if study is None or not study.accepts_ratings:
        return None
    if imported_ratings_held(study_id=study.pk):
        return None  # its raters were imported with their ratings; Assign says why
    raters = study.memberships.filter(
        TAKES_NEW_CASES, role=Membership.Role.RATER, status=Membership.Status.ACTIVE
    )
    if not raters.exists() or not study.test_cases.filter(purpose=TestCase.Purpose.SAMPLE).exists():
        return None
    return assignment_job_start(study=study, actor=None)


def assignment_last_failure(*, study: Study) -> str:
    """Why the study's latest Assign job ended without assigning (it failed or stopped), or
    "" when it did not: with no one pressing Assign, the Raters page is where a coordinator
    learns why a rater still has no cases (too few raters for the design, say)."""
    last = Job.objects.filter(kind=Job.Kind.ASSIGN, study_id=study.pk).first()  # newest
    if last is None or last.state not in (Job.State.FAILED, Job.State.STOPPED):
        return ""
    return last.error


def assignment_in_progress(*, study: Study) -> bool:
    """True while an Assign job of the study runs (a rater with no case yet has them on
    the way). Reads only, unlike ``assignment_job_running``: for the rater's pages."""
    return Job.objects.filter(
        kind=Job.Kind.ASSIGN, study_id=study.pk, state=Job.State.RUNNING
    ).exists()


def assignment_job_run(*, job_id: int) -> None:
    """The job: ``study_assign`` in its one transaction, then how it ended.

    A rater who joined while the job ran (after it read the raters) and was told that this
    job was running gets a new job once this one has ended.
    """

    seen = {"last": 0}

    def work(job: Job, report) -> dict:
        study = Study.objects.get(pk=job.study_id)
        try:
            created = study_assign(
                study=study,
                actor=job.requested_by,
                progress=lambda stage, done, total: report(
                    stage, done, total, _stage_message(stage, done, total)
                ),
            )
        except ApplicationError as error:
            raise JobFailed(str(error)) from error
        # The raters this run saw: it holds the study's lock, which every join takes too,
        # so a later rater has a higher id. Ids, not times: a rater the design had no case
        # for (every case at its k) joined before the job, and must not start another.
        raters = Membership.objects.filter(study_id=job.study_id, role=Membership.Role.RATER)
        seen["last"] = raters.aggregate(last=Max("pk"))["last"] or 0
        return {"created": created}

    job = job_execute(job_id=job_id, work=work)
    if job is None or job.state != Job.State.DONE:
        return
    joined_meanwhile = Membership.objects.filter(
        study_id=job.study_id,
        role=Membership.Role.RATER,
        status=Membership.Status.ACTIVE,
        pk__gt=seen["last"],
        assignments__isnull=True,
    )
    if joined_meanwhile.exists():
        assignment_auto_start(study_id=job.study_id)


def assignment_job_status(*, job: Job) -> dict:
    """Where the job is: running (its stage, done of total), done (the new cases per
    rater), failed or stopped (with the reason); JSON for the page's poller and the API."""
    status = job_status(job=job)
    created = status["result"].get("created", {})
    return {
        **status,
        "created": created,
        "assigned": sum(created.values()),
        "problem": status["error"],
    }


def _schedule(job: Job) -> None:
    from .tasks import assign_study  # the task module imports this one

    def unreachable() -> None:
        job_fail(job=job, error=UNREACHABLE)

    job_schedule(assign_study, args=[job.pk], on_unreachable=unreachable)
