"""Judge prompts' order now comes from the case and its systems, not from the key.

Under the earlier rule, order "AB" showed key label A first unless a draw of its own
(``judge:{secret}:{case_id}``, over ["A", "B"]) said B; under the rule in force
(``studies.blinding.judge_prompt_first``) it shows first the system that draw picks from
the case's sorted system names. A stored output's verdict is in shown terms ("A" = the
text shown first in its order), so it stays; only its ``order`` is rewritten, to the
order that shows the same text first under the new rule. Where the two rules put the
same text first nothing changes; elsewhere AB and BA trade places. The rewrite is its own
inverse, so reversing the migration applies it again.
"""

from collections import defaultdict

from django.db import migrations

from studies.blinding import judge_prompt_first, seeded_permutation


def _old_swapped(seed: int, secret: str, case_id: str) -> bool:
    """The earlier rule: whether order "AB" showed key label B first (kept here as history)."""
    first = seeded_permutation(seed=seed, key=f"judge:{secret}:{case_id}", items=["A", "B"])
    return first[0] == "B"


def _cases_to_flip(apps) -> list[int]:
    BlindedLabel = apps.get_model("studies", "BlindedLabel")
    JudgeOutput = apps.get_model("agreement", "JudgeOutput")
    judged = set(JudgeOutput.objects.values_list("test_case_id", flat=True).distinct())
    if not judged:
        return []
    labels = defaultdict(dict)
    cases = {}
    rows = BlindedLabel.objects.filter(test_case_id__in=judged).values_list(
        "test_case_id",
        "label",
        "response__system__name",
        "test_case__case_id",
        "test_case__study__blinding_seed",
        "test_case__study__blinding_secret",
    )
    for case_pk, label, system, case_id, seed, secret in rows.iterator(chunk_size=2000):
        labels[case_pk][label] = system
        cases[case_pk] = (case_id, seed, secret)
    flip = []
    for case_pk, systems in labels.items():
        if set(systems) != {"A", "B"}:
            continue
        case_id, seed, secret = cases[case_pk]
        old_first = systems["B"] if _old_swapped(seed, secret, case_id) else systems["A"]
        new_first = judge_prompt_first(
            seed=seed, secret=secret, case_id=case_id, systems=sorted(systems.values())
        )
        if old_first != new_first:
            flip.append(case_pk)
    return flip


def rewrite_orders(apps, schema_editor):
    JudgeOutput = apps.get_model("agreement", "JudgeOutput")
    flip = _cases_to_flip(apps)
    for start in range(0, len(flip), 1000):
        rows = JudgeOutput.objects.filter(test_case_id__in=flip[start : start + 1000])
        # Through lower-case placeholders: a case's AB and BA rows trade places, and the
        # unique (judge, case, order) constraint holds after every statement.
        rows.filter(order="AB").update(order="ba")
        rows.filter(order="BA").update(order="ab")
        rows.filter(order="ba").update(order="BA")
        rows.filter(order="ab").update(order="AB")


class Migration(migrations.Migration):
    dependencies = [
        ("agreement", "0005_analysis_plan_primary_measure"),
        ("studies", "0014_testcase_study_position"),
    ]

    operations = [migrations.RunPython(rewrite_orders, rewrite_orders)]
