"""The HTTP API's results: exports (directly, or prepared as a job and downloaded) and
unblinding.

An export is ``export_response``, the results page's own answer, so a file from the API
is byte for byte the file from the page."""

from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import ErrorResponseSerializer, body_object, file_download, form_errors, scalar_fields
from core.api_jobs import job_accepted, job_url
from jobs.models import Job
from studies import access
from studies.forms import UnblindForm
from studies.services import unblinding

from . import export_jobs, exports
from .export_responses import CONTENT_TYPES as EXPORT_CONTENT_TYPES
from .export_responses import export_job_response, export_response

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}
# The exports' media types without their parameters (a schema's content is keyed by type).
EXPORT_MEDIA_TYPES = sorted({media.split(";")[0] for media in EXPORT_CONTENT_TYPES.values()})
# The exports prepared as jobs, the report bundle among them (agreement registers it once
# the apps are ready, before the URLs, and so this module, are loaded).
EXPORT_JOB_KEYS = list(export_jobs.EXPORT_KINDS)
EXPORT_JOB_MEDIA_TYPES = sorted(
    {kind.content_type.split(";")[0] for kind in export_jobs.EXPORT_KINDS.values()}
)


def _study(request, slug, role=access.COORDINATOR):
    study, _ = access.get_study_for_user(request.user, slug, role=role)
    return study


ExportJobSerializer = inline_serializer(
    "ExportJob",
    {
        "job": serializers.CharField(help_text="this job's URL: GET it for its progress"),
        "export": serializers.CharField(help_text="which export: " + ", ".join(EXPORT_JOB_KEYS)),
        "state": serializers.ChoiceField(choices=Job.State.values),
        "stage": serializers.CharField(help_text="writing, while it runs"),
        "done": serializers.IntegerField(help_text="bytes (rows for Excel) written so far"),
        "total": serializers.IntegerField(),
        "message": serializers.CharField(),
        "problem": serializers.CharField(
            help_text="why it failed or stopped, or why its file is gone (expired, replaced)"
        ),
        "file": inline_serializer(
            "ExportJobFile",
            {
                "name": serializers.CharField(help_text="the direct export's file name"),
                "size": serializers.IntegerField(help_text="bytes"),
                "content_type": serializers.CharField(),
                "sha256": serializers.CharField(),
                "expires_at": serializers.DateTimeField(),
            },
            allow_null=True,
        ),
        "download": serializers.CharField(
            allow_null=True, help_text="the file's URL once it is ready, else null"
        ),
    },
)


def _export_job_body(request, study, job) -> dict:
    status_ = export_jobs.export_job_status(job=job)
    return {
        "job": job_url(request, "api:export_job", study.slug, job.uuid),
        **{
            key: status_[key]
            for key in ("export", "state", "stage", "done", "total", "message", "problem", "file")
        },
        "download": (
            job_url(request, "api:export_job_download", study.slug, job.uuid)
            if status_["file"]
            else None
        ),
    }


@extend_schema(
    summary="Prepare a large export as a job: the worksheet, Excel worksheet, long table, bundle",
    description=(
        "fmt is one of " + ", ".join(EXPORT_JOB_KEYS) + ". 202 with the job's URL (also in "
        "Location), to GET until its state is done, failed or stopped; once done, its "
        "`download` is the file, byte for byte the direct export. A request while a job of "
        "the same export runs answers that job."
    ),
    parameters=[OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=EXPORT_JOB_KEYS)],
    request=None,
    responses={202: ExportJobSerializer, **ERRORS},
)
@api_view(["POST"])
def study_export_job_start(request, slug, fmt):
    study = _study(request, slug)
    if fmt not in export_jobs.EXPORT_KINDS:
        raise exceptions.NotFound("No such export is prepared as a job.")
    body_object(request, fields=())
    job = export_jobs.export_job_start(study=study, key=fmt, actor=request.user)
    body = _export_job_body(request, study, job)
    return job_accepted(body, body["job"])


def _export_job(request, slug, job_uuid):
    study = _study(request, slug)
    job = export_jobs.export_job_of(study=study, job_uuid=job_uuid)
    if job is None:
        raise exceptions.NotFound("The study has no such export job.")
    return study, job


@extend_schema(
    summary="An export job: its progress, then its file",
    responses={200: ExportJobSerializer, **ERRORS},
)
@api_view(["GET"])
def study_export_job(request, slug, job_uuid):
    study, job = _export_job(request, slug, job_uuid)
    return Response(_export_job_body(request, study, job))


@extend_schema(
    summary="An export job's file (404 once it has expired or been replaced)",
    responses={
        **{(200, media): OpenApiTypes.BINARY for media in EXPORT_JOB_MEDIA_TYPES},
        **ERRORS,
    },
)
@api_view(["GET"])
@file_download
def study_export_job_download(request, slug, job_uuid):
    _, job = _export_job(request, slug, job_uuid)
    return export_job_response(job=job)


@extend_schema(
    summary="An export, streamed: worksheet (CSV/xlsx), long CSV, data dictionary, key",
    description=(
        "fmt is one of " + ", ".join(exports.FORMATS) + ". The key only once the study is "
        "unblinded. `?rater=R-01` limits a worksheet to one rater."
    ),
    parameters=[
        OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=list(exports.FORMATS)),
        OpenApiParameter("rater", str, OpenApiParameter.QUERY, required=False),
    ],
    # Each format's own media type (``export_responses.CONTENT_TYPES``), as a download.
    responses={
        **{(200, media): OpenApiTypes.BINARY for media in EXPORT_MEDIA_TYPES},
        **ERRORS,
    },
)
@api_view(["GET"])
@file_download
def study_export(request, slug, fmt):
    # The results page's own response: its rules, file names and streaming.
    study = _study(request, slug)
    return export_response(study=study, fmt=fmt, rater=request.query_params.get("rater") or None)


@extend_schema(
    summary="Unblind a closed study (the study lead only; recorded in the audit trail)",
    request=inline_serializer(
        "Unblind",
        {
            "confirm": serializers.BooleanField(help_text="Must be true: unblinding is final."),
            "reason": serializers.CharField(required=False),
        },
    ),
    responses={
        200: inline_serializer(
            "Unblinded",
            {"status": serializers.CharField(), "unblinded_at": serializers.DateTimeField()},
        ),
        **ERRORS,
    },
)
@api_view(["POST"])
def study_unblind(request, slug):
    study = _study(request, slug, role=access.LEAD)
    fields = ("confirm", "reason")
    data = scalar_fields(body_object(request, fields=fields), fields)
    if data.get("confirm") is not True:
        raise exceptions.ValidationError(["confirm: send true; unblinding cannot be undone."])
    form = UnblindForm({"confirm": "on", "reason": data.get("reason") or ""})
    if not form.is_valid():
        raise form_errors(form)
    study = unblinding.study_unblind(
        study=study, actor=request.user, reason=form.cleaned_data["reason"]
    )
    return Response({"status": study.status, "unblinded_at": study.unblinded_at})


urlpatterns = [
    path("studies/<slug:slug>/exports/<str:fmt>/", study_export, name="export"),
    path("studies/<slug:slug>/exports/<str:fmt>/job/", study_export_job_start, name="export_start"),
    path("studies/<slug:slug>/export-jobs/<uuid:job_uuid>/", study_export_job, name="export_job"),
    path(
        "studies/<slug:slug>/export-jobs/<uuid:job_uuid>/download/",
        study_export_job_download,
        name="export_job_download",
    ),
    path("studies/<slug:slug>/unblind/", study_unblind, name="unblind"),
]
