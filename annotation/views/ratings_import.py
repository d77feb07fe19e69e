"""The study lead's import of ratings made elsewhere, by system name: the form, the job's
progress, then what was checked (with "Import now") or imported, or every problem."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from annotation import ratings_import_jobs as jobs
from annotation.ratings_by_system import ratings_file_headings
from annotation.selectors.imported import concord_ratings_held, imported_ratings_count
from annotation.services import CONCORD_HELD_MESSAGE
from annotation.views.file_import import (
    file_import_job_of,
    file_import_job_page,
    file_import_start,
)
from annotation.worksheets.columns import MAX_PROBLEMS
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
    job, form, problems = file_import_start(
        request,
        study=study,
        imports=jobs.RATINGS,
        blank=RatingsFileForm(),
        bound=lambda: RatingsFileForm(request.POST, request.FILES),
    )
    if job is None:
        return _page(request, study, form=form, problems=problems, status=400)
    return redirect("annotation:ratings_import_job", slug=study.slug, job_uuid=job.uuid)


def _job(request, slug, job_uuid):
    return file_import_job_of(request, slug, job_uuid, imports=jobs.RATINGS, role=access.LEAD)


@login_required
@require_GET
def ratings_import_job(request, slug, job_uuid):
    """A running check or import's progress; once ended, the form with what was checked,
    the problems, or (imported) the study's overview of imports."""
    study, job = _job(request, slug, job_uuid)
    outcome = jobs.ratings_import_job_outcome(job=job)

    def page(problems=None, checked=None, token=""):
        return _page(request, study, problems=problems, checked=checked, token=token)

    def imported(summary):
        # Verdicts (preferences given) are one per rater and case, never one per response.
        verdicts = summary.verdicts
        said = f" ({verdicts} verdict{'s' if verdicts != 1 else ''})" if verdicts else ""
        messages.success(
            request,
            f"Imported {summary.ratings} rating{'s' if summary.ratings != 1 else ''}{said} of "
            f"{summary.raters} rater{'s' if summary.raters != 1 else ''} "
            f"({summary.new_raters} new) from elsewhere, not blinded by Concord.",
        )
        return redirect("annotation:ratings_import", slug=study.slug)

    return file_import_job_page(
        request,
        study=study,
        job=job,
        outcome=outcome,
        progress_template="annotation/ratings_import_progress.html",
        urls=("annotation:ratings_import_status", "annotation:ratings_import_job"),
        page=page,
        imported=imported,
        progress_context={"check": outcome[0]["dry_run"]},
    )


@login_required
@require_GET
def ratings_import_status(request, slug, job_uuid):
    """The job's progress as JSON, for the page's script."""
    _, job = _job(request, slug, job_uuid)
    return JsonResponse(jobs.ratings_import_job_status(job=job))
