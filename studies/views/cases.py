"""Test cases: the list, upload with a preview, import, and removal before opening."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from studies import access, importing, selectors, services
from studies.errors import ApplicationError
from studies.forms import CaseUploadForm

CASES_PER_PAGE = 50


@login_required
def case_list(request, slug):
    """The study's test cases; a POST uploads a file, checks it and shows the preview."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    frozen = selectors.study_setup_locked_reason(study=study)
    form = CaseUploadForm()
    problems: list[str] = []
    if request.method == "POST" and not frozen:
        form = CaseUploadForm(request.POST, request.FILES)
        if form.is_valid():
            upload = form.cleaned_data["file"]
            # A file too large is refused before it is read into memory.
            too_large = importing.size_problem(upload.size)
            data = b"" if too_large else upload.read()
            if too_large:
                parsed = importing.ParsedCases(problems=[too_large])
            else:
                parsed = selectors.test_cases_preview(study=study, filename=upload.name, data=data)
            if parsed.ok:
                try:
                    pending = services.case_upload_create(
                        study=study, actor=request.user, filename=upload.name, data=data
                    )
                except ApplicationError as error:
                    messages.error(request, str(error))
                    return redirect("studies:cases", slug=study.slug)
                return redirect("studies:case_import", slug=study.slug, upload_uuid=pending.uuid)
            problems = parsed.problem_lines()
    page = Paginator(study.test_cases.order_by("position"), CASES_PER_PAGE).get_page(
        request.GET.get("page")
    )
    summary = selectors.study_case_summary(study=study)
    return render(
        request,
        "studies/cases.html",
        {
            "study": study,
            "frozen": frozen,
            "form": form,
            "problems": problems,
            "page": page,
            "summary": summary,
            **selectors.study_blinding_check(study=study),
            "limits": importing,
        },
        status=400 if request.method == "POST" else 200,
    )


@login_required
def case_import(request, slug, upload_uuid):
    """The preview of a checked file (counts and first cases); a POST imports it."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    upload = study.case_uploads.filter(uuid=upload_uuid, imported_at__isnull=True).first()
    if upload is None:
        raise Http404
    data = bytes(upload.content)
    problems: list[str] = []
    if request.method == "POST":
        try:
            parsed = services.test_cases_import(
                study=study, actor=request.user, filename=upload.filename, data=data, upload=upload
            )
        except services.CaseImportError as error:
            problems = error.problems
        except ApplicationError as error:
            messages.error(request, str(error))
            return redirect("studies:cases", slug=study.slug)
        else:
            count = len(parsed.cases)
            messages.success(
                request,
                f"Imported {count} test case{'s' if count != 1 else ''} from {upload.filename}.",
            )
            return redirect("studies:cases", slug=study.slug)
    parsed = selectors.test_cases_preview(study=study, filename=upload.filename, data=data)
    return render(
        request,
        "studies/case_import.html",
        {
            "study": study,
            "upload": upload,
            "parsed": parsed,
            "problems": problems or parsed.problem_lines(),
            "warnings": parsed.warning_lines(),
            "first_cases": parsed.cases[:10],
        },
        status=400 if problems else 200,
    )


@login_required
@require_POST
def cases_remove(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    try:
        count = services.test_cases_remove_all(study=study, actor=request.user)
    except ApplicationError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"Removed {count} test case{'s' if count != 1 else ''}.")
    return redirect("studies:cases", slug=study.slug)
