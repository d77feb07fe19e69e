"""The study lead's import of ratings made elsewhere, by system name: the form, the job's
progress, then what was checked (with "Import now") or imported, or every problem."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from annotation import ratings_import_jobs as jobs
from annotation.ratings_by_system import ratings_file_headings
from annotation.selectors.imported import concord_ratings_held, imported_ratings_count
from annotation.services import CONCORD_HELD_MESSAGE
from annotation.worksheets import MAX_BYTES, WorksheetError, WorksheetProblem
from annotation.worksheets.columns import MAX_PROBLEMS
from jobs.models import Job
from studies import access


class RatingsFileForm(forms.Form):
    file = forms.FileField(
        label="Ratings by system (.csv or .xlsx)",
        widget=forms.ClearableFileInput(attrs={"accept": ".csv,.xlsx"}),
    )


def _page(request, study, *, form=None, problems=None, checked=None, token="", status=200):
    return render(
        request,
        "annotation/ratings_import.html",
        {
            "study": study,
            "form": form or RatingsFileForm(),
            "problems": problems,
            "checked": checked,
            "checked_token": token,
            "columns": " | ".join(ratings_file_headings(study=study)),
            "max_problems": MAX_PROBLEMS,
            "imported": imported_ratings_count(study_id=study.pk),
            "refusal": CONCORD_HELD_MESSAGE if concord_ratings_held(study_id=study.pk) else "",
        },
        status=status,
    )


@login_required
@require_http_methods(["GET", "POST"])
def ratings_import(request, slug):
    """The form; a POST checks or imports the file (or imports a checked one) as a job."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.LEAD)
    if request.method == "GET":
        return _page(request, study)
    form = RatingsFileForm()
    token = request.POST.get("checked", "")
    try:
        if token:
            job = jobs.ratings_checked_import_start(
                study=study, actor=request.user, token=token[:64]
            )
        else:
            form = RatingsFileForm(request.POST, request.FILES)
            if not form.is_valid():
                return _page(request, study, form=form, status=400)
            upload = form.cleaned_data["file"]
            if upload.size > MAX_BYTES:
                message = f"The file is larger than {MAX_BYTES // 2**20} MB."
                raise WorksheetError([WorksheetProblem(None, None, message)])
            job = jobs.ratings_import_job_start(
                study=study,
                actor=request.user,
                filename=upload.name[:200],
                data=upload.read(),
                dry_run=request.POST.get("action") == "check",
            )
    except WorksheetError as error:
        return _page(request, study, form=form, problems=error.problems, status=400)
    return redirect("annotation:ratings_import_job", slug=study.slug, job_uuid=job.uuid)


def _job(request, slug, job_uuid):
    study, _ = access.get_study_for_user(request.user, slug, role=access.LEAD)
    job = jobs.ratings_import_job_of(study=study, job_uuid=job_uuid)
    if job is None:
        raise Http404
    return study, job


@login_required
@require_GET
def ratings_import_job(request, slug, job_uuid):
    """A running check or import's progress; once ended, the form with what was checked,
    the problems, or (imported) the study's overview of imports."""
    study, job = _job(request, slug, job_uuid)
    status, summary, problems = jobs.ratings_import_job_outcome(job=job)
    if status["state"] == Job.State.RUNNING:
        return render(
            request,
            "annotation/ratings_import_progress.html",
            {
                "study": study,
                "job": job,
                "check": status["dry_run"],
                "status": status,
                "status_url": reverse("annotation:ratings_import_status", args=[slug, job.uuid]),
                "page_url": reverse("annotation:ratings_import_job", args=[slug, job.uuid]),
            },
        )
    if summary is None:
        return _page(request, study, problems=problems)
    if summary.dry_run:
        token = str(job.uuid) if job.requested_by_id == request.user.pk else ""
        return _page(request, study, checked=summary, token=token)
    messages.success(
        request,
        f"Imported {summary.ratings} rating{'s' if summary.ratings != 1 else ''} of "
        f"{summary.raters} rater{'s' if summary.raters != 1 else ''} "
        f"({summary.new_raters} new) from elsewhere, not blinded by Concord.",
    )
    return redirect("annotation:ratings_import", slug=study.slug)


@login_required
@require_GET
def ratings_import_status(request, slug, job_uuid):
    """The job's progress as JSON, for the page's script."""
    _, job = _job(request, slug, job_uuid)
    return JsonResponse(jobs.ratings_import_job_status(job=job))
