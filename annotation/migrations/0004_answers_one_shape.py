"""One stored shape for an answer, whatever recorded it.

Worksheet imports stored ``{"points": n, "imported": true}`` (choice kinds also had
"choice"). Every answer is now the kind's own fields plus "flagged", "flag_note" and
"points": a worksheet's counted dimension has ``items: None`` and a checklist
``checked: None`` ("only the points were recorded"); where an answer came from is
``Assignment.source`` (migration 0003).
"""

from django.db import migrations

CHUNK = 500

# The field that holds each kind's own answer; None when only the points were recorded.
# Frozen here, as a migration must not follow later changes to the kinds.
OWN_FIELD = {
    "counted": "items",
    "checklist": "checked",
    "scale": "choice",
    "categorical": "choice",
    "pairwise": "choice",
}


def reshape_answer(value, kind: str | None):
    """One answer in the one shape; anything that is not an answer is left as it is."""
    if not isinstance(value, dict):
        return value
    value = {k: v for k, v in value.items() if k != "imported"}
    own = OWN_FIELD.get(kind)
    if own is not None:
        value.setdefault(own, None)
    value.setdefault("flagged", False)
    value.setdefault("flag_note", "")
    return value


def reshape_answers(answers, kinds: dict):
    """{key: answer} in the one shape; ``kinds`` maps a dimension key to its kind."""
    if not isinstance(answers, dict):
        return answers
    return {key: reshape_answer(value, kinds.get(key)) for key, value in answers.items()}


def reshape_revision(submitted, kinds: dict):
    if not isinstance(submitted, dict):
        return submitted
    submitted = dict(submitted)
    responses = submitted.get("responses")
    if isinstance(responses, dict):
        submitted["responses"] = {
            label: reshape_answers(answers, kinds) for label, answers in responses.items()
        }
    if "case" in submitted:
        submitted["case"] = reshape_answers(submitted["case"], kinds)
    return submitted


def _rewrite(model, field: str, rubric_path: str, reshape, kinds_by_rubric: dict) -> None:
    rows = model.objects.values_list("pk", field, rubric_path).order_by("pk")
    changed = []
    for pk, stored, rubric_id in rows.iterator(chunk_size=CHUNK):
        reshaped = reshape(stored, kinds_by_rubric.get(rubric_id, {}))
        if reshaped != stored:
            changed.append(model(pk=pk, **{field: reshaped}))
        if len(changed) >= CHUNK:
            model.objects.bulk_update(changed, [field])
            changed = []
    if changed:
        model.objects.bulk_update(changed, [field])


def answers_one_shape(apps, schema_editor):
    Dimension = apps.get_model("studies", "Dimension")
    kinds_by_rubric: dict = {}
    for rubric_id, key, kind in Dimension.objects.values_list("rubric_id", "key", "kind"):
        kinds_by_rubric.setdefault(rubric_id, {})[key] = kind
    rating = apps.get_model("annotation", "Rating")
    assignment = apps.get_model("annotation", "Assignment")
    revision = apps.get_model("annotation", "RatingRevision")
    _rewrite(
        rating, "scores", "assignment__test_case__study__rubric_id", reshape_answers,
        kinds_by_rubric,
    )  # fmt: skip
    _rewrite(
        assignment, "case_scores", "test_case__study__rubric_id", reshape_answers,
        kinds_by_rubric,
    )  # fmt: skip
    _rewrite(
        revision, "submitted", "assignment__test_case__study__rubric_id", reshape_revision,
        kinds_by_rubric,
    )  # fmt: skip


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0003_assignment_source"),
        ("studies", "0003_blinding_secret"),
    ]

    operations = [
        # The old shape is not written back: readers now take only the one shape.
        migrations.RunPython(answers_one_shape, migrations.RunPython.noop),
    ]
