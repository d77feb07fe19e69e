"""Importing test cases: all or nothing, blinded exactly as test_cases_add does."""

import csv
import hashlib
import io
import json
from pathlib import Path

import pytest
from openpyxl import Workbook

from annotation.services import draft_save
from studies import services
from studies.blinding import blinding_key
from studies.importing import cases as importing
from studies.models import BlindedLabel, CaseUpload, Response, Study, StudyEvent, System
from studies.models import TestCase as Case
from studies.services import CaseImportError, StudySetupError, case_upload_create, study_create

from ..factories import UserFactory, make_cases, make_study

SAMPLES = Path(__file__).resolve().parents[2] / "studies" / "samples"
HEADER = "id,prompt,context,stratum,response:baseline,response:improved"


def db_counts() -> dict:
    models = (Case, Response, BlindedLabel, System, StudyEvent, CaseUpload)
    return {model.__name__: model.objects.count() for model in models}


def xlsx(rows) -> bytes:
    workbook = Workbook()
    for row in rows:
        workbook.active.append(row)
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


@pytest.fixture
def draft(lead):
    return study_create(slug="draft", name="Draft study", lead=lead)


def key_of(study) -> dict:
    return {
        case.case_id: {row.label: row.response.system.name for row in case.labels.all()}
        for case in study.test_cases.prefetch_related("labels__response__system")
    }


@pytest.mark.parametrize("sample", ["cases.csv", "cases.jsonl", "cases.xlsx"])
def test_each_sample_file_imports_and_is_blinded_from_the_seed(draft, lead, sample):
    data = (SAMPLES / sample).read_bytes()
    parsed = services.test_cases_import(study=draft, actor=lead, filename=sample, data=data)
    assert parsed.case_count == 3
    assert list(draft.test_cases.values_list("case_id", "position")) == [
        ("TC-001", 0), ("TC-002", 1), ("TC-003", 2)
    ]  # fmt: skip
    assert key_of(draft) == blinding_key(
        seed=42,
        secret=draft.blinding_secret,
        case_ids=["TC-001", "TC-002", "TC-003"],
        systems=["baseline", "improved"],
    )
    event = StudyEvent.objects.get(study=draft, kind="cases_imported")
    assert event.actor == lead
    assert event.detail["sha256"] == hashlib.sha256(data).hexdigest()
    assert event.detail["cases"] == 3


def test_import_blinds_exactly_as_test_cases_add(lead):
    cases = make_cases(6)
    by_service = study_create(slug="by-service", name="S", lead=lead, blinding_seed=7)
    services.test_cases_add(study=by_service, systems=["baseline", "improved"], cases=cases)
    by_file = study_create(slug="by-file", name="F", lead=lead, blinding_seed=7)
    by_file.blinding_secret = by_service.blinding_secret  # same seed and secret: same key
    by_file.save(update_fields=["blinding_secret"])
    data = "\n".join(json.dumps(c) for c in cases).encode()
    services.test_cases_import(study=by_file, actor=lead, filename="c.jsonl", data=data)
    assert key_of(by_file) == key_of(by_service)


def test_a_second_file_adds_after_the_first(draft, lead):
    services.test_cases_import(
        study=draft, actor=lead, filename="a.csv", data=(SAMPLES / "cases.csv").read_bytes()
    )
    more = f"{HEADER}\nTC-004,Another?,,release,a,b\n".encode()
    services.test_cases_import(study=draft, actor=lead, filename="b.csv", data=more)
    assert draft.test_cases.get(case_id="TC-004").position == 3
    assert draft.systems.count() == 2


BAD_FILES = {
    "unknown type": ("cases.txt", b"id,prompt\n"),
    "bad encoding": ("cases.csv", f"{HEADER}\nTC-9,Caf\u00e9,,,a,b\n".encode("latin-1")),
    "missing id": ("cases.csv", f"{HEADER}\n,P,,,a,b\n".encode()),
    "duplicate id": ("cases.csv", f"{HEADER}\nTC-9,P,,,a,b\nTC-9,P,,,a,b\n".encode()),
    "id already in the study": ("cases.csv", f"{HEADER}\nTC-001,P,,,a,b\n".encode()),
    "missing response": (
        "cases.jsonl",
        b'{"id": "TC-9", "prompt": "P", "responses": {"baseline": "a"}}',
    ),
    "unknown column": ("cases.csv", f"{HEADER},notes\nTC-9,P,,,a,b,n\n".encode()),
    "empty prompt": ("cases.csv", f"{HEADER}\nTC-9, ,,,a,b\n".encode()),
    "a case with one system": (
        "cases.csv",
        f"{HEADER},systems\nTC-9,P,,,a,,baseline\n".encode(),
    ),
    "other systems": ("cases.csv", b"id,prompt,response:x,response:y\nTC-9,P,a,b\n"),
    "one good row, one bad": ("cases.csv", f"{HEADER}\nTC-8,P,,,a,b\nTC-9,,,,a,b\n".encode()),
    "not a workbook": ("cases.xlsx", b"PK\x03\x04 broken"),
    "empty file": ("cases.csv", b""),
    "bad json": ("cases.jsonl", b'{"id": "TC-9",'),
}


