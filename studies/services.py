"""Writes for studies: creation and settings, lifecycle, test cases with their blinding,
rubrics, membership.

Every refusal is a ``StudySetupError`` whose message tells the coordinator, in plain words,
what stopped the change. Each service records what it did in the study's audit trail
(``StudyEvent``).
"""

import hashlib
from collections.abc import Sequence
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from . import selectors
from .blinding import LABELS, blinded_order
from .importing import ParsedCases
from .models import (
    BlindedLabel,
    CaseUpload,
    Dimension,
    Membership,
    Response,
    Rubric,
    Study,
    StudyEvent,
    System,
    TestCase,
)
from .presets import PRESETS
from .rubric import KINDS, RubricValueError, allowed_levels, dimension_from_config


class StudySetupError(Exception):
    """A set-up change was refused; the message says why."""


class CaseImportError(StudySetupError):
    """The file has problems; ``problems`` lists each with its row and column."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        count = len(problems)
        super().__init__(
            f"The file has {count} problem{'s' if count != 1 else ''}; nothing was imported."
        )


def _record(*, study: Study, actor, kind: str, **detail) -> StudyEvent:
    return StudyEvent.objects.create(
        study=study, actor=actor if getattr(actor, "pk", None) else None, kind=kind, detail=detail
    )


def _locked_study(study: Study) -> Study:
    # Set-up writes and status changes of one study run one at a time: a status change
    # cannot slip between an edit's check and its write.
    return Study.objects.select_for_update().select_related("rubric").get(pk=study.pk)


def _refuse_if_frozen(study: Study, what: str) -> None:
    reason = selectors.study_setup_locked_reason(study=study)
    if reason:
        raise StudySetupError(f"{reason} {what}")


# --- Creation and settings ---------------------------------------------------------------


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
        )
    return rubric


@transaction.atomic
def study_create(
    *,
    slug: str,
    name: str,
    lead: AbstractBaseUser,
    rubric_preset: str = "reference",
    blinding_seed: int = 42,
    description: str = "",
    instructions: str = "",
    consent_text: str = "",
    raters_per_item: int | None = None,
    side_mode: str = "fixed",
    success_alpha: Decimal = Decimal("0.700"),
    success_min_dimensions: int | None = None,
    actor: AbstractBaseUser | None = None,
) -> Study:
    """A draft study led by ``lead``, with its own copy of a preset rubric."""
    if Study.objects.filter(slug=slug).exists():
        raise StudySetupError(f"A study with the short name '{slug}' already exists.")
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
        side_mode=side_mode,
        success_alpha=success_alpha,
        success_min_dimensions=success_min_dimensions,
    )
    _record(
        study=study,
        actor=actor,
        kind="created",
        rubric_preset=rubric_preset,
        blinding_seed=blinding_seed,
        lead=lead.get_username(),
    )
    return study


# Settings a coordinator edits on the settings page.
SETTINGS_FIELDS = (
    "name",
    "description",
    "instructions",
    "consent_text",
    "disclosure_question",
    "blinding_seed",
    "raters_per_item",
    "side_mode",
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
        "side_mode",
        "success_alpha",
        "success_min_dimensions",
    }
)
# These also fix each rater's item order and flipped screens, chosen when cases are assigned.
ASSIGNMENT_FIELDS = frozenset({"blinding_seed", "side_mode"})
PROTOCOL_FIELD_LABELS = {
    "instructions": "instructions",
    "blinding_seed": "blinding seed",
    "raters_per_item": "raters per test case",
    "side_mode": "A/B side design",
    "success_alpha": "success criterion",
    "success_min_dimensions": "success criterion",
}


@transaction.atomic
def study_update(*, study: Study, actor: AbstractBaseUser | None, changes: dict) -> Study:
    """Change settings; refuses protocol fields once frozen. Returns the updated study."""
    unknown = set(changes) - set(SETTINGS_FIELDS)
    if unknown:
        raise ValueError(f"Not a study setting: {', '.join(sorted(unknown))}.")
    study = _locked_study(study)
    changed = {field: value for field, value in changes.items() if getattr(study, field) != value}
    if not changed:
        return study
    frozen = sorted(PROTOCOL_FIELDS & set(changed))
    if frozen:
        labels = ", ".join(sorted({PROTOCOL_FIELD_LABELS[field] for field in frozen}))
        _refuse_if_frozen(study, f"These settings can no longer change: {labels}.")
    if ASSIGNMENT_FIELDS & set(changed) and selectors.study_has_assignments(study=study):
        raise StudySetupError(
            "Raters already have their cases, in an order (and, in the balanced design, "
            "screen sides) drawn from the blinding seed and side design, so these cannot "
            "change now."
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
    _record(
        study=study,
        actor=actor,
        kind="settings_changed",
        fields=sorted(changed),
        consent_version=study.consent_version,
    )
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


# --- Lifecycle ---------------------------------------------------------------------------


def _refuse_unless_ready(study: Study) -> None:
    problems = selectors.study_open_problems(study=study)
    if problems:
        raise StudySetupError(" ".join(problems))


def _refuse_unless_status(study: Study, allowed: Sequence[str], action: str) -> None:
    if study.status not in allowed:
        raise StudySetupError(
            f"A study that is {study.get_status_display().lower()} cannot {action}."
        )


@transaction.atomic
def study_pilot_start(*, study: Study, actor: AbstractBaseUser | None) -> Study:
    """Draft -> pilot: raters can rate, to try the rubric and the interface."""
    study = _locked_study(study)
    _refuse_unless_status(study, [Study.Status.DRAFT], "start a pilot")
    _refuse_unless_ready(study)
    study.status = Study.Status.PILOT
    study.save(update_fields=["status"])
    _record(
        study=study,
        actor=actor,
        kind="pilot_started",
        fingerprint=selectors.study_protocol_fingerprint(study=study),
    )
    return study


@transaction.atomic
def study_open(
    *, study: Study, actor: AbstractBaseUser | None, acknowledge_warnings: bool = False
) -> Study:
    """Draft or pilot -> open: freezes the protocol and stores its fingerprint."""
    study = _locked_study(study)
    _refuse_unless_status(study, [Study.Status.DRAFT, Study.Status.PILOT], "be opened")
    _refuse_unless_ready(study)
    mentions = selectors.study_identity_mentions(study=study)
    if mentions and not acknowledge_warnings:
        responses = len({(mention.case_id, mention.label) for mention in mentions})
        raise StudySetupError(
            f"The blinding check found {responses} response{'s' if responses != 1 else ''} "
            "that may say which system or model wrote them. Review them and confirm before "
            "opening."
        )
    previous = study.status
    study.protocol_fingerprint = selectors.study_protocol_fingerprint(study=study)
    study.status = Study.Status.OPEN
    study.opened_at = timezone.now()
    study.save(update_fields=["protocol_fingerprint", "status", "opened_at"])
    _record(
        study=study,
        actor=actor,
        kind="opened",
        previous_status=previous,
        fingerprint=study.protocol_fingerprint,
        blinding_warnings_acknowledged=len(mentions),
    )
    return study


@transaction.atomic
def study_close(*, study: Study, actor: AbstractBaseUser | None) -> Study:
    """Open -> closed: no more ratings; the study lead may then unblind."""
    study = _locked_study(study)
    _refuse_unless_status(study, [Study.Status.OPEN], "be closed")
    study.status = Study.Status.CLOSED
    study.closed_at = timezone.now()
    study.save(update_fields=["status", "closed_at"])
    _record(study=study, actor=actor, kind="closed")
    return study


@transaction.atomic
def study_reopen(*, study: Study, actor: AbstractBaseUser | None) -> Study:
    """Closed (not yet unblinded) -> open, e.g. to let a late rater finish."""
    study = _locked_study(study)
    _refuse_unless_status(study, [Study.Status.CLOSED], "be reopened")
    if selectors.study_protocol_fingerprint(study=study) != study.protocol_fingerprint:
        raise StudySetupError(
            "The protocol no longer matches the fingerprint stored when the study opened; "
            "it cannot be reopened. Ask an administrator to investigate."
        )
    study.status = Study.Status.OPEN
    study.closed_at = None
    study.save(update_fields=["status", "closed_at"])
    _record(study=study, actor=actor, kind="reopened")
    return study


# --- Test cases --------------------------------------------------------------------------


@transaction.atomic
def test_cases_add(
    *, study: Study, systems: Sequence[str], cases: Sequence[dict]
) -> list[TestCase]:
    """Add test cases with one response per system, blinded from the study seed.

    Each case is ``{"id", "prompt", "context", "stratum", "responses": {system: text}}``;
    input is assumed validated (the importer reports problems before calling this).
    """
    existing = set(study.systems.values_list("name", flat=True))
    if existing and existing != set(systems):
        raise StudySetupError(
            f"The study's systems are {', '.join(sorted(existing))}; every test case needs "
            "a response from each of them."
        )
    system_rows = {
        name: System.objects.get_or_create(study=study, name=name)[0] for name in systems
    }
    start = study.test_cases.count()
    created = TestCase.objects.bulk_create(
        TestCase(
            study=study,
            case_id=case["id"],
            position=start + offset,
            prompt=case["prompt"],
            context=case.get("context", ""),
            stratum=case.get("stratum", ""),
        )
        for offset, case in enumerate(cases)
    )
    responses, orders = [], []
    for test_case, case in zip(created, cases, strict=True):
        order = blinded_order(
            seed=study.blinding_seed,
            secret=study.blinding_secret,
            case_id=test_case.case_id,
            systems=systems,
        )
        orders.append(order)
        responses += [
            Response(test_case=test_case, system=system_rows[name], text=case["responses"][name])
            for name in order
        ]
    responses = iter(Response.objects.bulk_create(responses))
    BlindedLabel.objects.bulk_create(
        BlindedLabel(test_case=test_case, label=label, response=next(responses))
        for test_case, order in zip(created, orders, strict=True)
        for label in LABELS[: len(order)]
    )
    return created


@transaction.atomic
def case_upload_create(
    *, study: Study, actor: AbstractBaseUser | None, filename: str, data: bytes
) -> CaseUpload:
    """Keep a checked file until the coordinator confirms its import (one pending per study)."""
    study = _locked_study(study)
    _refuse_if_frozen(study, "Test cases can no longer be added.")
    study.case_uploads.filter(imported_at__isnull=True).delete()
    return CaseUpload.objects.create(
        study=study,
        uploaded_by=actor,
        filename=filename[:255],
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        content=data,
    )


@transaction.atomic
def test_cases_import(
    *,
    study: Study,
    actor: AbstractBaseUser | None,
    filename: str,
    data: bytes,
    upload: CaseUpload | None = None,
) -> ParsedCases:
    """Import a whole file in one transaction, or nothing if it has any problem."""
    study = _locked_study(study)
    _refuse_if_frozen(study, "Test cases can no longer be added.")
    parsed = selectors.test_cases_preview(study=study, filename=filename, data=data)
    if not parsed.ok:
        raise CaseImportError(parsed.problem_lines())
    test_cases_add(study=study, systems=parsed.systems, cases=parsed.cases)
    if upload is not None:
        upload.imported_at = timezone.now()
        upload.save(update_fields=["imported_at"])
    _record(
        study=study,
        actor=actor,
        kind="cases_imported",
        filename=filename,
        sha256=hashlib.sha256(data).hexdigest(),
        file_type=parsed.file_type,
        cases=len(parsed.cases),
        systems=parsed.systems,
    )
    return parsed


@transaction.atomic
def test_cases_remove_all(*, study: Study, actor: AbstractBaseUser | None) -> int:
    """Remove every test case, response and system, e.g. to import a corrected file."""
    study = _locked_study(study)
    _refuse_if_frozen(study, "Test cases can no longer be removed.")
    count = study.test_cases.count()
    study.test_cases.all().delete()
    study.systems.all().delete()
    _record(study=study, actor=actor, kind="cases_removed", cases=count)
    return count


# --- Rubric ------------------------------------------------------------------------------

RUBRIC_FROZEN = "The rubric can no longer change."


@transaction.atomic
def rubric_replace_with_preset(
    *, study: Study, actor: AbstractBaseUser | None, preset: str
) -> Study:
    """Give the study a fresh copy of a preset rubric in place of its current one."""
    study = _locked_study(study)
    _refuse_if_frozen(study, RUBRIC_FROZEN)
    if preset not in PRESETS:
        raise StudySetupError(f"There is no preset rubric called '{preset}'.")
    old = study.rubric
    study.rubric = rubric_create_from_preset(preset=preset)
    dimensions = study.rubric.dimensions.count()
    study.success_min_dimensions = min(study.success_min_dimensions, dimensions)
    study.save(update_fields=["rubric", "success_min_dimensions"])
    if not old.studies.exists():
        old.delete()
    _record(study=study, actor=actor, kind="rubric_changed", action="preset", preset=preset)
    return study


@transaction.atomic
def dimension_save(
    *,
    study: Study,
    actor: AbstractBaseUser | None,
    key: str | None,
    new_key: str,
    name: str,
    kind: str,
    config: dict,
    level: str,
) -> Dimension:
    """Add a dimension (``key`` None) at the end of the rubric, or change the one at ``key``."""
    study = _locked_study(study)
    _refuse_if_frozen(study, RUBRIC_FROZEN)
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
    dimension.config, dimension.level = config, level
    dimension.save()
    _record(
        study=study,
        actor=actor,
        kind="rubric_changed",
        action="added" if key is None else "changed",
        dimension=new_key,
    )
    return dimension


def _dimension(study: Study, key: str) -> Dimension:
    dimension = study.rubric.dimensions.filter(key=key).first()
    if dimension is None:
        raise StudySetupError(f"The rubric has no dimension '{key}'.")
    return dimension


@transaction.atomic
def dimension_delete(*, study: Study, actor: AbstractBaseUser | None, key: str) -> None:
    study = _locked_study(study)
    _refuse_if_frozen(study, RUBRIC_FROZEN)
    _dimension(study, key).delete()
    _record(study=study, actor=actor, kind="rubric_changed", action="removed", dimension=key)


@transaction.atomic
def dimension_move(*, study: Study, actor: AbstractBaseUser | None, key: str, offset: int) -> None:
    """Move a dimension one place up (``offset`` -1) or down (+1)."""
    study = _locked_study(study)
    _refuse_if_frozen(study, RUBRIC_FROZEN)
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
    _record(study=study, actor=actor, kind="rubric_changed", action="moved", dimension=key)


@transaction.atomic
def dimension_level_set(
    *, study: Study, actor: AbstractBaseUser | None, key: str, level: str
) -> Dimension:
    """Set the level of measurement used for agreement; raters see no difference.

    So unlike the rest of the rubric it may change during a pilot, until the study opens.
    """
    study = _locked_study(study)
    if study.status not in (Study.Status.DRAFT, Study.Status.PILOT):
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
        _record(
            study=study,
            actor=actor,
            kind="rubric_changed",
            action="level",
            dimension=key,
            level=level,
        )
    return dimension


# --- Membership --------------------------------------------------------------------------


@transaction.atomic
def membership_add(*, study: Study, user: AbstractBaseUser, role: str) -> Membership:
    """Add a person to a study; raters get the next free pseudonym (R-01, R-02, ...)."""
    membership, created = Membership.objects.get_or_create(
        study=study, user=user, defaults={"role": role}
    )
    if created and role == Membership.Role.RATER:
        taken = set(study.memberships.exclude(pseudonym="").values_list("pseudonym", flat=True))
        number = 1
        while f"R-{number:02d}" in taken:
            number += 1
        membership.pseudonym = f"R-{number:02d}"
        membership.save(update_fields=["pseudonym"])
    return membership


# What an administrator can do to a rater after reviewing the quality-control flags.
RATER_ACTIONS = {
    "pause": (Membership.Status.PAUSED, "rater_paused"),
    "retrain": (Membership.Status.PAUSED, "rater_sent_to_retraining"),
    "exclude": (Membership.Status.EXCLUDED, "rater_excluded"),
    "reinstate": (Membership.Status.ACTIVE, "rater_reinstated"),
}


@transaction.atomic
def rater_status_change(
    *, membership: Membership, action: str, reason: str, actor: AbstractBaseUser
) -> Membership:
    """Pause, send to retraining, exclude or reinstate a rater, with the reason recorded.

    Excluded raters' ratings are kept but left out of the agreement statistics, which are
    recomputed once this commits.
    """
    from agreement.services import agreement_request_recompute  # agreement reads studies

    if action not in RATER_ACTIONS:
        raise StudySetupError("Choose pause, retrain, exclude or reinstate.")
    reason = (reason or "").strip()
    if not reason:
        raise StudySetupError("Give the reason; it is kept in the study's history.")
    if len(reason) > 2000:
        raise StudySetupError("Keep the reason under 2,000 characters.")
    locked = Membership.objects.select_for_update().get(pk=membership.pk)
    if locked.role != Membership.Role.RATER:
        raise StudySetupError("Only raters can be paused, retrained or excluded.")
    if locked.status == Membership.Status.WITHDRAWN:
        raise StudySetupError("This rater has withdrawn from the study.")
    status, kind = RATER_ACTIONS[action]
    locked.status = status
    locked.save(update_fields=["status"])
    StudyEvent.objects.create(
        study_id=locked.study_id,
        actor=actor,
        kind=kind,
        membership=locked,
        reason=reason,
        detail={"status": status},
    )
    study_id = locked.study_id
    transaction.on_commit(lambda: agreement_request_recompute(study_id=study_id))
    return locked
