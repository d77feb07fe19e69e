"""Creating a study and changing its settings."""

from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from studies import selectors
from studies.blinding import LABELS, blinded_order
from studies.errors import StudySetupError
from studies.events import study_event_record
from studies.models import BlindedLabel, Study, StudyEvent
from studies.presets import PRESETS, protocol_design, protocol_settings
from studies.signals import analysis_inputs_announce

from .guards import locked_study, refuse_if_frozen
from .rubric import rubric_copy, rubric_create_from_preset

# What "copy settings from an existing study" takes: the protocol, not its cases or people.
COPIED_FIELDS = (
    "instructions",
    "consent_text",
    "disclosure_question",
    "blinding_seed",
    "raters_per_item",
    "raters_per_item_max",
    "side_mode",
    "success_alpha",
    "success_min_dimensions",
)


@transaction.atomic
def study_create(
    *,
    slug: str,
    name: str,
    lead: User,
    preset: str | None = None,
    source: Study | None = None,
    rubric_preset: str = "reference",
    blinding_seed: int | None = None,
    description: str = "",
    instructions: str = "",
    consent_text: str = "",
    disclosure_question: str | None = None,
    raters_per_item: int | None = None,
    raters_per_item_max: int | None = None,
    side_mode: str = "fixed",
    explanation_first: bool = False,
    case_layout: str = "standard",
    success_alpha: Decimal = Decimal("0.700"),
    success_min_dimensions: int | None = None,
    actor: User | None = None,
) -> Study:
    """A draft study led by ``lead``: the one way a study is made (the page, the API, the
    ``create_study`` command, the demo data).

    It starts from ``source`` (a study the caller has checked the user may see: its rubric
    and protocol settings, not its test cases, raters or ratings), or from ``preset`` (its
    rubric and, for a protocol, every setting it brings: instructions, consent, seed,
    design, success criterion), or else from the settings given here with a copy of the
    rubric preset ``rubric_preset``. The name, the description and a blinding seed given
    here apply whatever the start; a source's or a preset's settings replace the others.
    """
    settings: dict[str, Any] = {
        "instructions": instructions,
        "consent_text": consent_text,
        "disclosure_question": disclosure_question,
        "raters_per_item": raters_per_item,
        "raters_per_item_max": raters_per_item_max,
        "side_mode": side_mode,
        "explanation_first": explanation_first,
        "case_layout": case_layout,
        "success_alpha": success_alpha,
        "success_min_dimensions": success_min_dimensions,
        "blinding_seed": 42,
    }
    if source is not None and preset is not None:
        raise StudySetupError("Start from a preset or from an existing study, not both.")
    if source is not None:
        settings.update({field: getattr(source, field) for field in COPIED_FIELDS})
    elif preset is not None:
        if preset not in PRESETS:
            raise StudySetupError(f"There is no preset called '{preset}'.")
        settings.update(protocol_settings(preset))
        rubric_preset = preset
        description = description or protocol_design(preset)
    if blinding_seed is not None:
        settings["blinding_seed"] = blinding_seed
    return _study_insert(
        slug=slug,
        name=name,
        lead=lead,
        description=description,
        rubric_preset=rubric_preset,
        rubric_source=source,
        actor=actor,
        **settings,
    )


def _study_insert(
    *,
    slug: str,
    name: str,
    lead: User,
    rubric_preset: str,
    rubric_source: Study | None,
    blinding_seed: int,
    description: str,
    instructions: str,
    consent_text: str,
    disclosure_question: str | None,
    raters_per_item: int | None,
    raters_per_item_max: int | None,
    side_mode: str,
    explanation_first: bool,
    case_layout: str,
    success_alpha: Decimal,
    success_min_dimensions: int | None,
    actor: User | None,
) -> Study:
    """The study row, its own copy of the rubric, and the record of its creation."""
    design_range_check(raters_per_item=raters_per_item, raters_per_item_max=raters_per_item_max)
    if Study.objects.filter(slug=slug).exists():
        raise StudySetupError(f"A study with the short name '{slug}' already exists.")
    if rubric_source is not None:
        rubric = rubric_copy(rubric=rubric_source.rubric)
    else:
        rubric = rubric_create_from_preset(preset=rubric_preset)
    dimensions = rubric.dimensions.count()
    if success_min_dimensions is None:
        # The reference criterion is "alpha >= 0.70 on at least 3 of 5 dimensions".
        success_min_dimensions = min(3, dimensions)
    study = Study.objects.create(
        slug=slug,
        name=name,
        lead=lead,
        rubric=rubric,
        blinding_seed=blinding_seed,
        description=description,
        instructions=instructions,
        consent_text=consent_text,
        raters_per_item=raters_per_item,
        raters_per_item_max=raters_per_item_max,
        side_mode=side_mode,
        explanation_first=explanation_first,
        case_layout=case_layout,
        success_alpha=success_alpha,
        success_min_dimensions=success_min_dimensions,
        **({} if disclosure_question is None else {"disclosure_question": disclosure_question}),
    )
    origin: dict[str, Any] = {"copied_from": rubric_source.slug} if rubric_source else {}
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.CREATED,
        rubric_preset=rubric.preset if rubric_source else rubric_preset,
        blinding_seed=blinding_seed,
        lead=lead.get_username(),
        **origin,
    )
    return study


