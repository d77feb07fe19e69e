"""Writes for studies: creation, rubrics, test cases with their blinding, membership."""

from collections.abc import Sequence

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from .blinding import blinded_order
from .models import BlindedLabel, Dimension, Membership, Response, Rubric, Study, System, TestCase
from .presets import PRESETS
from .rubric import dimension_from_config


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
) -> Study:
    rubric = rubric_create_from_preset(preset=rubric_preset)
    return Study.objects.create(
        slug=slug,
        name=name,
        lead=lead,
        rubric=rubric,
        blinding_seed=blinding_seed,
        description=description,
        instructions=instructions,
        consent_text=consent_text,
    )


@transaction.atomic
def test_cases_add(
    *, study: Study, systems: Sequence[str], cases: Sequence[dict]
) -> list[TestCase]:
    """Add test cases with one response per system, blinded from the study seed.

    Each case is ``{"id", "prompt", "context", "stratum", "responses": {system: text}}``;
    input is assumed validated (the importer reports problems before calling this).
    """
    system_rows = {
        name: System.objects.get_or_create(study=study, name=name)[0] for name in systems
    }
    start = study.test_cases.count()
    created = []
    for offset, case in enumerate(cases):
        test_case = TestCase.objects.create(
            study=study,
            case_id=case["id"],
            position=start + offset,
            prompt=case["prompt"],
            context=case.get("context", ""),
            stratum=case.get("stratum", ""),
        )
        order = blinded_order(seed=study.blinding_seed, case_id=test_case.case_id, systems=systems)
        for label, system_name in zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", order, strict=False):
            response = Response.objects.create(
                test_case=test_case,
                system=system_rows[system_name],
                text=case["responses"][system_name],
            )
            BlindedLabel.objects.create(test_case=test_case, label=label, response=response)
        created.append(test_case)
    return created


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
