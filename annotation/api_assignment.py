"""The HTTP API's assignment and progress: Assign (in the request or as a job), the study's
progress by rater and by stratum, and a rater's own assignments.

The same access helpers, selectors and services as the pages, never their views."""

from django.urls import path, reverse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.decorators import api_view
from rest_framework.response import Response

from annotation.services import assignment
from core.api import ErrorResponseSerializer, body_object
from core.api_jobs import job_accepted, job_url
from jobs.models import Job
from studies import access, selectors
from studies.models import Membership

from . import assignment_jobs
from .api import RaterSerializer
from .selectors import (
    exposure_today,
    held_back,
    pending_cases,
    rater_assignments,
    rater_memberships,
    rater_progress_table,
    study_rating_counts,
    study_skip_summary,
)

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}


def _study(request, slug, role=access.COORDINATOR):
    study, _ = access.get_study_for_user(request.user, slug, role=role)
    return study


AssignJobSerializer = inline_serializer(
    "AssignJob",
    {
        "job": serializers.CharField(help_text="this job's URL: GET it for its progress"),
        "state": serializers.ChoiceField(choices=Job.State.values),
        "stage": serializers.CharField(help_text="planning or writing, while it runs"),
        "done": serializers.IntegerField(),
        "total": serializers.IntegerField(),
        "created": serializers.DictField(child=serializers.IntegerField()),
        "problem": serializers.CharField(),
        "design": serializers.CharField(),
    },
)


@extend_schema(
    summary="Assign test cases to the raters under the study's design (idempotent)",
    description=(
        "A small design (fewer than ASSIGN_JOB_FROM assignments) is assigned inside the "
        "request: 200 with the new cases per rater. A larger one runs as a job: 202 with "
        "the job's URL (also in Location), to GET until its state is done, failed or "
        "stopped. A press while a job runs answers that job."
    ),
    request=None,
    responses={
        200: inline_serializer(
            "Assigned", {"created": serializers.DictField(child=serializers.IntegerField())}
        ),
        202: AssignJobSerializer,
        **ERRORS,
    },
)
@api_view(["POST"])
def study_assign(request, slug):
    study = _study(request, slug)
    body_object(request, fields=())
    job = assignment_jobs.assignment_job_start(study=study, actor=request.user)
    if job.is_active:
        body = _assign_job_body(request, study, job)
        return job_accepted(body, body["job"])
    if job.state != Job.State.DONE:
        raise assignment.AssignmentDesignError(job.error)
    created = job.result.get("created", {})
    return Response({"created": created, "design": assignment.design_summary(study=study)})


@extend_schema(
    summary="An Assign job: its progress, then how it ended",
    responses={200: AssignJobSerializer, **ERRORS},
)
@api_view(["GET"])
def study_assign_job(request, slug, job_uuid):
    study = _study(request, slug)
    job = assignment_jobs.assignment_job_of(study=study, job_uuid=job_uuid)
    if job is None:
        raise exceptions.NotFound("The study has no such assignment job.")
    return Response(_assign_job_body(request, study, job))


def _assign_job_body(request, study, job) -> dict:
    status_ = assignment_jobs.assignment_job_status(job=job)
    return {
        "job": job_url(request, "api:assign_job", study.slug, job.uuid),
        **{key: status_[key] for key in ("state", "stage", "done", "total", "created", "problem")},
        "design": assignment.design_summary(study=study),
    }