# The most raters the adaptive design may give one case.
MAX_RATERS_PER_ITEM = 20


def design_range_check(*, raters_per_item: int | None, raters_per_item_max: int | None) -> None:
    """The adaptive design's k_min to k_max: k_max only with k_min, and above it."""
    if raters_per_item_max is None:
        return
    if not raters_per_item:
        raise StudySetupError(
            "Most raters per test case needs raters per test case (k_min) as well: the "
            "adaptive design starts every case with k_min raters."
        )
    if not raters_per_item < raters_per_item_max <= MAX_RATERS_PER_ITEM:
        raise StudySetupError(
            f"Most raters per test case must lie above raters per test case "
            f"({raters_per_item}) and at most {MAX_RATERS_PER_ITEM}; leave it empty for a "
            "fixed number of raters per test case."
        )


# Settings a coordinator edits on the settings page.
SETTINGS_FIELDS = (
    "name",
    "description",
    "instructions",
    "consent_text",
    "disclosure_question",
    "blinding_seed",
    "raters_per_item",
    "raters_per_item_max",
    "side_mode",
    "explanation_first",
    "case_layout",
    "imported_optional",
    "bound_invitations_only",
    "success_alpha",
    "success_min_dimensions",
)
# Frozen once the study is open or rating has started: what raters see, how they are
# assigned, and the pre-registered success criterion.
PROTOCOL_FIELDS = frozenset(
    {
        "instructions",
        "blinding_seed",
        "raters_per_item",
        "raters_per_item_max",
        "side_mode",
        "explanation_first",
        "case_layout",
        "success_alpha",
        "success_min_dimensions",
    }
)
# These also fix each rater's item order and flipped screens, chosen when cases are assigned.
ASSIGNMENT_FIELDS = frozenset({"blinding_seed", "side_mode"})
# The analysis reads these: changing them makes a stored result stale.
ANALYSIS_FIELDS = frozenset({"success_alpha", "success_min_dimensions"})
PROTOCOL_FIELD_LABELS = {
    "instructions": "instructions",
    "blinding_seed": "blinding seed",
    "raters_per_item": "raters per test case",
    "raters_per_item_max": "raters per test case",
    "side_mode": "A/B side design",
    "explanation_first": "explanation before the verdict",
    "case_layout": "case layout",
    "success_alpha": "success criterion",
    "success_min_dimensions": "success criterion",
}


@transaction.atomic
def study_update(*, study: Study, actor: User | None, changes: dict) -> Study:
    """Change settings; refuses protocol fields once frozen. Returns the updated study."""
    unknown = set(changes) - set(SETTINGS_FIELDS)
    if unknown:
        raise ValueError(f"Not a study setting: {', '.join(sorted(unknown))}.")
    study = locked_study(study)
    changed = {field: value for field, value in changes.items() if getattr(study, field) != value}
    if not changed:
        return study
    frozen = sorted(PROTOCOL_FIELDS & set(changed))
    if frozen:
        labels = ", ".join(sorted({PROTOCOL_FIELD_LABELS[field] for field in frozen}))
        refuse_if_frozen(study, f"These settings can no longer change: {labels}.")
    if ASSIGNMENT_FIELDS & set(changed) and selectors.study_has_assignments(study=study):
        raise StudySetupError(
            "Raters already have their cases, in an order (and, in the balanced design, "
            "screen sides) drawn from the blinding seed and side design, so these cannot "
            "change now."
        )
    design_range_check(
        raters_per_item=changes.get("raters_per_item", study.raters_per_item),
        raters_per_item_max=changes.get("raters_per_item_max", study.raters_per_item_max),
    )
    for field, value in changed.items():
        setattr(study, field, value)
    update_fields = list(changed)
    if "consent_text" in changed:
        # Raters who agreed to an earlier text are asked to consent again.
        study.consent_version += 1
        update_fields.append("consent_version")
    study.save(update_fields=update_fields)
    if "blinding_seed" in changed:
        _reblind(study)
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.SETTINGS_CHANGED,
        fields=sorted(changed),
        consent_version=study.consent_version,
    )
    if ANALYSIS_FIELDS & set(changed):
        analysis_inputs_announce(study_id=study.pk, reason="success_criterion")
    return study


def _reblind(study: Study) -> None:
    """Relabel every test case from the study's (new) seed, as ``test_cases_add`` would."""
    BlindedLabel.objects.filter(test_case__study=study).delete()
    labels = []
    for case in study.test_cases.prefetch_related("responses__system"):
        by_system = {response.system.name: response for response in case.responses.all()}
        order = blinded_order(
            seed=study.blinding_seed,
            secret=study.blinding_secret,
            case_id=case.case_id,
            systems=list(by_system),
        )
        labels += [
            BlindedLabel(test_case=case, label=label, response=by_system[name])
            for label, name in zip(LABELS, order, strict=False)
        ]
    BlindedLabel.objects.bulk_create(labels)
