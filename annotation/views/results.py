"""Results: progress per test case, exports and the import of offline worksheets."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation import export_jobs, worksheet_jobs, worksheets
from annotation.export_responses import export_by_job, export_job_response, export_response
from annotation.forms import WorksheetImportForm
from annotation.selectors import case_progress_page, rater_pseudonyms
from annotation.selectors.imported import imported_ratings_count
from annotation.views.file_import import (
    file_import_job_of,
    file_import_job_page,
    file_import_start,
)
from core.errors import ApplicationError
from studies import access
from studies.selectors import profile_questions_of


def _results_page(
    request,
    study,
    *,
    form=None,
    problems=None,
    checked=None,
    checked_token="",
    checked_name="",
    status=200,
):
    pseudonyms = rater_pseudonyms(study=study)
    return render(
        request,
        "studies/results/results.html",
        {
            "study": study,
            "cases": case_progress_page(study=study, number=request.GET.get("page")),
            "pseudonyms": pseudonyms,
            "form": form or WorksheetImportForm(pseudonyms=pseudonyms),
            "problems": problems,
            "checked": checked,
            "checked_token": checked_token,
            "checked_name": checked_name,
            "unblinded": study.is_unblinded,
            # Left out of the label-keyed exports until unblinding (issue 38).
            "imported_held": 0 if study.is_unblinded else imported_ratings_count(study_id=study.pk),
            "asks_profile": bool(profile_questions_of(study=study)),
            "is_lead": request.user.pk == study.lead_id,
            "max_problems": worksheets.columns.MAX_PROBLEMS,
            "import_columns": " | ".join(worksheets.worksheet_headings(study=study)),
            "export_by_job": export_by_job(study=study),
            "export_file_hours": settings.JOB_FILES_HOURS,
            "exports_ready": export_jobs.export_jobs_ready(study=study),
        },
        status=status,
    )


@login_required
def results(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    return _results_page(request, study)


@login_required
def export(request, slug, fmt):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    try:
        return export_response(study=study, fmt=fmt, rater=request.GET.get("rater") or None)
    except ApplicationError as refused:  # a large study's Excel: the page offers the job
        messages.info(request, str(refused))
        return redirect(reverse("annotation:results", args=[study.slug]) + "#exports")


@login_required
@require_POST
def export_prepare(request, slug, fmt):
    """Prepare a large export as a job ("Prepare"), or show the one preparing it already;
    its page shows the progress, then the download."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    if fmt not in export_jobs.EXPORT_KINDS:
        raise Http404
    job = export_jobs.export_job_start(study=study, key=fmt, actor=request.user)
    return redirect("annotation:export_job", slug=study.slug, job_uuid=job.uuid)


def _export_job(request, slug, job_uuid):
    """The study (its coordinators only) and its export job; 404 for another study's."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    job = export_jobs.export_job_of(study=study, job_uuid=job_uuid)
    if job is None:
        raise Http404
    return study, job


@login_required
@require_GET
def export_job(request, slug, job_uuid):
    """A preparing export's progress; once ready, its download; otherwise the results page
    saying why there is none."""
    study, job = _export_job(request, slug, job_uuid)
    status = export_jobs.export_job_status(job=job)
    kind = export_jobs.EXPORT_KINDS.get(job.name)
    if status["state"] != "running" and status["file"] is None:
        messages.error(request, status["problem"])
        return redirect("annotation:results", slug=study.slug)
    return render(
        request,
        "studies/results/export_job.html",
        {
            "study": study,
            "job": job,
            "label": kind.label if kind else job.name,
            "status": status,
            "status_url": reverse("annotation:export_job_status", args=[study.slug, job.uuid]),
            "page_url": reverse("annotation:export_job", args=[study.slug, job.uuid]),
            "export_file_hours": settings.JOB_FILES_HOURS,
        },
    )


@login_required
@require_GET
def export_job_status(request, slug, job_uuid):
    """The job's progress as JSON, for the page's script."""
    _, job = _export_job(request, slug, job_uuid)
    return JsonResponse(export_jobs.export_job_status(job=job))


@login_required
@require_GET
def export_job_download(request, slug, job_uuid):
    """The prepared file, under the direct export's name; 404 once it has gone."""
    _, job = _export_job(request, slug, job_uuid)
    return export_job_response(job=job)


@login_required
@require_POST
def worksheet_import(request, slug):
    """Check or import an uploaded worksheet, or import a checked one ("Import now"), as a
    job (``annotation.worksheet_jobs``); the job's page shows its progress, then how it
    ended."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    pseudonyms = rater_pseudonyms(study=study)
    job, form, problems = file_import_start(
        request,
        study=study,
        imports=worksheet_jobs.WORKSHEETS,
        blank=WorksheetImportForm(pseudonyms=pseudonyms),
        bound=lambda: WorksheetImportForm(request.POST, request.FILES, pseudonyms=pseudonyms),
        extra=lambda form: {"rater": form.cleaned_data["rater"]},
    )
    if job is None:
        return _results_page(request, study, form=form, problems=problems, status=400)
    return redirect("annotation:worksheet_job", slug=study.slug, job_uuid=job.uuid)


def _worksheet_job(request, slug, job_uuid):
    """The study (its coordinators only) and its worksheet job; 404 for another study's."""
    return file_import_job_of(
        request, slug, job_uuid, imports=worksheet_jobs.WORKSHEETS, role=access.COORDINATOR
    )


@login_required
@require_GET
def worksheet_job(request, slug, job_uuid):
    """A running check or import's progress; once it has ended, the results page with what
    was checked (and "Import now"), what was imported, or the problems."""
    study, job = _worksheet_job(request, slug, job_uuid)
    outcome = worksheet_jobs.worksheet_job_outcome(job=job)

    def page(problems=None, checked=None, token=""):
        return _results_page(
            request,
            study,
            problems=problems,
            checked=checked,
            checked_token=token,
            checked_name=outcome[0]["result"].get("filename", "") if checked else "",
        )

    def imported(result):
        messages.success(
            request,
            f"Imported {result.cases} test case{'s' if result.cases != 1 else ''} for "
            f"{result.rater} ({result.created} new, of which {result.assigned} newly assigned; "
            f"{result.updated} replacing submitted ratings"
            + (f"; {result.skips} marked skipped" if result.skips else "")
            + ").",
        )
        return redirect("annotation:results", slug=study.slug)

    return file_import_job_page(
        request,
        study=study,
        job=job,
        outcome=outcome,
        progress_template="studies/results/worksheet_progress.html",
        urls=("annotation:worksheet_job_status", "annotation:worksheet_job"),
        page=page,
        imported=imported,
    )


@login_required
@require_GET
def worksheet_job_status(request, slug, job_uuid):
    """The job's progress as JSON, for the page's script."""
    _, job = _worksheet_job(request, slug, job_uuid)
    return JsonResponse(worksheet_jobs.worksheet_job_status(job=job))
