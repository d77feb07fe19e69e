"""The HTTP API of the report's robustness check (the mixed-effects model, computed as a
job, as the report page's Compute button does). The same access rule (the study's
coordinators) and analysis job as the page: refused before unblinding, since it compares
the systems by name."""

from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import ErrorResponseSerializer, body_object
from core.api_jobs import JOB_PROGRESS_FIELDS
from jobs.models import Job
from studies import access
from studies.errors import ApplicationError

from .analysis.jobs import analysis_job_start, robustness_analysis, robustness_unavailable
from .api_results import COMPUTING, RANKING_STATES, analysis_state

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}


class RobustnessUnavailable(ApplicationError):
    """The study has no robustness check to compute yet (it is still blinded)."""


RobustnessSerializer = inline_serializer(
    "Robustness",
    {
        "state": serializers.ChoiceField(
            choices=RANKING_STATES,
            help_text="unavailable (see reason: before unblinding), not_computed (POST to "
            "compute), computing (GET again), failed (see reason), computed (see robustness)",
        ),
        "reason": serializers.CharField(),
        "job": inline_serializer(
            "RobustnessJob",
            {"state": serializers.ChoiceField(choices=Job.State.values), **JOB_PROGRESS_FIELDS},
            allow_null=True,
        ),
        "robustness": serializers.JSONField(
            allow_null=True,
            help_text="once computed, the check as kept: available, alpha and fits (per "
            "measure and pair of systems: first, second, the fitted effect, its interval and "
            "p); or available false with its reason. The report's robustness section shows "
            "it beside the primary estimates",
        ),
    },
)


def _body(study) -> dict:
    state = analysis_state(
        analysis=robustness_analysis(study=study),
        unavailable=robustness_unavailable(study=study),
    )
    result = state.pop("result")
    return {**state, "robustness": result}


@extend_schema(
    methods=["GET"],
    summary="The report's robustness check (mixed-effects model) for the data as they are",
    description=(
        "A read: `state` says whether it is kept for the data as they are (computed), "
        "computing, failed, not computed (POST to compute), or unavailable before "
        "unblinding."
    ),
    responses={200: RobustnessSerializer, **ERRORS},
)
@extend_schema(
    methods=["POST"],
    summary="Start the robustness check for the data as they are (a job)",
    description=(
        "The report page's Compute button: 202 while the job runs (GET this address for its "
        "progress), 200 once kept. Pressed again while it runs, it answers that job; 400 "
        "before the study is unblinded (the check names the systems)."
    ),
    request=None,
    responses={200: RobustnessSerializer, 202: RobustnessSerializer, **ERRORS},
)
@api_view(["GET", "POST"])
def study_robustness(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    if request.method == "POST":
        body_object(request, fields=())
        unavailable = robustness_unavailable(study=study)
        if unavailable is not None:
            raise RobustnessUnavailable(unavailable["reason"])
        analysis_job_start(analysis=robustness_analysis(study=study), requested_by=request.user)
    body = _body(study)
    running = request.method == "POST" and body["state"] == COMPUTING
    return Response(body, status=status.HTTP_202_ACCEPTED if running else status.HTTP_200_OK)


urlpatterns = [
    path("studies/<slug:slug>/report/robustness/", study_robustness, name="robustness"),
]
