"""Bulk inserts: the rows are what the model would have written, defaults included."""

import uuid

from studies.bulk_rows import rows_insert
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
