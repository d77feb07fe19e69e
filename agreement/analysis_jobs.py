"""Page statistics that take seconds (a bootstrap: the ranking, a judge's calibration),
computed as a job of the runner instead of inside the request that shows them.

``selectors.computed_for_inputs`` keeps each result for the study's analysis inputs as
they are. When a page finds none, it starts the analysis's job (one per study and
analysis) and shows its progress; the job computes the same call, which then finds
itself inside the job (``computing``) and stores the result for the page to read. With
``JOBS_RUN = "inline"`` the job runs inside the request, and the page shows the result.
"""

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass

from jobs.models import Job
from jobs.runner import job_schedule
from jobs.services import job_active, job_create, job_execute, job_status
from studies.models import Study

# Set while an analysis job computes: the cached call computes instead of starting a job.
computing: ContextVar[bool] = ContextVar("analysis_computing", default=False)


@dataclass(frozen=True)
class AnalysisPending:
    """What a page shows while the analysis's job runs."""

    job: Job
    status: dict


def study_ranking_kept(*, study: Study):
    """The ranking of the systems for the study's inputs as they are, or its job's progress."""
    from .analysis.arena import study_ranking  # both import the selectors, which import this module
    from .selectors import computed_for_inputs

    return computed_for_inputs(
        study=study, name="ranking", compute=lambda: study_ranking(study=study)
    )


def _analyses() -> dict[str, Callable[[Study, str], object]]:
    """By the part of a result's name before ":", the call that computes and keeps it."""
    from .judges.calibration import judge_calibration_report  # it imports the selectors
    from .models import Judge

    return {
        "ranking": lambda study, _: study_ranking_kept(study=study),
        "judge-calibration": lambda study, judge_pk: judge_calibration_report(
            study=study, judge=Judge.objects.get(study=study, pk=int(judge_pk))
        ),
    }


def analysis_job_start(*, study: Study, name: str, inputs: str) -> AnalysisPending:
    """Start the study's analysis ``name`` for its ``inputs`` (their digest) as a job, or
    find the one running already. One that failed for the same inputs is not run again
    (its page says why; a change of the inputs runs it anew)."""
    from .tasks import compute_analysis  # the task module imports this one

    job_name = f"{name}@{inputs[:20]}"
    jobs = Job.objects.filter(kind=Job.Kind.ANALYSIS, study_id=study.pk, name=job_name)
    job = job_active(kind=Job.Kind.ANALYSIS, study_id=study.pk, name=job_name)
    if job is None:
        failed = jobs.filter(state=Job.State.FAILED).first()
        job = failed or job_create(kind=Job.Kind.ANALYSIS, study_id=study.pk, name=job_name)
        if job is None:  # another request started it a moment ago
            job = jobs.first()
        elif job is not failed:
            job_schedule(compute_analysis, args=[job.pk])
    job.refresh_from_db()
    return AnalysisPending(job=job, status=job_status(job=job))


def analysis_job_run(*, job_id: int) -> None:
    """The job: compute the analysis its name says, kept for the inputs it was run on."""

    def work(job: Job, report) -> dict:
        analysis, _, argument = job.name.rpartition("@")[0].partition(":")
        study = Study.objects.get(pk=job.study_id)
        report("computing", 0, 1, "Computing the statistics (a bootstrap)")
        token = computing.set(True)
        try:
            _analyses()[analysis](study, argument)
        finally:
            computing.reset(token)
        return {}

    job_execute(job_id=job_id, work=work)
