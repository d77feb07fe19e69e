"""JSON and text from users on the set-up side: bounded, and refused with a message before
anything is written (JSON nested 100,000 deep, NUL characters, numbers jsonb cannot hold)."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from core.user_input import MAX_JSON_DEPTH, UserInputError, json_read
from studies import services
from studies.models import BlindedLabel, CaseUpload, Dimension, Response, StudyEvent, System
from studies.models import TestCase as Case
from studies.services import CaseImportError, study_create

DEPTH = 100_000


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


# The reader ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (nested(DEPTH), "nested more than 32 levels deep"),
        (nested(MAX_JSON_DEPTH + 1), "nested more than 32 levels deep"),
        ('{"a": ' * 40 + "1" + "}" * 40, "nested more than 32 levels deep"),
        ('{"note": "a\\u0000b"}', "NUL character"),
        ('{"a\\u0000": 1}', "NUL character"),
        ('{"note": "a\\ud800b"}', 'the field "note" contains a lone surrogate (\\ud800)'),
        ('{"a": [{"b": "\\udfff"}]}', 'the field "a[0].b" contains a lone surrogate (\\udfff)'),
        ('{"a": {"\\ud800": 1}}', 'a field name in "a" contains a lone surrogate'),
        ('"\\ud800"', "it contains a lone surrogate"),
        ('{"a": NaN}', "NaN, which is not a number JSON allows"),
        ('{"a": Infinity}', "not a number JSON allows"),
        ('{"a": 1e999}', "too large to store"),
        ("9" * 10_000, "number longer than 40 characters"),
        ('{"a": ', "not valid JSON (Expecting value at character 7)"),
        (" " * (2 * 1024 * 1024 + 1), "longer than 2,097,152 characters"),
    ],
)
def test_json_a_user_sends_is_read_within_bounds(text, reason):
    with pytest.raises(UserInputError) as caught:
        json_read(text)
    assert reason in caught.value.reason
    assert str(caught.value)[0].isupper() and str(caught.value).endswith(".")


def test_json_within_the_bounds_reads_as_json():
    assert json_read(nested(MAX_JSON_DEPTH)) == json.loads(nested(MAX_JSON_DEPTH))
    assert json_read('{"a": [1, -2.5, "x", null, true]}') == {"a": [1, -2.5, "x", None, True]}
    # A whole UTF-16 pair is one character (an emoji), which is stored as any other.
    assert json_read('{"a": "\\ud83d\\ude00"}') == {"a": "\U0001f600"}


# The JSONL case import -------------------------------------------------------------------


def db_counts() -> dict:
    models = (Case, Response, BlindedLabel, System, StudyEvent, CaseUpload)
    return {model.__name__: model.objects.count() for model in models}


def good_line(case_id="TC-001") -> str:
    return json.dumps({"id": case_id, "prompt": "P", "responses": {"a": "x", "b": "y"}})


@pytest.fixture
def draft(lead):
    return study_create(slug="draft", name="Draft study", lead=lead)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            '{"id": "TC-002", "prompt": "P", "responses": {"a": ' + nested(DEPTH) + "}}",
            "Line 2: this line cannot be read: it is nested more than 32 levels deep.",
        ),
        (
            '{"id": "TC-002", "prompt": "P\\u0000", "responses": {"a": "x", "b": "y"}}',
            'Line 2: this line cannot be read: the field "prompt" contains a NUL character',
        ),
        (
            '{"id": "TC-002", "prompt": "P", "responses": {"a": "x", "b\\u0000": "y"}}',
            'Line 2: this line cannot be read: a field name in "responses" contains a NUL',
        ),
    ],
)
def test_the_jsonl_import_refuses_deep_nesting_and_nul_and_imports_nothing(
    draft, lead, line, message
):
    data = (good_line() + "\n" + line + "\n").encode()
    before = db_counts()
    with pytest.raises(CaseImportError) as caught:
        services.test_cases_import(study=draft, actor=lead, filename="cases.jsonl", data=data)
    assert any(problem.startswith(message) for problem in caught.value.problems)
    assert db_counts() == before


def test_the_upload_page_answers_a_deeply_nested_jsonl_file_with_a_message(client, draft, lead):
    client.force_login(lead)
    line = '{"id": "TC-002", "prompt": "P", "responses": {"a": ' + nested(DEPTH) + "}}"
    data = (good_line() + "\n" + line + "\n").encode()
    before = db_counts()
    response = client.post(
        reverse("studies:cases", args=[draft.slug]),
        {"file": SimpleUploadedFile("cases.jsonl", data)},
    )
    assert response.status_code == 400
    assert "nested more than 32 levels deep" in response.text
    assert db_counts() == before


@pytest.mark.parametrize(
    ("filename", "data", "message"),
    [
        ("cases.csv", b"id,prompt,response:a,response:b\nTC-1,P\x00,x,y\n", "Row 2, column B:"),
        ("cases.csv", b"id,prompt,response:a\x00,response:b\nTC-1,P,x,y\n", "Row 1, column C:"),
    ],
)
def test_a_nul_in_a_case_file_is_refused_with_its_place(draft, lead, filename, data, message):
    before = db_counts()
    with pytest.raises(CaseImportError) as caught:
        services.test_cases_import(study=draft, actor=lead, filename=filename, data=data)
    assert any(p.startswith(message) and "NUL character" in p for p in caught.value.problems), (
        caught.value.problems
    )
    assert db_counts() == before


# Forms of the set-up pages: Django's CharField refuses NUL, with the field's message ----


def test_a_nul_in_a_rubric_dimension_is_refused(client, draft, lead):
    client.force_login(lead)
    before = list(Dimension.objects.values_list("pk", "name", "config"))
    response = client.post(
        reverse("studies:dimension_add", args=[draft.slug, "checklist"]),
        {"name": "Clarity\x00", "criteria": "Clear?", "level": "ordinal"},
    )
    assert response.status_code == 400 and "Null characters are not allowed" in response.text
    assert list(Dimension.objects.values_list("pk", "name", "config")) == before


def test_a_nul_in_the_consent_text_is_refused(client, draft, lead):
    client.force_login(lead)
    response = client.post(
        reverse("studies:edit", args=[draft.slug]),
        {"name": draft.name, "consent_text": "Agree\x00", "blinding_seed": "42"},
    )
    assert response.status_code == 400 and "Null characters are not allowed" in response.text
    draft.refresh_from_db()
    assert (
        draft.consent_text == ""
        and not StudyEvent.objects.filter(study=draft)
        .exclude(kind=StudyEvent.Kind.CREATED)
        .exists()
    )
