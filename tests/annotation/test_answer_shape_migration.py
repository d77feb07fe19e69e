"""The data migration that gives worksheet-imported answers the one stored shape."""

import importlib

import pytest
from django.apps import apps
from django.utils import timezone

from annotation.models import Assignment, Rating, RatingRevision
from studies.models import Dimension
from tests.payloads import full_marks_payload

from ..payloads import submit

pytestmark = pytest.mark.django_db

migration = importlib.import_module("annotation.migrations.0004_answers_one_shape")

# What a worksheet import stored before: points marked imported, a choice beside them.
OLD_RESPONSE = {
    "depth": {"points": 4, "imported": True},
    "evidence": {"points": 2, "imported": True},
    "alternatives": {"points": 2, "imported": True},
    "structure": {"points": 3, "imported": True},
    "actionability": {"points": 0, "imported": True},
    "quality": {"choice": 3, "points": 3, "imported": True},
}
OLD_CASE = {"preference": {"choice": -1, "points": 0, "imported": True}}
OFFLINE = {"flagged": False, "flag_note": ""}
NEW_RESPONSE = {
    "depth": {"items": None, "points": 4, **OFFLINE},
    "evidence": {"checked": None, "points": 2, **OFFLINE},
    "alternatives": {"items": None, "points": 2, **OFFLINE},
    "structure": {"checked": None, "points": 3, **OFFLINE},
    "actionability": {"items": None, "points": 0, **OFFLINE},
    "quality": {"choice": 3, "points": 3, **OFFLINE},
}
NEW_CASE = {"preference": {"choice": -1, "points": 0, **OFFLINE}}


@pytest.fixture
def old_rows(study, membership):
    """One case recorded on screen and one imported in the old shape, with a revision."""
    rubric = study.rubric
    # Optional, so that the reference payload submits without them (issue 39).
    Dimension.objects.create(
        rubric=rubric, key="quality", name="Quality", kind="scale", position=10,
        config={"options": [{"value": v, "label": str(v)} for v in range(1, 6)]},
        required=False,
    )  # fmt: skip
    Dimension.objects.create(
        rubric=rubric, key="preference", name="Preference", kind="pairwise", position=11,
        config={"labels": ["A better", "Tie", "B better"]}, required=False,
    )  # fmt: skip
    on_screen, imported = list(membership.assignments.order_by("position"))[:2]
    submit(on_screen, full_marks_payload())
    submit(imported, full_marks_payload())
    Rating.objects.filter(assignment=imported).update(scores=OLD_RESPONSE)
    Assignment.objects.filter(pk=imported.pk).update(case_scores=OLD_CASE)
    RatingRevision.objects.create(
        assignment=imported,
        submitted={
            "responses": {"A": OLD_RESPONSE, "B": OLD_RESPONSE},
            "case": OLD_CASE,
            "confidence": "high",
            "notes": "",
            "totals": {"A": 14, "B": 14},
        },
        submitted_at=timezone.now(),
        replaced_at=timezone.now(),
    )
    return on_screen, imported


def test_old_imported_answers_are_rewritten_to_the_one_shape(old_rows):
    on_screen, imported = old_rows
    screen_scores = {r.label: r.scores for r in on_screen.ratings.all()}

    migration.answers_one_shape(apps, None)

    for rating in imported.ratings.all():
        assert rating.scores == NEW_RESPONSE
    imported.refresh_from_db()
    assert imported.case_scores == NEW_CASE
    revision = RatingRevision.objects.get(assignment=imported)
    assert revision.submitted["responses"] == {"A": NEW_RESPONSE, "B": NEW_RESPONSE}
    assert revision.submitted["case"] == NEW_CASE
    assert revision.submitted["totals"] == {"A": 14, "B": 14}
    # Answers recorded on screen already had the one shape: they are left as they were.
    assert {r.label: r.scores for r in on_screen.ratings.all()} == screen_scores


def test_the_rewritten_answers_read_back_as_the_kinds_read_them(old_rows, study):
    _, imported = old_rows
    migration.answers_one_shape(apps, None)
    kinds = {d.key: d for d in study.rubric.scoring_dimensions()}
    for key, answer in imported.ratings.get(label="A").scores.items():
        assert kinds[key].score(answer) == answer  # a stored answer cleans to itself
        assert kinds[key].cell_out(answer, flipped=False) == NEW_RESPONSE[key].get(
            "choice", NEW_RESPONSE[key]["points"]
        )


def test_running_the_migration_twice_changes_nothing_more(old_rows):
    migration.answers_one_shape(apps, None)
    first = list(Rating.objects.order_by("pk").values_list("scores", flat=True))
    migration.answers_one_shape(apps, None)
    assert list(Rating.objects.order_by("pk").values_list("scores", flat=True)) == first
