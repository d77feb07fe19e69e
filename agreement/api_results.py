"""The HTTP API's results: the ranking of the systems (computed as a job, as its page does),
the study report as JSON (the page's numbers) and the report bundle (the page's zip).

Each calls what its page calls, under the same access rule (the study's coordinators), so
nothing here shows more than the page: before unblinding the ranking is refused with its
reason, and the report and the bundle name no system.
"""

from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import ErrorResponseSerializer, body_object, file_download
from core.api_jobs import JOB_PROGRESS_FIELDS, job_progress
from jobs.models import Job
from studies import access
from studies.errors import ApplicationError
from studies.models import Study

from .analysis.jobs import (
    Analysis,
    AnalysisPending,
    analysis_job_start,
    analysis_shown,
    ranking_analysis,
    ranking_unavailable,
)
from .report.bundle import report_bundle_response
from .report.sections import study_report

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}
# What the ranking's answer says of its computation.
UNAVAILABLE, NOT_COMPUTED, COMPUTING, FAILED, COMPUTED = (
    "unavailable",
    "not_computed",
    "computing",
    "failed",
    "computed",
)
ENDED = (Job.State.FAILED, Job.State.STOPPED)


class RankingUnavailable(ApplicationError):
    """The study has no ranking to compute (still blinded, or no pairwise preference)."""


RANKING_STATES = [UNAVAILABLE, NOT_COMPUTED, COMPUTING, FAILED, COMPUTED]

RankingSerializer = inline_serializer(
    "Ranking",
    {
        "state": serializers.ChoiceField(
            choices=RANKING_STATES,
            help_text="unavailable (see reason), not_computed (POST to compute), computing "
            "(GET again), failed (see reason), computed (see ranking)",
        ),
        "reason": serializers.CharField(),
        "n_resamples": serializers.IntegerField(
            help_text="bootstrap resamples of the intervals, as on the page and the report"
        ),
        "job": inline_serializer(
            "RankingJob",
            {
                "state": serializers.ChoiceField(choices=Job.State.values),
                **JOB_PROGRESS_FIELDS,
            },
            allow_null=True,
        ),
        "ranking": serializers.JSONField(
            allow_null=True,
            help_text="the ranking page's numbers once computed: systems, n_comparisons, "
            "matrix, ranking (rank, system, score, low, high, rank_low, rank_high), problem, "
            "n_degenerate, n_resamples; or available false with its reason",
        ),
    },
)


def analysis_state(*, analysis: Analysis, unavailable: dict | None) -> dict:
    """An analysis as its page shows it: refused with the reason (``unavailable``), kept
    for the data as they are (``result``), or the job computing it (its progress, or why it
    ended). A read: the ranking's and the robustness check's endpoints answer with it."""
    body = {"reason": "", "job": None, "result": None}
    if unavailable is not None:
        return {**body, "state": UNAVAILABLE, "reason": unavailable["reason"]}
    shown = analysis_shown(analysis=analysis)
    if not isinstance(shown, AnalysisPending):
        return {**body, "state": COMPUTED, "result": shown}
    if shown.job is None:
        return {**body, "state": NOT_COMPUTED}
    job = job_progress(shown.job, shown.status)
    if job["state"] in ENDED:
        return {**body, "state": FAILED, "reason": job["error"], "job": job}
    return {**body, "state": COMPUTING, "job": job}


def _ranking_body(study: Study) -> dict:
    """The ranking as its page shows it (``analysis_state``)."""
    from .stats.ranking import RANKING_RESAMPLES  # the statistics load numpy

    state = analysis_state(
        analysis=ranking_analysis(study=study), unavailable=ranking_unavailable(study=study)
    )
    ranking = state.pop("result")
    return {**state, "n_resamples": RANKING_RESAMPLES, "ranking": ranking}


