"""Page statistics that take seconds (a bootstrap: the ranking, a judge's calibration; the
mixed-effects fits of the robustness check), computed as a job of the runner instead of
inside the request that shows them.

Each result is kept for the study's analysis inputs as they are
(``selectors.computed_for_inputs``). A page's GET only reads (``analysis_shown``): the
kept result; else the job computing it (its progress) or the job that failed on these
inputs (why); else that it is not computed, with a button. The button's POST starts the
job (``analysis_job_start``), which computes the result and keeps it for the page. With
``JOBS_RUN = "inline"`` the job runs inside that request, and the page it sends back to
shows the result.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.db.models import Count, Max

from agreement.judges.prompts import pairwise_dimension
from agreement.models import Judge, JudgeOutput
from agreement.selectors import PAGE_RESULT_SECONDS, computed_for_inputs
from jobs.models import Job
from jobs.runner import job_schedule
from jobs.services import STOPPED, job_active, job_create, job_execute, job_heard_from, job_status
from studies.models import Study
from studies.services.webhooks import webhook_event_announce


@dataclass(frozen=True)
class Analysis:
    """One page's statistics of a study: their name (the kept result's and the job's), what
    else they read beside the study's analysis inputs, and the call that computes them."""

    study: Study
    name: str
    compute: Callable[[], Any]
    extra: Any = None


@dataclass(frozen=True)
class AnalysisPending:
    """What a page shows in place of statistics not kept for the inputs as they are: the
    job computing them (its progress), the job that failed or stopped on them (why), or
    no job at all (a coordinator's button starts one)."""

    job: Job | None = None
    status: dict | None = None


def ranking_unavailable(*, study: Study) -> dict | None:
    """Why the study has no ranking to compute, told without computing: {"available",
    "reason"} as ``study_ranking`` says it, or None."""
    if pairwise_dimension(study) is None:
        return {"available": False, "reason": "The rubric has no pairwise preference."}
    if not study.is_unblinded:
        return {
            "available": False,
            "reason": "The ranking names the systems: it is shown once the study is unblinded.",
        }
    return None


def ranking_analysis(*, study: Study) -> Analysis:
    """The ranking of the systems (``arena.study_ranking``) as a page's analysis."""
    from .arena import study_ranking  # it imports this one

    return Analysis(study=study, name="ranking", compute=lambda: study_ranking(study=study))


def judge_calibration_analysis(*, study: Study, judge: Judge) -> Analysis:
    """A judge's calibration (``judges.calibration.judge_calibration``) as a page's
    analysis, kept for the same humans' data and judge outputs (its bootstrap takes seconds
    at tens of thousands of cases)."""
    from agreement.judges.calibration import judge_calibration  # numpy: on the first use

    outputs = JudgeOutput.objects.filter(judge=judge).aggregate(
        count=Count("pk"), last=Max("imported_at"), last_id=Max("pk")
    )
    return Analysis(
        study=study,
        name=f"judge-calibration:{judge.pk}",
        extra=outputs,
        compute=lambda: judge_calibration(study=study, judge=judge),
    )


def robustness_unavailable(*, study: Study) -> dict | None:
    """Why the study has no robustness check to compute yet, or None: it names the systems,
    so it waits for the unblinding."""
    if not study.is_unblinded:
        return {
            "available": False,
            "reason": "The robustness check compares the systems: it is computed once the "
            "study is unblinded.",
        }
    return None


def study_robustness(*, study: Study) -> dict:
    """The mixed-effects robustness check (``robustness.robustness_check``) of the study's
    ratings as the comparison reads them; refused before unblinding."""
    from agreement.selectors.comparison import study_comparison_data
    from agreement.selectors.ratings import study_ratings

    from .robustness import robustness_check

    unavailable = robustness_unavailable(study=study)
    if unavailable is not None:
        return unavailable
    data = study_ratings(study=study, pilot=study.current_phase == "pilot")
    comparison = study_comparison_data(study=study, data=data)
    if comparison is None:
        return {"available": False, "reason": "No submitted ratings of sample cases yet."}
    return robustness_check(comparison)


