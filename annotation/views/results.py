"""Results: progress per test case, exports and the import of offline worksheets."""

import secrets

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation import worksheets
from annotation.export_responses import export_response
from annotation.selectors import case_progress_page
from studies import access
from studies.models import Membership, Study


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


# A checked worksheet is kept on the server this long, for "Import now" after "Check only".
CHECKED_SECONDS = 30 * 60


def _checked_key(study: Study, user, token: str) -> str:
    return f"worksheet-checked:{study.pk}:{user.pk}:{token}"


@login_required
@require_POST
def worksheet_import(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    pseudonyms = _pseudonyms(study)
    token = request.POST.get("checked", "")
    if token:
        # "Import now" after a check: the file the server kept, checked again in full.
        kept = cache.get(_checked_key(study, request.user, token[:64]))
        form = WorksheetImportForm(pseudonyms=pseudonyms)
        if kept is None:
            problems = [
                worksheets.WorksheetProblem(
                    None, None, "The checked file is no longer kept; choose it again."
                )
            ]
            return _results_page(request, study, form=form, problems=problems, status=400)
        pseudonym, filename, data = kept["rater"], kept["filename"], kept["data"]
        dry_run = False
    else:
        form = WorksheetImportForm(request.POST, request.FILES, pseudonyms=pseudonyms)
        if not form.is_valid():
            return _results_page(request, study, form=form, status=400)
        upload = form.cleaned_data["file"]
        if upload.size > worksheets.MAX_BYTES:
            problems = [worksheets.WorksheetProblem(None, None, "The file is larger than 5 MB.")]
            return _results_page(request, study, form=form, problems=problems, status=400)
        pseudonym, filename, data = form.cleaned_data["rater"], upload.name, upload.read()
        dry_run = request.POST.get("action") == "check"
    try:
        result = worksheets.worksheet_import(
            study=study,
            pseudonym=pseudonym,
            filename=filename,
            data=data,
            actor=request.user,
            dry_run=dry_run,
        )
    except worksheets.WorksheetError as error:
        return _results_page(request, study, form=form, problems=error.problems, status=400)
    if dry_run:
        token = secrets.token_urlsafe(16)
        kept = {"rater": pseudonym, "filename": filename, "data": data}
        cache.set(_checked_key(study, request.user, token), kept, CHECKED_SECONDS)
        return _results_page(
            request, study, form=form, checked=result, checked_token=token, checked_name=filename
        )
    if token:
        cache.delete(_checked_key(study, request.user, token[:64]))
    messages.success(
        request,
        f"Imported {result.cases} test case{'s' if result.cases != 1 else ''} for "
        f"{result.rater} ({result.created} newly assigned, {result.updated} replaced"
        + (f"; {result.skips} marked skipped" if result.skips else "")
        + ").",
    )
    return redirect("annotation:results", slug=study.slug)