@extend_schema(
    summary="Progress: cases, assignments, and each rater's (by pseudonym)",
    responses={
        200: inline_serializer(
            "Progress",
            {
                "status": serializers.CharField(),
                "cases": serializers.IntegerField(),
                "systems": serializers.ListField(child=serializers.CharField()),
                "assigned": serializers.IntegerField(),
                "started": serializers.IntegerField(),
                "submitted": serializers.IntegerField(),
                "skips": inline_serializer(
                    "SkipCounts",
                    {
                        "total": serializers.IntegerField(),
                        "k_unmet": serializers.IntegerField(
                            help_text="Sample cases left short of the design's raters by skips."
                        ),
                        "per_stratum": serializers.DictField(child=serializers.IntegerField()),
                        "per_rater": serializers.DictField(child=serializers.IntegerField()),
                        "per_case": serializers.DictField(
                            child=serializers.IntegerField(), help_text="By case id."
                        ),
                        "handed_on": serializers.BooleanField(
                            help_text="Whether the design gives a skipped case to another "
                            "rater (k raters per case); false where every rater rates every "
                            "case."
                        ),
                    },
                ),
                "raters": RaterSerializer(many=True),
            },
        ),
        **ERRORS,
    },
)
@api_view(["GET"])
def study_progress(request, slug):
    study = _study(request, slug)
    summary = selectors.study_case_summary(study=study)
    counts = study_rating_counts(study=study)
    raters = list(rater_progress_table(study=study))
    skips = study_skip_summary(study=study)
    return Response(
        {
            "status": study.status,
            "cases": summary["cases"],
            "systems": summary["systems"],
            "assigned": counts["assigned"],
            "started": counts["started"],
            "submitted": sum(r.done for r in raters),
            "skips": {
                "total": skips.total,
                "k_unmet": skips.k_unmet,
                "per_stratum": dict(skips.per_stratum),
                "per_rater": dict(skips.per_rater),
                "per_case": {case_id: count for case_id, _, count in skips.per_case},
                "handed_on": skips.handed_on,
            },
            "raters": RaterSerializer(raters, many=True).data,
        }
    )


def _limit_until(rater: Membership):
    """When the daily exposure limit holding some of the rater's cases back lifts, or None:
    the rating pages' rule (``selectors.exposure``)."""
    exposure = exposure_today(rater=rater)
    return (
        exposure.resume_at
        if held_back(pending=pending_cases(rater=rater), exposure=exposure)
        else None
    )


@extend_schema(
    summary="Your own assignments as a rater (rating itself is in the browser)",
    responses={
        200: inline_serializer(
            "MyStudies",
            {
                "studies": inline_serializer(
                    "MyStudy",
                    {
                        "study": serializers.CharField(),
                        "name": serializers.CharField(),
                        "status": serializers.CharField(),
                        "hold": serializers.CharField(
                            allow_null=True,
                            help_text="Why you cannot rate now (paused, closed, ...), or null.",
                        ),
                        "done": serializers.IntegerField(help_text="Cases submitted or skipped."),
                        "skipped": serializers.IntegerField(),
                        "total": serializers.IntegerField(),
                        "limit_until": serializers.DateTimeField(
                            allow_null=True,
                            help_text="When a daily exposure limit holds some of your cases "
                            "back today, when it lifts (your next midnight, in your time zone); "
                            "else null.",
                        ),
                        "assignments": inline_serializer(
                            "MyAssignment",
                            {
                                "position": serializers.IntegerField(),
                                "status": serializers.CharField(
                                    help_text="todo, draft, submitted or skipped."
                                ),
                                "url": serializers.CharField(),
                            },
                            many=True,
                        ),
                    },
                    many=True,
                )
            },
        ),
        **ERRORS,
    },
)
@api_view(["GET"])
def my_assignments(request):
    studies = []
    for membership, progress, hold in rater_memberships(user=request.user):
        studies.append(
            {
                "study": membership.study.slug,
                "name": membership.study.name,
                "status": membership.status,
                "hold": hold,
                "done": progress.done,
                "skipped": progress.skipped,
                "total": progress.total,
                "limit_until": _limit_until(membership) if hold is None else None,
                "assignments": [
                    {
                        "position": a.position,
                        "status": a.status,
                        "url": request.build_absolute_uri(
                            reverse("annotation:rate", args=[a.uuid])
                        ),
                    }
                    for a in rater_assignments(rater=membership)
                ],
            }
        )
    return Response({"studies": studies})


urlpatterns = [
    path("studies/<slug:slug>/assign/", study_assign, name="assign"),
    path("studies/<slug:slug>/assign/<uuid:job_uuid>/", study_assign_job, name="assign_job"),
    path("studies/<slug:slug>/progress/", study_progress, name="progress"),
    path("me/assignments/", my_assignments, name="my_assignments"),
]