def robustness_analysis(*, study: Study) -> Analysis:
    """The robustness check as an analysis: one job per study and inputs."""
    return Analysis(study=study, name="robustness", compute=lambda: study_robustness(study=study))


def _analysis_named(study: Study, name: str) -> Analysis:
    """The analysis a job's name stands for: "ranking", "robustness",
    "judge-calibration:<judge pk>"."""
    analysis, _, argument = name.partition(":")
    if analysis == "judge-calibration":
        judge = Judge.objects.get(study=study, pk=int(argument))
        return judge_calibration_analysis(study=study, judge=judge)
    if analysis == "ranking":
        return ranking_analysis(study=study)
    if analysis == "robustness":
        return robustness_analysis(study=study)
    raise ValueError(f"No analysis is named {name!r}")


def _job_name(name: str, inputs: str) -> str:
    return f"{name}@{inputs[:20]}"


def analysis_shown(*, analysis: Analysis) -> Any:
    """The analysis's result kept for the study's inputs as they are, or what its page
    shows instead (``AnalysisPending``). A read: it starts nothing and writes nothing."""
    study = analysis.study
    kept = computed_for_inputs(study=study, name=analysis.name, extra=analysis.extra)
    if kept.result is not None:
        return kept.result
    job = Job.objects.filter(
        kind=Job.Kind.ANALYSIS, study_id=study.pk, name=_job_name(analysis.name, kept.inputs)
    ).first()
    if job is None:
        return AnalysisPending()
    if job.state == Job.State.DONE:
        # It ended after the result was read, or its result has lapsed from the cache since.
        result = cache.get(kept.key)
        return AnalysisPending() if result is None else result
    # ``job_heard_from`` rather than ``job_status``, which records a job heard from no more
    # as stopped: a page's GET writes nothing (the Compute button's POST records it).
    if job.is_active and not job_heard_from(job=job):
        status = {"state": Job.State.STOPPED, "error": STOPPED[Job.Kind.ANALYSIS]}
        return AnalysisPending(job=job, status=status)
    return AnalysisPending(job=job, status=job_status(job=job))


def analysis_job_start(*, analysis: Analysis, requested_by=None) -> Job | None:
    """Start the analysis for the study's inputs as they are as a job, or find the one
    running already; None when its result is kept already. One that failed for the same
    inputs is not run again (its page says why; a change of the inputs runs it anew)."""
    from agreement.tasks import compute_analysis  # the task module imports this one

    study = analysis.study
    kept = computed_for_inputs(study=study, name=analysis.name, extra=analysis.extra)
    if kept.result is not None:
        return None
    job_name = _job_name(analysis.name, kept.inputs)
    jobs = Job.objects.filter(kind=Job.Kind.ANALYSIS, study_id=study.pk, name=job_name)
    job = job_active(kind=Job.Kind.ANALYSIS, study_id=study.pk, name=job_name)
    if job is None:
        failed = jobs.filter(state=Job.State.FAILED).first()
        job = failed or job_create(
            kind=Job.Kind.ANALYSIS, study_id=study.pk, name=job_name, requested_by=requested_by
        )
        if job is None:  # another request started it a moment ago
            job = jobs.first()
        elif job is not failed:
            job_schedule(compute_analysis, args=[job.pk])
    return job


def analysis_job_run(*, job_id: int) -> None:
    """The job: compute the analysis its name says, and keep it for the inputs it read."""

    def work(job: Job, report) -> dict:
        study = Study.objects.get(pk=job.study_id)
        analysis = _analysis_named(study, job.name.rpartition("@")[0])
        report("computing", 0, 1, "Computing the statistics")
        kept = computed_for_inputs(study=study, name=analysis.name, extra=analysis.extra)
        if kept.result is None:
            cache.set(kept.key, analysis.compute(), PAGE_RESULT_SECONDS)
        webhook_event_announce(study_id=study.pk, event="analysis.ready", analysis=analysis.name)
        return {}

    job_execute(job_id=job_id, work=work)