@pytest.mark.parametrize("problem", sorted(BAD_FILES))
def test_a_file_with_any_problem_imports_nothing(lead, problem):
    study = make_study(lead=lead, slug="has-cases", cases=2, status=Study.Status.DRAFT)
    filename, data = BAD_FILES[problem]
    before = db_counts()
    with pytest.raises(CaseImportError) as raised:
        services.test_cases_import(study=study, actor=lead, filename=filename, data=data)
    assert raised.value.problems
    assert str(raised.value).endswith("nothing was imported.")
    assert db_counts() == before


def test_a_file_too_large_imports_nothing(lead, monkeypatch):
    study = make_study(lead=lead, slug="has-cases", cases=2, status=Study.Status.DRAFT)
    monkeypatch.setattr(importing, "MAX_FILE_BYTES", 100)
    before = db_counts()
    with pytest.raises(CaseImportError) as raised:
        data = f"{HEADER}\nTC-9,P,,,a,{'b' * 200}\n".encode()
        services.test_cases_import(study=study, actor=lead, filename="c.csv", data=data)
    assert "the limit is" in raised.value.problems[0]
    assert db_counts() == before


@pytest.mark.parametrize("status", [Study.Status.OPEN, Study.Status.CLOSED])
def test_no_import_once_the_study_is_open_or_later(lead, status):
    study = make_study(lead=lead, slug="frozen", cases=2, status=status)
    before = db_counts()
    with pytest.raises(StudySetupError, match="frozen"):
        services.test_cases_import(
            study=study, actor=lead, filename="c.csv", data=f"{HEADER}\nTC-9,P,,,a,b\n".encode()
        )
    with pytest.raises(StudySetupError, match="frozen"):
        case_upload_create(study=study, actor=lead, filename="c.csv", data=b"x")
    with pytest.raises(StudySetupError, match="frozen"):
        services.test_cases_remove_all(study=study, actor=lead)
    assert db_counts() == before


def test_no_import_once_a_rater_has_started_in_the_pilot(lead, rater):
    study = make_study(lead=lead, slug="pilot", cases=2, raters=[rater], status=Study.Status.PILOT)
    assignment = study.memberships.get(user=rater).assignments.first()
    draft_save(assignment=assignment, payload={}, expected_version=0)
    before = db_counts()
    with pytest.raises(StudySetupError, match="Raters have started rating"):
        services.test_cases_import(
            study=study, actor=lead, filename="c.csv", data=f"{HEADER}\nTC-9,P,,,a,b\n".encode()
        )
    assert db_counts() == before


def test_a_pending_upload_replaces_the_previous_one(draft, lead):
    first = case_upload_create(study=draft, actor=lead, filename="a.csv", data=b"a")
    second = case_upload_create(study=draft, actor=lead, filename="b.csv", data=b"b")
    assert list(draft.case_uploads.all()) == [second]
    assert second.sha256 == hashlib.sha256(b"b").hexdigest()
    assert not CaseUpload.objects.filter(pk=first.pk).exists()


def test_removing_all_cases_clears_cases_systems_and_labels(lead):
    study = make_study(lead=lead, slug="remove", cases=3, status=Study.Status.DRAFT)
    assert services.test_cases_remove_all(study=study, actor=lead) == 3
    assert not study.test_cases.exists() and not study.systems.exists()
    assert not BlindedLabel.objects.filter(test_case__study=study).exists()
    assert StudyEvent.objects.filter(study=study, kind="cases_removed").exists()


def test_test_cases_add_refuses_other_systems(lead):
    study = make_study(lead=lead, slug="sys", cases=1, status=Study.Status.DRAFT)
    with pytest.raises(StudySetupError, match="baseline, improved"):
        services.test_cases_add(
            study=study, systems=["x", "y"], cases=make_cases(1, systems=("x", "y"))
        )


def test_another_users_study_is_untouched(lead):
    other = make_study(lead=UserFactory(), slug="other", cases=2, status=Study.Status.DRAFT)
    before = list(other.test_cases.values_list("case_id", flat=True))
    mine = study_create(slug="mine", name="Mine", lead=lead)
    services.test_cases_import(
        study=mine, actor=lead, filename="c.csv", data=(SAMPLES / "cases.csv").read_bytes()
    )
    assert list(other.test_cases.values_list("case_id", flat=True)) == before


