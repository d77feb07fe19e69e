"""Changing a study's rubric: presets, dimensions, their order and level of measurement."""

from django.contrib.auth.models import User
from django.db import transaction

from studies.errors import StudySetupError
from studies.events import study_event_record
from studies.models import Dimension, Rubric, Study, StudyEvent
from studies.presets import PRESETS
from studies.rubric import KINDS, RubricValueError, allowed_levels, dimension_from_config
from studies.rubric.definition import definition_clean
from studies.signals import analysis_inputs_announce

from .guards import locked_study, refuse_if_frozen

RUBRIC_FROZEN = "The rubric can no longer change."


@transaction.atomic
def rubric_create_from_preset(*, preset: str) -> Rubric:
    try:
        spec = PRESETS[preset]
    except KeyError:
        raise ValueError(
            f"Unknown rubric preset {preset!r}; choose one of {sorted(PRESETS)}."
        ) from None
    rubric = Rubric.objects.create(
        name=spec["name"], description=spec.get("description", ""), preset=preset
    )
    for position, dimension in enumerate(spec["dimensions"]):
        scoring = dimension_from_config(
            key=dimension["key"],
            name=dimension["name"],
            kind=dimension["kind"],
            config=dimension["config"],
        )
        Dimension.objects.create(
            rubric=rubric,
            key=dimension["key"],
            name=dimension["name"],
            kind=dimension["kind"],
            position=position,
            config=dimension["config"],
            level=scoring.default_level,
            required=dimension.get("required", True),
        )
    return rubric


@transaction.atomic
def rubric_copy(*, rubric: Rubric) -> Rubric:
    """A new rubric with the same dimensions, for a study set up like another one."""
    copy = Rubric.objects.create(
        name=rubric.name, description=rubric.description, preset=rubric.preset
    )
    Dimension.objects.bulk_create(
        Dimension(
            rubric=copy,
            key=dimension.key,
            name=dimension.name,
            kind=dimension.kind,
            position=dimension.position,
            config=dimension.config,
            level=dimension.level,
            required=dimension.required,
        )
        for dimension in rubric.dimensions.all()
    )
    return copy


def _rubric_changed(*, study: Study, actor, reason: str = "rubric", **detail) -> None:
    study_event_record(study=study, actor=actor, kind=StudyEvent.Kind.RUBRIC_CHANGED, **detail)
    # The dimensions are analysis inputs: a pilot's statistics follow every rubric change.
    analysis_inputs_announce(study_id=study.pk, reason=reason)


@transaction.atomic
def rubric_replace_with_preset(*, study: Study, actor: User | None, preset: str) -> Study:
    """Give the study a fresh copy of a preset rubric in place of its current one."""
    study = locked_study(study)
    refuse_if_frozen(study, RUBRIC_FROZEN)
    if preset not in PRESETS:
        raise StudySetupError(f"There is no preset rubric called '{preset}'.")
    old = study.rubric
    study.rubric = rubric_create_from_preset(preset=preset)
    dimensions = study.rubric.dimensions.count()
    study.success_min_dimensions = min(study.success_min_dimensions, dimensions)
    study.save(update_fields=["rubric", "success_min_dimensions"])
    if not old.studies.exists():
        old.delete()
    _rubric_changed(study=study, actor=actor, action="preset", preset=preset)
    return study


@transaction.atomic
def dimension_save(
    *,
    study: Study,
    actor: User | None,
    key: str | None,
    new_key: str,
    name: str,
    kind: str,
    config: dict,
    level: str,
    required: bool = True,
) -> Dimension:
    """Add a dimension (``key`` None) at the end of the rubric, or change the one at ``key``;
    ``required``: a submitted rating must answer it (False: optional)."""
    study = locked_study(study)
    refuse_if_frozen(study, RUBRIC_FROZEN)
    if kind not in KINDS:
        raise StudySetupError(f"Unknown kind of dimension: {kind}.")
    try:
        dimension_from_config(key=new_key, name=name, kind=kind, config=config)
    except RubricValueError as error:
        raise StudySetupError(str(error)) from None
    if level not in allowed_levels(kind):
        raise StudySetupError(f"{name}: the level of measurement cannot be {level}.")
    dimensions = study.rubric.dimensions
    if dimensions.filter(key=new_key).exclude(key=key).exists():
        raise StudySetupError(f"The rubric already has a dimension with the key '{new_key}'.")
    if key is None:
        last = dimensions.order_by("-position").values_list("position", flat=True).first()
        dimension = Dimension(rubric=study.rubric, position=0 if last is None else last + 1)
    else:
        dimension = _dimension(study, key)
    dimension.key, dimension.name, dimension.kind = new_key, name, kind
    dimension.config, dimension.level, dimension.required = config, level, required
    dimension.save()
    _rubric_changed(
        study=study, actor=actor, action="added" if key is None else "changed", dimension=new_key
    )
    return dimension


