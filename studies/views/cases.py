"""Test cases: the list, upload with a preview, import, and removal before opening."""

from pathlib import Path

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from studies import access, selectors, services
from studies.errors import ApplicationError
from studies.forms import CaseUploadForm
from studies.importing import cases as importing

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
            # A file too large is refused before it is read. A large upload is on disk
            # already (Django spools it): it is checked there, as a stream.
            too_large = importing.size_problem(upload.size)
            check: dict = {}
            if too_large:
                parsed = importing.ParsedCases(problems=[too_large])
            else:
                # The file is read once here, checked and scanned; its preview is kept.
                parsed, check = selectors.test_cases_check(
                    study=study, filename=upload.name, data=_uploaded_source(upload)
                )
            if parsed.ok:
                try:
                    pending = services.case_upload_create(
                        study=study,
                        actor=request.user,
                        filename=upload.name,
                        data=upload,
                        cases=parsed.case_count,
                    )
                    services.case_upload_preview_keep(
                        study=study, upload=pending, parsed=parsed, check=check
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


def _uploaded_source(upload):
    """The uploaded file's path when Django spooled it to disk, else its (small) bytes."""
    if hasattr(upload, "temporary_file_path"):
        return Path(upload.temporary_file_path())
    upload.seek(0)
    return upload.read()


@login_required
def case_import(request, slug, upload_uuid):
    """The preview of a checked file (counts and first cases); a POST starts its import,
    whose progress the page then shows until it is done."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    upload = study.case_uploads.filter(uuid=upload_uuid).first()
    if upload is None:
        raise Http404
    if upload.imported_at is not None:
        if request.method == "POST":
            raise Http404  # an imported upload cannot be imported twice
        # Its job has ended (the progress page's poller comes back here): the test cases.
        messages.success(request, _imported_message(upload))
        return redirect("studies:cases", slug=study.slug)
    if request.method == "POST":
        try:
            started = services.case_upload_import_start(
                study=study, upload=upload, actor=request.user
            )
        except ApplicationError as error:
            messages.error(request, str(error))
            return redirect("studies:cases", slug=study.slug)
        if started:
            try:
                services.case_upload_import_schedule(upload=upload, actor_id=request.user.pk)
            except ApplicationError as error:
                messages.error(request, str(error))
                return redirect("studies:case_import", slug=study.slug, upload_uuid=upload.uuid)
            upload.refresh_from_db()
            if upload.imported_at is not None:  # imported inside this request
                messages.success(request, _imported_message(upload))
                return redirect("studies:cases", slug=study.slug)
            if services.case_upload_import_status(upload=upload)["state"] == "running":
                return redirect("studies:case_import", slug=study.slug, upload_uuid=upload.uuid)
        elif services.case_upload_import_status(upload=upload)["state"] == "ready":
            # Another import of the study holds its one running import.
            messages.warning(
                request,
                "Another import of this study is running; import this file once it has finished.",
            )
    status = services.case_upload_import_status(upload=upload)
    if status["state"] == "running":
        return render(
            request,
            "studies/case_import_progress.html",
            {
                "study": study,
                "upload": upload,
                "status": status,
                "status_url": reverse("studies:case_import_status", args=[slug, upload.uuid]),
                "page_url": reverse("studies:case_import", args=[slug, upload.uuid]),
            },
        )
    # Warnings before anything is written: the same scan the import stores afterwards.
    parsed, check = selectors.case_upload_preview(study=study, upload=upload)
    problems = status["problems"] if status["state"] in ("failed", "stopped") else []
    return render(
        request,
        "studies/case_import.html",
        {
            "study": study,
            "upload": upload,
            "parsed": parsed,
            "problems": problems or parsed.problem_lines(),
            "retry": status["state"] == "stopped" and parsed.ok,
            "warnings": parsed.warning_lines(),
            "first_cases": parsed.first_cases,
            "more_cases": max(0, parsed.case_count - len(parsed.first_cases)),
            "preview": True,
            **check,
        },
        status=400 if problems else 200,
    )


@login_required
def case_import_status(request, slug, upload_uuid):
    """The import's progress as JSON, for the page's script."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    upload = study.case_uploads.filter(uuid=upload_uuid).first()
    if upload is None:
        raise Http404
    return JsonResponse(services.case_upload_import_status(upload=upload))


def _imported_message(upload) -> str:
    count = upload.cases
    return f"Imported {count} test case{'s' if count != 1 else ''} from {upload.filename}."


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
