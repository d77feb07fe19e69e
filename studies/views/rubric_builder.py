"""The rubric builder: presets, custom dimensions of every kind, levels, and a preview."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from studies import access, selectors, services
from studies.errors import ApplicationError
from studies.forms import DIMENSION_FORMS, PresetForm
from studies.models import Dimension, Study
from studies.rubric import RubricValueError, allowed_levels


def _level_editable(study: Study) -> bool:
    # The level of measurement stays open until the protocol freezes (see dimension_level_set).
    return not study.is_frozen


@login_required
def rubric_detail(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    rows = []
    for dimension in study.rubric.dimensions.all():
        try:
            scoring = dimension.scoring()
        except RubricValueError as error:
            scoring, problem = None, str(error)
        else:
            problem = ""
        rows.append(
            {
                "dimension": dimension,
                "scope": scoring.scope if scoring else "",
                "min": scoring.min_points if scoring else 0,
                "max": scoring.max_points if scoring else 0,
                "levels": allowed_levels(dimension.kind),
                "problem": problem,
            }
        )
    return render(
        request,
        "studies/rubric.html",
        {
            "study": study,
            "rows": rows,
            "frozen": selectors.study_setup_locked_reason(study=study),
            "level_editable": _level_editable(study),
            "preset_form": PresetForm(),
            "kinds": [
                (kind, label, DIMENSION_FORMS[kind].kind_help)
                for kind, label in Dimension.KIND_CHOICES
            ],  # fmt: skip
            "max_total": sum(r["max"] for r in rows if r["scope"] == "response"),
        },
    )


def _save_dimension(request, study: Study, form_class, dimension: Dimension | None):
    initial = form_class.initial_from(dimension) if dimension else None
    form = form_class(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            services.dimension_save(
                study=study,
                actor=request.user,
                key=dimension.key if dimension else None,
                new_key=data["key"],
                name=data["name"],
                kind=form_class.kind,
                config=data["config"],
                level=data["level"],
                required=data["required"],
            )
        except ApplicationError as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, f"Dimension “{data['name']}” saved.")
            return redirect("studies:rubric", slug=study.slug)
    frozen = selectors.study_setup_locked_reason(study=study)
    if frozen and request.method == "GET":
        messages.info(request, frozen)
        return redirect("studies:rubric", slug=study.slug)
    return render(
        request,
        "studies/dimension_form.html",
        {
            "study": study,
            "form": form,
            "dimension": dimension,
            "kind_label": dict(Dimension.KIND_CHOICES)[form_class.kind],
            "kind_help": form_class.kind_help,
        },
        status=400 if request.method == "POST" else 200,
    )


@login_required
def dimension_add(request, slug, kind):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    form_class = DIMENSION_FORMS.get(kind)
    if form_class is None:
        raise Http404
    return _save_dimension(request, study, form_class, None)


def _get_dimension(study: Study, key: str) -> Dimension:
    dimension = study.rubric.dimensions.filter(key=key).first()
    if dimension is None:
        raise Http404
    return dimension


@login_required
def dimension_edit(request, slug, key):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    dimension = _get_dimension(study, key)
    return _save_dimension(request, study, DIMENSION_FORMS[dimension.kind], dimension)


def _post_change(request, slug, change, done: str):
    """Run one rubric change from a button on the rubric page, then go back to it."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    try:
        change(study)
    except ApplicationError as error:
        messages.error(request, str(error))
    else:
        if done:
            messages.success(request, done)
    return redirect("studies:rubric", slug=study.slug)


@login_required
@require_POST
def dimension_delete(request, slug, key):
    return _post_change(
        request,
        slug,
        lambda study: services.dimension_delete(study=study, actor=request.user, key=key),
        "Dimension removed.",
    )


@login_required
@require_POST
def dimension_move(request, slug, key):
    offset = -1 if request.POST.get("direction") == "up" else 1
    return _post_change(
        request,
        slug,
        lambda study: services.dimension_move(
            study=study, actor=request.user, key=key, offset=offset
        ),
        "",
    )


@login_required
@require_POST
def dimension_level(request, slug, key):
    level = request.POST.get("level", "")
    return _post_change(
        request,
        slug,
        lambda study: services.dimension_level_set(
            study=study, actor=request.user, key=key, level=level
        ),
        "Level of measurement saved.",
    )


@login_required
@require_POST
def rubric_preset(request, slug):
    form = PresetForm(request.POST)
    preset = form.cleaned_data["preset"] if form.is_valid() else ""
    return _post_change(
        request,
        slug,
        lambda study: services.rubric_replace_with_preset(
            study=study, actor=request.user, preset=preset
        ),
        "The rubric was replaced by the preset.",
    )