def _dimension(study: Study, key: str) -> Dimension:
    dimension = study.rubric.dimensions.filter(key=key).first()
    if dimension is None:
        raise StudySetupError(f"The rubric has no dimension '{key}'.")
    return dimension


@transaction.atomic
def dimension_delete(*, study: Study, actor: User | None, key: str) -> None:
    study = locked_study(study)
    refuse_if_frozen(study, RUBRIC_FROZEN)
    _dimension(study, key).delete()
    _rubric_changed(study=study, actor=actor, action="removed", dimension=key)


@transaction.atomic
def dimension_move(*, study: Study, actor: User | None, key: str, offset: int) -> None:
    """Move a dimension one place up (``offset`` -1) or down (+1)."""
    study = locked_study(study)
    refuse_if_frozen(study, RUBRIC_FROZEN)
    ordered = list(study.rubric.dimensions.order_by("position", "pk"))
    index = next((i for i, d in enumerate(ordered) if d.key == key), None)
    if index is None:
        raise StudySetupError(f"The rubric has no dimension '{key}'.")
    target = index + offset
    if not 0 <= target < len(ordered):
        return
    ordered[index], ordered[target] = ordered[target], ordered[index]
    for position, dimension in enumerate(ordered):
        dimension.position = position
    Dimension.objects.bulk_update(ordered, ["position"])
    _rubric_changed(study=study, actor=actor, action="moved", dimension=key)


@transaction.atomic
def dimension_level_set(*, study: Study, actor: User | None, key: str, level: str) -> Dimension:
    """Set the level of measurement used for agreement; raters see no difference.

    So unlike the rest of the rubric it may change during a pilot, until the study opens.
    """
    study = locked_study(study)
    if study.is_frozen:
        raise StudySetupError(
            "The level of measurement is part of the frozen protocol once the study opens."
        )
    dimension = _dimension(study, key)
    if level not in allowed_levels(dimension.kind):
        raise StudySetupError(
            f"{dimension.name}: the level of measurement cannot be {level} for "
            f"{dimension.get_kind_display().lower()}."
        )
    if dimension.level != level:
        dimension.level = level
        dimension.save(update_fields=["level"])
        _rubric_changed(
            study=study, actor=actor, reason="level", action="level", dimension=key, level=level
        )
    return dimension


@transaction.atomic
def rubric_replace(*, study: Study, actor: User | None, definition: dict) -> Study:
    """Give the study a new rubric from a definition (``studies.rubric.definition``).

    All or nothing: every dimension is checked by its kind first, and any problem leaves
    the current rubric as it was (``RubricDefinitionError`` lists them all).
    """
    cleaned = definition_clean(definition)
    study = locked_study(study)
    refuse_if_frozen(study, RUBRIC_FROZEN)
    old = study.rubric
    rubric = Rubric.objects.create(name=cleaned["name"], description=cleaned["description"])
    Dimension.objects.bulk_create(
        Dimension(rubric=rubric, position=position, **dimension)
        for position, dimension in enumerate(cleaned["dimensions"])
    )
    study.rubric = rubric
    study.success_min_dimensions = min(study.success_min_dimensions, len(cleaned["dimensions"]))
    study.save(update_fields=["rubric", "success_min_dimensions"])
    if not old.studies.exists():
        old.delete()
    _rubric_changed(
        study=study,
        actor=actor,
        action="definition",
        dimensions=[d["key"] for d in cleaned["dimensions"]],
    )
    return study
