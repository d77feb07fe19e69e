"""Coordinators' pages for the raters' preparation: settings, training and qualification items,
and how each rater (by pseudonym) is getting on."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation import qualification as calibration
from annotation import selectors
from annotation.services import training
from studies import access
from studies.errors import ApplicationError
from studies.selectors import rubric_for_display

from ..access import get_training_item_for_user
from ..forms import OnboardingSettingsForm, TrainingItemForm
from ..models import TrainingItem
from .gate import parse_payload
from .rating import rating_context


@login_required
def onboarding_setup(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    settings = selectors.onboarding_settings(study=study)
    form = OnboardingSettingsForm(request.POST or None, instance=settings, study=study)
    if request.method == "POST" and form.is_valid():
        try:
            training.onboarding_settings_save(study=study, **form.cleaned_data)
        except training.TrainingError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, "Settings saved.")
            return redirect("annotation:onboarding", slug=slug)
    items = study.training_items.order_by("kind", "position", "created_at")
    return render(
        request,
        "annotation/coordinator/onboarding.html",
        {
            "study": study,
            "form": form,
            "training_items": [i for i in items if i.kind == TrainingItem.Kind.TRAINING],
            "qualification_items": [i for i in items if i.kind == TrainingItem.Kind.QUALIFICATION],
            "raters": selectors.onboarding_overview(study=study),
            "dimensions": rubric_for_display(rubric=study.rubric),
            "pass_rule": calibration.RULE,
        },
        status=400 if form.errors else 200,
    )


@login_required
def training_item_edit(request, slug, item_uuid=None):
    """Create (no uuid) or edit a training or qualification item."""
    if item_uuid is None:
        study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
        item = None
        kind = request.GET.get("kind") or request.POST.get("kind") or TrainingItem.Kind.TRAINING
    else:
        item, study, _ = get_training_item_for_user(
            request.user, slug, item_uuid, role=access.COORDINATOR
        )
        kind = item.kind
    if kind not in TrainingItem.Kind.values:
        kind = TrainingItem.Kind.TRAINING
    initial = TrainingItemForm.initial_for(item) if item else {}
    form = TrainingItemForm(request.POST or None, initial=initial, kind=kind)
    if request.method == "POST" and form.is_valid():
        try:
            item = form.save_item(study=study, item=item, kind=kind)
        except training.TrainingError as exc:
            form.add_error(None, str(exc))
        else:
            if not item.key:
                messages.info(
                    request, "Saved. Now enter the answer key: raters see the item once it has one."
                )
                return redirect("annotation:training_item_key", slug=slug, item_uuid=item.uuid)
            messages.success(request, "Saved.")
            return redirect("annotation:onboarding", slug=slug)
    return render(
        request,
        "annotation/coordinator/item_form.html",
        {
            "study": study,
            "item": item,
            "kind": kind,
            "kind_label": TrainingItem.Kind(kind).label,
            "form": form,
        },
        status=400 if form.errors else 200,
    )


@login_required
def training_item_key(request, slug, item_uuid):
    item, study, _ = get_training_item_for_user(
        request.user, slug, item_uuid, role=access.COORDINATOR
    )
    error = None
    payload = item.key
    if request.method == "POST":
        try:
            payload = parse_payload(request.POST.get("payload"))
            training.training_item_key_save(item=item, payload=payload)
        except ApplicationError as exc:
            error = str(exc)
        else:
            messages.success(request, f"Answer key of “{item.title}” saved.")
            return redirect("annotation:onboarding", slug=slug)
    dimensions = rubric_for_display(rubric=study.rubric)
    return render(
        request,
        "annotation/coordinator/item_key.html",
        {
            **rating_context(dimensions=dimensions),
            "study": study,
            "item": item,
            "responses": selectors.item_responses(item=item),
            "payload": payload,
            "error": error,
        },
        status=400 if error else 200,
    )


@login_required
@require_POST
def training_item_delete(request, slug, item_uuid):
    item, _, _ = get_training_item_for_user(request.user, slug, item_uuid, role=access.COORDINATOR)
    training.training_item_delete(item=item)
    messages.success(request, f"“{item.title}” deleted.")
    return redirect("annotation:onboarding", slug=slug)
