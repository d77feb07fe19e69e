"""What the pages of a file checked then imported as jobs (``annotation.file_import_jobs``)
share: the form's POST that starts the job, the job of the study, and the job's page (its
progress, then what was checked with "Import now", the problems, or what was imported)."""

from collections.abc import Callable

from django import forms
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from annotation.file_import_jobs import FileImportJobs
from annotation.worksheets import MAX_BYTES, WorksheetError, WorksheetProblem
from jobs.models import Job
from studies import access

# The longest file name kept beside an uploaded file.
FILENAME_CHARS = 200


def file_import_start(
    request,
    *,
    study,
    imports: FileImportJobs,
    blank: forms.Form,
    bound: Callable[[], forms.Form],
    extra: Callable[[forms.Form], dict] = lambda form: {},
) -> tuple[Job | None, forms.Form, list | None]:
    """The POST of an import form: import the checked file its ``checked`` token names
    ("Import now"), or check (``action=check``) or import the uploaded file, as a job.

    Returns (the job, the form, None) once started; (None, the form with its errors, None)
    for an invalid form; (None, the form, the problems) when the job could not be started.
    """
    form = blank
    token = request.POST.get("checked", "")
    try:
        if token:
            job = imports.checked_import_start(study=study, actor=request.user, token=token[:64])
        else:
            form = bound()
            if not form.is_valid():
                return None, form, None
            upload = form.cleaned_data["file"]
            if upload.size > MAX_BYTES:
                message = f"The file is larger than {MAX_BYTES // 2**20} MB."
                raise WorksheetError([WorksheetProblem(None, None, message)])
            job = imports.start(
                study=study,
                actor=request.user,
                filename=upload.name[:FILENAME_CHARS],
                data=upload.read(),
                dry_run=request.POST.get("action") == "check",
                **extra(form),
            )
    except WorksheetError as error:
        return None, form, error.problems
    return job, form, None


def file_import_job_of(request, slug, job_uuid, *, imports: FileImportJobs, role):
    """The study (to people of ``role``) and its job of this import; 404 for another's."""
    study, _ = access.get_study_for_user(request.user, slug, role=role)
    job = imports.job_of(study=study, job_uuid=job_uuid)
    if job is None:
        raise Http404
    return study, job


def file_import_job_page(
    request,
    *,
    study,
    job: Job,
    outcome: tuple[dict, object, list],
    progress_template: str,
    urls: tuple[str, str],
    page: Callable[..., HttpResponse],
    imported: Callable[[object], HttpResponse],
    progress_context: dict | None = None,
) -> HttpResponse:
    """A running job's progress (``urls``: the names of its status and of this page); once
    it has ended, ``page(problems=)``, ``page(checked=, token=)`` (the token only to who
    checked it) or ``imported(result)``."""
    status, result, problems = outcome
    if status["state"] == Job.State.RUNNING:
        status_url, page_url = (reverse(name, args=[study.slug, job.uuid]) for name in urls)
        return render(
            request,
            progress_template,
            {
                "study": study,
                "job": job,
                "status": status,
                "status_url": status_url,
                "page_url": page_url,
                **(progress_context or {}),
            },
        )
    if result is None:
        return page(problems=problems)
    if result.dry_run:  # type: ignore[attr-defined]
        token = str(job.uuid) if job.requested_by_id == request.user.pk else ""
        return page(checked=result, token=token)
    return imported(result)
