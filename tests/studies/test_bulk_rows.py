"""Bulk writes: the rows are what the model would have written, defaults included, and an
update writes what Django's ``bulk_update`` writes."""

import datetime
import uuid

import pytest

from annotation.models import Assignment
from studies.bulk_rows import rows_insert, rows_update
from studies.models import Response, System
from studies.models import TestCase as Case


def test_rows_take_their_values_and_a_fresh_version_4_uuid_each(study):
    rows = [
        {"study_id": study.pk, "case_id": f"new-{n}", "position": 10**6 + n, "prompt": f"P{n}"}
        for n in range(2500)  # more than one chunk of uuids
    ]

    ids = rows_insert(Case, rows)

    cases = Case.objects.in_bulk(ids)
    assert [(cases[pk].case_id, cases[pk].position, cases[pk].prompt) for pk in ids] == [
        (row["case_id"], row["position"], row["prompt"]) for row in rows
    ]
    assert {(case.context, case.stratum, case.purpose) for case in cases.values()} == {
        ("", "", Case.Purpose.SAMPLE)
    }
    uuids = [case.uuid for case in cases.values()]
    assert len(set(uuids)) == len(rows)
    assert {(u.version, u.variant) for u in uuids} == {(4, uuid.RFC_4122)}


def test_each_insert_gets_new_uuids(study):
    case = Case.objects.create(study=study, case_id="new", position=10**6, prompt="P")
    first, second = (
        rows_insert(Response, [{"test_case_id": case.pk, "system_id": system.pk, "text": "a"}])
        for system in [System.objects.create(study=study, name=n) for n in ("x", "y")]
    )

    assert Response.objects.get(pk=first[0]).uuid != Response.objects.get(pk=second[0]).uuid


FIELDS = [
    "draft", "case_scores", "confidence", "notes", "source", "status", "submitted_at",
    "active_seconds", "version", "last_saved_at", "flipped", "updated_at",
]  # fmt: skip


def _changed(assignment: Assignment, n: int) -> Assignment:
    """Every kind of value the submission write stores: nested JSON with quotes and
    non-ASCII text, empty and null values, times, numbers and a flag."""
    when = datetime.datetime(2026, 3, 1, 12, 30, n, 123456, tzinfo=datetime.UTC)
    assignment.draft = {"responses": {"A": {"depth": n}}, "note": 'say "hi" \\ é ☃', "x": None}
    assignment.case_scores = {} if n % 2 else {"preference": {"choice": -1}}
    assignment.confidence = ["", "low", "high"][n % 3]
    assignment.notes = "line one\nline two, 'quoted'; DROP TABLE x; --" * (n % 2)
    assignment.source = Assignment.Source.WORKSHEET
    assignment.status = Assignment.Status.SUBMITTED
    assignment.submitted_at = when if n % 2 else None
    assignment.active_seconds = 10**6 + n
    assignment.version = n + 7
    assignment.last_saved_at = when
    assignment.flipped = bool(n % 2)
    assignment.updated_at = when
    return assignment


@pytest.mark.parametrize("fields", [FIELDS, ["notes"]], ids=["every-field", "one-field"])
def test_an_update_writes_what_bulk_update_writes(study, fields):
    assignments = list(Assignment.objects.filter(rater__study=study).order_by("pk"))
    assert len(assignments) >= 6
    half = len(assignments) // 2 - 1  # and two rows left alone
    ours, django = assignments[:half], assignments[half : 2 * half]
    untouched = {a.pk: a.notes for a in assignments}

    rows_update(Assignment, [_changed(a, n) for n, a in enumerate(ours)], fields)
    Assignment.objects.bulk_update([_changed(a, n) for n, a in enumerate(django)], fields)

    stored = {row[0]: row[1:] for row in Assignment.objects.values_list("pk", *fields)}
    assert [stored[a.pk] for a in ours] == [stored[a.pk] for a in django]
    assert [stored[a.pk] for a in ours] == [tuple(getattr(a, f) for f in fields) for a in ours]
    if fields == ["notes"]:
        # Only the fields named are written: the rest keep what the database had.
        fresh = Assignment.objects.in_bulk([a.pk for a in ours])
        assert {fresh[a.pk].status for a in ours} == {Assignment.Status.TODO}
    others = Assignment.objects.exclude(pk__in=[a.pk for a in ours + django])
    assert others and all(a.notes == untouched[a.pk] for a in others)