def test_an_arena_file_imports_each_case_with_its_own_systems_blinded(draft, lead):
    data = (
        b"id,prompt,systems,response:alpha,response:beta,response:gamma\n"
        b"T1,P,alpha;gamma,a,,c\n"
        b"T2,P,beta;alpha;gamma,a,,c\n"
    )
    parsed = services.test_cases_import(study=draft, actor=lead, filename="a.csv", data=data)
    assert parsed.warning_count == 1  # T2's beta: empty, imported as it is
    assert sorted(draft.systems.values_list("name", flat=True)) == ["alpha", "beta", "gamma"]
    texts = {
        (case_id, system): text
        for case_id, system, text in Response.objects.filter(test_case__study=draft).values_list(
            "test_case__case_id", "system__name", "text"
        )
    }
    assert texts == {
        ("T1", "alpha"): "a",
        ("T1", "gamma"): "c",
        ("T2", "alpha"): "a",
        ("T2", "beta"): "",
        ("T2", "gamma"): "c",
    }
    expected = {
        case_id: blinding_key(
            seed=draft.blinding_seed,
            secret=draft.blinding_secret,
            case_ids=[case_id],
            systems=systems,
        )[case_id]
        for case_id, systems in (("T1", ["alpha", "gamma"]), ("T2", ["alpha", "beta", "gamma"]))
    }
    assert key_of(draft) == expected
    # A later file may use some of the study's systems, not others.
    more = b'{"id": "T3", "prompt": "P", "responses": {"beta": "b", "gamma": "c"}}\n'
    services.test_cases_import(study=draft, actor=lead, filename="b.jsonl", data=more)
    assert draft.systems.count() == 3
    before = db_counts()
    other = b'{"id": "T4", "prompt": "P", "responses": {"beta": "b", "delta": "d"}}\n'
    with pytest.raises(CaseImportError):
        services.test_cases_import(study=draft, actor=lead, filename="c.jsonl", data=other)
    assert db_counts() == before


def stored_rows(study) -> list[tuple]:
    """Every stored field of the study's cases, responses and labels, ids aside."""
    return [
        (
            case.case_id,
            case.position,
            case.prompt,
            case.context,
            case.stratum,
            case.content_warning,
            sorted(
                (row.label, row.response.system.name, row.response.text)
                for row in case.labels.all()
            ),
        )
        for case in study.test_cases.order_by("position").prefetch_related(
            "labels__response__system"
        )
    ]


def test_a_file_read_ahead_and_written_in_batches_stores_what_test_cases_add_stores(
    lead, monkeypatch
):
    # Small batches and chunks: the reader thread runs ahead of several write batches.
    monkeypatch.setattr("studies.services.cases.WRITE_BATCH", 7)
    monkeypatch.setattr("studies.importing.read_ahead.CHUNK", 3)
    monkeypatch.setattr("studies.importing.read_ahead.DEPTH", 2)
    systems = ["baseline", "improved", "third"]
    cases = [
        {
            "id": f"TC-{n:03d}",
            "prompt": f'Prompt {n}, with a comma and "quotes"',
            "context": f"Context\nover two lines {n}" if n % 3 else "",
            "stratum": ("policy", "science", "")[n % 3],
            **({"content_warning": f"Warning {n}"} if n % 5 == 0 else {}),
            # An empty response is imported as it is.
            "responses": {s: "" if (n, s) == (4, "third") else f"{s} says {n}" for s in systems},
        }
        for n in range(1, 41)
    ]
    by_service = study_create(slug="by-service", name="S", lead=lead, blinding_seed=11)
    services.test_cases_add(study=by_service, systems=systems, cases=cases)
    by_file = study_create(slug="by-file", name="F", lead=lead, blinding_seed=11)
    by_file.blinding_secret = by_service.blinding_secret
    by_file.save(update_fields=["blinding_secret"])
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(
        ["id", "prompt", "context", "stratum", "content_warning"]
        + [f"response:{s}" for s in systems]
    )
    for case in cases:
        writer.writerow(
            [case["id"], case["prompt"], case["context"], case["stratum"]]
            + [case.get("content_warning", "")]
            + [case["responses"][s] for s in systems]
        )
    parsed = services.test_cases_import(
        study=by_file, actor=lead, filename="c.csv", data=out.getvalue().encode()
    )
    assert parsed.case_count == 40
    assert stored_rows(by_file) == stored_rows(by_service)
    assert len(stored_rows(by_file)) == 40


def test_a_problem_after_several_batches_read_ahead_leaves_nothing(draft, lead, monkeypatch):
    monkeypatch.setattr("studies.services.cases.WRITE_BATCH", 5)
    monkeypatch.setattr("studies.importing.read_ahead.CHUNK", 2)
    rows = [f"TC-{n:03d},P{n},,,a,b" for n in range(1, 31)] + ["TC-031,,,,a,b"]
    before = db_counts()
    with pytest.raises(CaseImportError) as raised:
        services.test_cases_import(
            study=draft, actor=lead, filename="c.csv", data="\n".join([HEADER, *rows]).encode()
        )
    assert any("Row 32" in line for line in raised.value.problems)
    assert db_counts() == before
