"""The HTTP API of the offline worksheet's import (a rater's ratings by key label, the
results page's form): the file is checked or imported as a job; the job's URL gives its
progress, then what was checked or imported, or every problem.

The same form, rule and jobs as the page (``WorksheetImportForm``,
``annotation.worksheets``, ``annotation.worksheet_jobs`` on ``file_import_jobs``) under
the same access rule (the study's coordinators). A worksheet names responses by the labels
its rater saw, never a system: ratings made elsewhere, by system, come in through
``api_ratings_import``.
"""

from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import ErrorResponseSerializer, body_object, form_errors
from core.api_jobs import job_accepted
from jobs.models import Job
from studies import access

from . import worksheet_jobs as jobs
from .api_file_import import (
    FILENAME_CHARS,
    check_flag,
    file_import_job_body,
    file_import_job_serializer,
    file_too_large,
    refused,
)
from .forms import WorksheetImportForm
from .selectors import rater_pseudonyms
from .worksheets import MAX_BYTES, WorksheetError

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}
WorksheetJobSerializer = file_import_job_serializer(
    "WorksheetJob",
    result=(
        "rater (pseudonym), cases (recorded), created (rated for the first time), updated "
        "(replacing a submitted rating), assigned (of created, newly given to the rater), "
        "skipped, skips, filename"
    ),
)


def _job_body(request, study, job) -> dict:
    return file_import_job_body(
        request,
        url_name="api:worksheet_job",
        slug=study.slug,
        job=job,
        status=jobs.worksheet_job_status(job=job),
        check_only=job.name == jobs.CHECK,
    )


def _started(request, study) -> Job:
    """The page's ``file_import_start``, for a script: a checked file ("Import now"), or
    an upload checked by the page's form, checked or imported."""
    # A form with the file, or JSON naming a check job.
    data = body_object(request, fields=("rater", "file", "check", "check_job"))
    upload = request.FILES.get("file")
    if upload is None:
        token = data.get("check_job")
        if not isinstance(token, str) or not token:
            raise exceptions.ValidationError(
                ['file: upload the worksheet as "file" with its "rater", or send "check_job": '
                 "a check job's id."]
            )  # fmt: skip
        return jobs.WORKSHEETS.checked_import_start(
            study=study, actor=request.user, token=token[:64]
        )
    form = WorksheetImportForm(
        {"rater": str(data.get("rater", ""))[:100]},
        request.FILES,
        pseudonyms=rater_pseudonyms(study=study),
    )
    if not form.is_valid():
        raise form_errors(form)
    file_too_large(upload)
    return jobs.WORKSHEETS.start(
        study=study,
        actor=request.user,
        filename=upload.name[:FILENAME_CHARS],
        data=upload.read(MAX_BYTES + 1),
        dry_run=check_flag(data),
        rater=form.cleaned_data["rater"],
    )


@extend_schema(
    summary="Import a rater's offline worksheet (by key label, all or nothing), as a job",
    description=(
        "Upload `file` (the worksheet export, .csv or .xlsx, filled in) with `rater` (the "
        "pseudonym whose worksheet it is) and `check`: true to check it only. Or send "
        "`check_job`: the UUID of your own check job that passed, to import its file. "
        "Answers 202 with the job's URL (also in Location), to GET until its state is done, "
        "failed or stopped. As on the results page: refused once the study holds ratings "
        "imported by system (the blinding)."
    ),
    request={
        "multipart/form-data": inline_serializer(
            "WorksheetFile",
            {
                "rater": serializers.CharField(),
                "file": serializers.FileField(),
                "check": serializers.BooleanField(required=False),
            },
        ),
        "application/json": inline_serializer(
            "WorksheetChecked", {"check_job": serializers.UUIDField()}
        ),
    },
    responses={202: WorksheetJobSerializer, **ERRORS},
)
@api_view(["POST"])
def worksheet_import(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    try:
        job = _started(request, study)
    except WorksheetError as error:
        raise refused(error) from error
    body = _job_body(request, study, job)
    return job_accepted(body, body["job"])


@extend_schema(
    summary="A worksheet import job: its progress, then what was checked or imported",
    responses={200: WorksheetJobSerializer, **ERRORS},
)
@api_view(["GET"])
def worksheet_job(request, slug, job_uuid):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    job = jobs.WORKSHEETS.job_of(study=study, job_uuid=job_uuid)
    if job is None:
        raise exceptions.NotFound("The study has no such worksheet import job.")
    return Response(_job_body(request, study, job))


urlpatterns = [
    path("studies/<slug:slug>/worksheet-import/", worksheet_import, name="worksheet_import"),
    path(
        "studies/<slug:slug>/worksheet-import/<uuid:job_uuid>/",
        worksheet_job,
        name="worksheet_job",
    ),
]
