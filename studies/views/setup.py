"""Study set-up: the list of studies, creation, settings, status changes, the protocol."""

from pathlib import Path

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.forms.models import model_to_dict
from django.http import FileResponse, Http404
from django.shortcuts import redirect, render

from studies import access, selectors, services
from studies.errors import ApplicationError
from studies.forms import StudyCreateForm, StudyForm
from studies.protocol_download import protocol_response

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
SAMPLE_FILES = ("cases.csv", "cases.jsonl", "cases.xlsx")


@login_required
def study_list(request):
    return render(
        request,
        "studies/list.html",
        {
            "studies": selectors.coordinated_studies(user=request.user),
            "can_create": access.can_create_studies(request.user),
        },
    )


@login_required
def study_create(request):
    if not access.can_create_studies(request.user):
        raise PermissionDenied
    # Only the studies this coordinator can see may be copied.
    copyable = selectors.coordinated_studies(user=request.user).only("slug", "name")
    form = StudyCreateForm(request.POST or None, copyable=copyable)
    if request.method == "POST" and form.is_valid():
        try:
            study = services.study_create(**form.creation(), lead=request.user, actor=request.user)
        except ApplicationError as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, f"Study “{study.name}” created. Next: import test cases.")
            return redirect("studies:cases", slug=study.slug)
    return render(request, "studies/create.html", {"form": form})


@login_required
def study_edit(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    frozen = selectors.study_setup_locked_reason(study=study)
    form = StudyForm(
        request.POST or None,
        initial=model_to_dict(study, fields=StudyForm.Meta.fields),
        frozen_reason=frozen,
        assignments_exist=selectors.study_has_assignments(study=study),
    )
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                services.study_update(study=study, actor=request.user, changes=form.changes())
            except ApplicationError as error:
                form.add_error(None, str(error))
            else:
                messages.success(request, "Settings saved.")
                return redirect("studies:edit", slug=study.slug)
        status = 400
    return render(
        request,
        "studies/edit.html",
        {
            "study": study,
            "form": form,
            "frozen": frozen,
            "actions": [(name, t.title) for name, t in services.transitions_available(study=study)],
            "events": selectors.study_setup_events(study=study),
        },
        status=status,
    )


@login_required
def study_status(request, slug, action):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    transition = services.TRANSITIONS.get(action)
    if transition is None:
        raise Http404
    error = ""
    if request.method == "POST":
        kwargs = {"study": study, "actor": request.user}
        if action == "open":
            kwargs["acknowledge_warnings"] = request.POST.get("acknowledge") == "yes"
        if action == "close":
            kwargs["confirm"] = request.POST.get("confirm") == "yes"
        try:
            transition.service(**kwargs)
        except ApplicationError as exc:
            error = str(exc)
        else:
            messages.success(request, transition.done)
            return redirect("studies:edit", slug=study.slug)
    starting = action in ("pilot", "open")
    return render(
        request,
        "studies/status_confirm.html",
        {
            "study": study,
            "action": action,
            "title": transition.title,
            "allowed": transition.allowed_from(study),
            "error": error,
            "problems": selectors.study_open_problems(study=study) if starting else [],
            "checklist": selectors.study_setup_checklist(study=study) if starting else [],
            **(selectors.study_blinding_check(study=study) if starting else {}),
            "summary": selectors.study_case_summary(study=study),
            "unfinished": selectors.study_unfinished_work(study=study)
            if action == "close"
            else None,
            "fingerprint": selectors.study_protocol_fingerprint(study=study)
            if action == "open"
            else "",
        },
        status=400 if error else 200,
    )


@login_required
def study_protocol(request, slug):
    """The protocol document (``protocol_download``: only once the study is unblinded)."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    return protocol_response(study=study)


@login_required
def case_sample(request, name):
    """The sample test-case files; they hold no study data, so any signed-in user may read."""
    if name not in SAMPLE_FILES:
        raise Http404
    return FileResponse((SAMPLES / name).open("rb"), as_attachment=True, filename=name)
