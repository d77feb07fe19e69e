"""Results: progress per test case, exports and the import of offline worksheets."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation import worksheet_jobs, worksheets
from annotation.export_responses import export_response
from annotation.selectors import case_progress_page
from jobs.models import Job
from studies import access
from studies.models import Membership, Study
from studies.selectors import profile_questions_of


class WorksheetImportForm(forms.Form):
    rater = forms.ChoiceField(label="Rater", choices=())
    file = forms.FileField(
        label="Filled-in worksheet (.csv or .xlsx)",
        widget=forms.ClearableFileInput(attrs={"accept": ".csv,.xlsx"}),
    )

    def __init__(self, *args, pseudonyms=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["rater"].choices = [(p, p) for p in pseudonyms]


def _pseudonyms(study: Study) -> list[str]:
    return list(
        study.memberships.filter(role=Membership.Role.RATER)
        .order_by("pseudonym")
        .values_list("pseudonym", flat=True)
    )


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
    pseudonyms = _pseudonyms(study)
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
            "asks_profile": bool(profile_questions_of(study=study)),
            "is_lead": request.user.pk == study.lead_id,
            "max_problems": worksheets.columns.MAX_PROBLEMS,
            "import_columns": " | ".join(worksheets.worksheet_headings(study=study)),
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
    return export_response(study=study, fmt=fmt, rater=request.GET.get("rater") or None)


@login_required
@require_POST
def worksheet_import(request, slug):
    """Check or import an uploaded worksheet, or import a checked one ("Import now"), as a
    job (``annotation.worksheet_jobs``); the job's page shows its progress, then how it
    ended."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    pseudonyms = _pseudonyms(study)
    token = request.POST.get("checked", "")
    try:
        if token:
            form = WorksheetImportForm(pseudonyms=pseudonyms)
            job = worksheet_jobs.worksheet_checked_import_start(
                study=study, actor=request.user, token=token[:64]
            )
        else:
            form = WorksheetImportForm(request.POST, request.FILES, pseudonyms=pseudonyms)
            if not form.is_valid():
                return _results_page(request, study, form=form, status=400)
            upload = form.cleaned_data["file"]
            if upload.size > worksheets.MAX_BYTES:
                raise worksheets.WorksheetError(
                    [worksheets.WorksheetProblem(None, None, "The file is larger than 5 MB.")]
                )
            job = worksheet_jobs.worksheet_job_start(
                study=study,
                actor=request.user,
                pseudonym=form.cleaned_data["rater"],
                filename=upload.name,
                data=upload.read(),
                dry_run=request.POST.get("action") == "check",
            )
    except worksheets.WorksheetError as error:
        return _results_page(request, study, form=form, problems=error.problems, status=400)
    return redirect("annotation:worksheet_job", slug=study.slug, job_uuid=job.uuid)


def _worksheet_job(request, slug, job_uuid):
    """The study (its coordinators only) and its worksheet job; 404 for another study's."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    job = worksheet_jobs.worksheet_job_of(study=study, job_uuid=job_uuid)
    if job is None:
        raise Http404
    return study, job


@login_required
@require_GET
def worksheet_job(request, slug, job_uuid):
    """A running check or import's progress; once it has ended, the results page with what
    was checked (and "Import now"), what was imported, or the problems."""
    study, job = _worksheet_job(request, slug, job_uuid)
    status, result, problems = worksheet_jobs.worksheet_job_outcome(job=job)
    if status["state"] == Job.State.RUNNING:
        return render(
            request,
            "studies/results/worksheet_progress.html",
            {
                "study": study,
                "job": job,
                "status": status,
                "status_url": reverse("annotation:worksheet_job_status", args=[slug, job.uuid]),
                "page_url": reverse("annotation:worksheet_job", args=[slug, job.uuid]),
            },
        )
    if result is None:
        return _results_page(request, study, problems=problems)
    if result.dry_run:
        mine = job.requested_by_id == request.user.pk
        return _results_page(
            request,
            study,
            checked=result,
            checked_token=str(job.uuid) if mine else "",
            checked_name=status["result"].get("filename", ""),
        )
    messages.success(
        request,
        f"Imported {result.cases} test case{'s' if result.cases != 1 else ''} for "
        f"{result.rater} ({result.created} newly assigned, {result.updated} replaced"
        + (f"; {result.skips} marked skipped" if result.skips else "")
        + ").",
    )
    return redirect("annotation:results", slug=study.slug)


@login_required
@require_GET
def worksheet_job_status(request, slug, job_uuid):
    """The job's progress as JSON, for the page's script."""
    _, job = _worksheet_job(request, slug, job_uuid)
    return JsonResponse(worksheet_jobs.worksheet_job_status(job=job))
