"""The data migration that moves stored judge outputs to the prompt order of the systems."""

import importlib

from django.apps import apps
from django.utils import timezone

from agreement.models import Judge, JudgeOutput
from studies.blinding import judge_prompt_first
from studies.models import BlindedLabel, Study

from .test_judge_pages import study  # noqa: F401 - the fixture

migration = importlib.import_module("agreement.migrations.0006_judge_prompt_order_from_systems")


def _texts(case):
    rows = BlindedLabel.objects.filter(test_case=case).values_list(
        "label", "response__system__name", "response__text"
    )
    return {label: (system, text) for label, system, text in rows}


def _old_first_text(judged, case) -> str:
    texts = _texts(case)
    swapped = migration._old_swapped(judged.blinding_seed, judged.blinding_secret, case.case_id)
    return texts["B" if swapped else "A"][1]


def _new_first_text(judged, case) -> str:
    by_system = dict(_texts(case).values())
    first = judge_prompt_first(
        seed=judged.blinding_seed,
        secret=judged.blinding_secret,
        case_id=case.case_id,
        systems=sorted(by_system),
    )
    return by_system[first]


def _chosen(first_text_ab: str, other: str, order: str, verdict: str) -> str:
    """The text a verdict chose, given the text its prompts show first in order AB."""
    shown = (first_text_ab, other) if order == "AB" else (other, first_text_ab)
    return shown[0] if verdict == "A" else shown[1]


def _cases_moved(study) -> set[int]:  # noqa: F811 - not the fixture
    return {
        case.pk
        for case in study.test_cases.all()
        if _old_first_text(study, case) != _new_first_text(study, case)
    }


def _secret_where_the_rules_differ(study) -> None:  # noqa: F811 - not the fixture
    """Give the study a fixed secret under which the two rules differ on some case.

    The fixture's secret is random, and with six cases the two rules agree on all of them
    about once in 64 studies; the migration is only tested where it has something to move.
    """
    for n in range(64):
        study.blinding_secret = f"fixed-secret-{n}"
        if _cases_moved(study):
            Study.objects.filter(pk=study.pk).update(blinding_secret=study.blinding_secret)
            return
    raise AssertionError("no secret among 64 separates the two rules")


def test_stored_outputs_keep_the_text_they_chose(study):  # noqa: F811
    _secret_where_the_rules_differ(study)
    judge = Judge.objects.create(study=study, name="old")
    verdicts = {}
    for n, case in enumerate(study.test_cases.order_by("position")):
        for order, verdict in (("AB", "A"), ("BA", "AB"[n % 2])):
            JudgeOutput.objects.create(
                judge=judge,
                test_case=case,
                order=order,
                raw_text=f"x\n[[{verdict}]]",
                verdict=verdict,
                imported_at=timezone.now(),
            )
            old_first = _old_first_text(study, case)
            other = next(t for _, t in _texts(case).values() if t != old_first)
            verdicts[case.pk, verdict, order] = _chosen(old_first, other, order, verdict)
    cases_moved = _cases_moved(study)
    assert cases_moved  # the two rules differ on some of the six cases

    migration.rewrite_orders(apps, None)

    for output in JudgeOutput.objects.select_related("test_case"):
        case = output.test_case
        new_first = _new_first_text(study, case)
        other = next(t for _, t in _texts(case).values() if t != new_first)
        chosen = _chosen(new_first, other, output.order, output.verdict)
        original_order = output.order
        if case.pk in cases_moved:
            original_order = {"AB": "BA", "BA": "AB"}[output.order]
        assert chosen == verdicts[case.pk, output.verdict, original_order]
    # Reversing applies the same rewrite and restores the stored orders.
    migration.rewrite_orders(apps, None)
    restored = {(o.test_case_id, o.order, o.verdict) for o in JudgeOutput.objects.all()}
    assert restored == {(pk, order, verdict) for pk, verdict, order in verdicts}
