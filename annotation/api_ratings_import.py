"""The HTTP API of the import of ratings made elsewhere, by system name (the study lead's):
a file is checked or imported as a job; the job's URL gives its progress, then what was
checked or imported, or every problem. The same rule and jobs as the page
(``annotation.ratings_by_system``, ``annotation.ratings_import_jobs``)."""

from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import ErrorResponseSerializer, body_object
from core.api_jobs import job_accepted
from studies import access

from . import ratings_import_jobs as jobs
from .api_file_import import (
    FILENAME_CHARS,
    check_flag,
    file_import_job_body,
    file_import_job_serializer,
    file_too_large,
    refused,
)
from .worksheets import MAX_BYTES, WorksheetError

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}
RatingsImportJobSerializer = file_import_job_serializer(
    "RatingsImportJob",
    result="rows, ratings (one per response rated; per rater and case for a rubric of "
    "preferences only), verdicts (preferences given), cases, raters, new_raters, created, "
    "updated, first_rated, "
    "last_rated, filename",
)


def _job_body(request, study, job) -> dict:
    status_ = jobs.ratings_import_job_status(job=job)
    return file_import_job_body(
        request,
        url_name="api:ratings_import_job",
        slug=study.slug,
        job=job,
        status=status_,
        check_only=status_["dry_run"],
    )


@extend_schema(
    summary="Import ratings made elsewhere, by system name (the lead; all or nothing), as a job",
    description=(
        "Upload `file` (.csv or .xlsx, the long format: Case ID, System, Rater, one column "
        "per rubric dimension, optional Confidence, Notes and Timestamp; see "
        "docs/coordinator.md), with `check`: true to check it only. Or send `check_job`: the "
        "UUID of your own check job that passed, to import its file. Answers 202 with the "
        "job's URL (also in Location), to GET until its state is done, failed or stopped. "
        "Refused when the study holds ratings made in Concord; once a study holds imported "
        "ratings, it takes no ratings made in Concord (the blinding)."
    ),
    request={
        "multipart/form-data": inline_serializer(
            "RatingsImportFile",
            {"file": serializers.FileField(), "check": serializers.BooleanField(required=False)},
        ),
        "application/json": inline_serializer(
            "RatingsImportChecked", {"check_job": serializers.UUIDField()}
        ),
    },
    responses={202: RatingsImportJobSerializer, **ERRORS},
)
@api_view(["POST"])
def ratings_import(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.LEAD)
    # A form with the file, or JSON naming a check job.
    data = body_object(request, fields=("file", "check", "check_job"))
    upload = request.FILES.get("file")
    try:
        if upload is None:
            token = data.get("check_job")
            if not isinstance(token, str) or not token:
                raise exceptions.ValidationError(
                    ['file: upload the ratings as "file", or send "check_job": a check job\'s id.']
                )
            job = jobs.ratings_checked_import_start(
                study=study, actor=request.user, token=token[:64]
            )
        else:
            file_too_large(upload)
            check = check_flag(data)
            job = jobs.ratings_import_job_start(
                study=study,
                actor=request.user,
                filename=upload.name[:FILENAME_CHARS],
                data=upload.read(MAX_BYTES + 1),
                dry_run=check,
            )
    except WorksheetError as error:
        raise refused(error) from error
    body = _job_body(request, study, job)
    return job_accepted(body, body["job"])


@extend_schema(
    summary="A ratings import job: its progress, then what was checked or imported",
    responses={200: RatingsImportJobSerializer, **ERRORS},
)
@api_view(["GET"])
def ratings_import_job(request, slug, job_uuid):
    study, _ = access.get_study_for_user(request.user, slug, role=access.LEAD)
    job = jobs.ratings_import_job_of(study=study, job_uuid=job_uuid)
    if job is None:
        raise exceptions.NotFound("The study has no such ratings import job.")
    return Response(_job_body(request, study, job))


urlpatterns = [
    path("studies/<slug:slug>/ratings-import/", ratings_import, name="ratings_import"),
    path(
        "studies/<slug:slug>/ratings-import/<uuid:job_uuid>/",
        ratings_import_job,
        name="ratings_import_job",
    ),
]