@extend_schema(
    methods=["GET"],
    summary="The ranking of the systems (win matrix, Bradley-Terry with intervals)",
    description=(
        "As on the ranking page: once the study is unblinded and the ranking is computed "
        "for the data as they are. Until then `state` says why not (unavailable: blinded, "
        "or no pairwise preference; not_computed: POST to compute; computing: GET again)."
    ),
    responses={200: RankingSerializer, **ERRORS},
)
@extend_schema(
    methods=["POST"],
    summary="Start computing the ranking for the data as they are (a job)",
    description=(
        "The page's Compute button: 202 while the job runs (GET this address for its "
        "progress), 200 with the ranking once it is kept. Pressed again while it runs, it "
        "answers that job; 400 while the study has no ranking to compute (before unblinding "
        "the ranking would name the systems)."
    ),
    request=None,
    responses={200: RankingSerializer, 202: RankingSerializer, **ERRORS},
)
@api_view(["GET", "POST"])
def study_ranking(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    if request.method == "POST":
        body_object(request, fields=())
        unavailable = ranking_unavailable(study=study)
        if unavailable is not None:
            raise RankingUnavailable(unavailable["reason"])
        analysis_job_start(analysis=ranking_analysis(study=study), requested_by=request.user)
    body = _ranking_body(study)
    running = request.method == "POST" and body["state"] == COMPUTING
    return Response(body, status=status.HTTP_202_ACCEPTED if running else status.HTTP_200_OK)


ReportSerializer = inline_serializer(
    "Report",
    {
        "study": serializers.JSONField(),
        "unblinded": serializers.BooleanField(),
        "systems": serializers.ListField(
            child=serializers.CharField(), help_text="empty until unblinding"
        ),
        "n_systems": serializers.IntegerField(),
        "sampling": serializers.ListField(child=serializers.JSONField()),
        "instructions": serializers.CharField(),
        "rubric": serializers.ListField(child=serializers.JSONField()),
        "raters": serializers.ListField(child=serializers.JSONField()),
        "raters_item": serializers.JSONField(),
        "profile": serializers.JSONField(),
        "blinding": serializers.JSONField(),
        "design": serializers.JSONField(),
        "agreement": serializers.JSONField(),
        "quality": serializers.JSONField(),
        "summary": serializers.JSONField(allow_null=True),
        "comparison": serializers.JSONField(
            allow_null=True, help_text="the estimates, tests and corrections; after unblinding"
        ),
        "comparison_failed": serializers.BooleanField(),
        "robustness": serializers.JSONField(allow_null=True),
        "deviations": serializers.ListField(child=serializers.JSONField()),
        "primary_named": serializers.JSONField(allow_null=True),
        "primary": serializers.JSONField(
            help_text='the primary question: "measure" ("" = none named, every question '
            'Holm-corrected) and whether the estimates "asked" it'
        ),
        "monitor": serializers.JSONField(
            help_text="monitored collection of the primary question, as GET .../monitor/ "
            "gives it: symmetric in the systems until unblinding"
        ),
        "aggregation": serializers.JSONField(),
        "adjudication": serializers.JSONField(),
        "feedback": serializers.JSONField(),
        "exposure": serializers.JSONField(allow_null=True),
        "checklist": serializers.ListField(child=serializers.JSONField()),
    },
)


@extend_schema(
    summary="The study report as JSON: every number of the report page",
    description=(
        "The page's content (also the bundle's results.json). Before unblinding it names no "
        "system and shows no estimate; `comparison` comes after unblinding."
    ),
    responses={200: ReportSerializer, **ERRORS},
)
@api_view(["GET"])
def study_report_json(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    return Response(study_report(study=study))


@extend_schema(
    summary="The report bundle (zip), streamed: report, results.json, configuration, exports",
    description=(
        "The page's bundle, byte for byte the same files. The key and the protocol document "
        "are in it only once the study is unblinded."
    ),
    responses={(200, "application/zip"): OpenApiTypes.BINARY, **ERRORS},
)
@api_view(["GET"])
@file_download
def study_report_bundle(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    return report_bundle_response(study=study)


urlpatterns = [
    path("studies/<slug:slug>/ranking/", study_ranking, name="ranking"),
    path("studies/<slug:slug>/report/", study_report_json, name="report"),
    path("studies/<slug:slug>/report/bundle/", study_report_bundle, name="report_bundle"),
]
