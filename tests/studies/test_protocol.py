"""The protocol fingerprint: what it covers, and that it is stable otherwise."""

import hashlib
import json

import pytest
from django.urls import reverse

from studies import selectors, services
from studies.errors import ApplicationError
from studies.models import Response, Study
from studies.protocol import canonical_json, protocol_fingerprint

from ..factories import make_study


def fingerprint(study) -> str:
    return selectors.study_protocol_fingerprint(study=study)


def test_canonical_json_is_sorted_compact_utf8():
    assert canonical_json({"b": "é", "a": [1, {"d": 2, "c": None}]}) == (
        '{"a":[1,{"c":null,"d":2}],"b":"é"}'.encode()
    )
    assert protocol_fingerprint({"a": 1}) == hashlib.sha256(b'{"a":1}').hexdigest()


def test_the_document_holds_the_protocol_and_commits_to_the_key(lead):
    study = make_study(lead=lead, slug="doc", cases=2, status=Study.Status.DRAFT)
    document = json.loads(b"".join(selectors.study_protocol_chunks(study=study)))
    assert set(document) == {
        "format", "instructions", "rubric", "test_cases", "blinding", "success_criterion",
        "quality_control", "rating_screen",
    }  # fmt: skip
    assert document["rating_screen"] == {"explanation_first": False, "case_layout": "standard"}
    # The quality rules are frozen with the protocol: the template's defaults here.
    assert document["quality_control"]["rules"]["gold_pass_percent"] == 70
    assert document["quality_control"]["items"] == []
    assert document["format"] == "concord-protocol/1"
    assert [d["key"] for d in document["rubric"]] == [
        "depth", "evidence", "alternatives", "structure", "actionability"
    ]  # fmt: skip
    assert document["rubric"][0]["config"]["bands"] == [[0, 0], [2, 2], [4, 4], [6, 5]]
    assert document["rubric"][0]["level"] == "ordinal"
    first = document["test_cases"][0]
    assert set(first) == {"id", "prompt", "context", "stratum", "responses"}
    assert set(first["responses"]) == {"A", "B"}
    # The secret itself is hashed into the fingerprint, so the fingerprint cannot be
    # reversed by trying the 2^n possible keys; the document is shown only after unblinding.
    assert document["blinding"] == {
        "seed": 42, "side_mode": "fixed", "systems": ["baseline", "improved"],
        "secret": study.blinding_secret,
    }  # fmt: skip
    assert document["success_criterion"] == {"alpha": "0.700", "min_dimensions": 3}
    # Labels map to texts only: the document never says which system is A.
    assert "baseline" not in json.dumps(document["test_cases"])


def test_the_streamed_document_is_the_canonical_json_of_the_whole(lead, monkeypatch):
    """Written a few cases at a time, the document is still one canonical JSON text, with
    every case in order and its texts by label; the fingerprint is its SHA-256."""
    monkeypatch.setattr("studies.selectors.protocol.PROTOCOL_CHUNK", 2)
    study = make_study(lead=lead, slug="pieces", cases=5, status=Study.Status.DRAFT)
    pieces = list(selectors.study_protocol_chunks(study=study))
    whole = b"".join(pieces)
    document = json.loads(whole)
    assert canonical_json(document) == whole and len(pieces) > 5
    assert document["test_cases"] == [
        {
            "id": case.case_id,
            "prompt": case.prompt,
            "context": case.context,
            "stratum": case.stratum,
            "responses": {label.label: label.response.text for label in case.labels.all()},
        }
        for case in study.test_cases.order_by("position")
    ]
    assert fingerprint(study) == hashlib.sha256(whole).hexdigest()


def test_the_fingerprint_is_stable_for_the_same_protocol(lead):
    one = make_study(lead=lead, slug="one", cases=3, status=Study.Status.DRAFT, secret="s")
    two = make_study(lead=lead, slug="two", cases=3, status=Study.Status.DRAFT, secret="s")
    other = make_study(lead=lead, slug="other", cases=3, status=Study.Status.DRAFT)
    assert fingerprint(other) != fingerprint(one)  # another blinding secret, another key
    assert fingerprint(one) == fingerprint(one) == fingerprint(two)
    # Neither the name, the description nor the consent are part of the protocol.
    services.study_update(
        study=two, actor=lead, changes={"name": "X", "description": "Y", "consent_text": "Z"}
    )
    assert fingerprint(two) == fingerprint(one)


def test_the_fingerprint_changes_with_a_response_text(lead):
    study = make_study(lead=lead, slug="fp", cases=3, status=Study.Status.DRAFT)
    before = fingerprint(study)
    response = Response.objects.filter(test_case__study=study).first()
    response.text += " "
    response.save()
    assert fingerprint(study) != before


def test_the_fingerprint_changes_with_everything_raters_see(lead):
    study = make_study(lead=lead, slug="fp", cases=3, status=Study.Status.DRAFT)
    seen = {fingerprint(study)}
    changes = [
        lambda: services.study_update(study=study, actor=lead, changes={"blinding_seed": 43}),
        lambda: services.study_update(study=study, actor=lead, changes={"side_mode": "balanced"}),
        lambda: services.study_update(study=study, actor=lead, changes={"instructions": "Read."}),
        lambda: services.dimension_level_set(study=study, actor=lead, key="depth", level="ratio"),
        lambda: services.dimension_move(study=study, actor=lead, key="depth", offset=1),
        lambda: study.test_cases.filter(case_id="TC-001").update(prompt="Changed?"),
        lambda: study.test_cases.filter(case_id="TC-002").update(stratum="other"),
        lambda: study.test_cases.filter(case_id="TC-003").update(context="Some context"),
        lambda: services.study_update(
            study=study, actor=lead, changes={"success_min_dimensions": 4}
        ),
    ]
    for change in changes:
        change()
        study.refresh_from_db()
        seen.add(fingerprint(study))
    assert len(seen) == len(changes) + 1


def test_the_downloaded_document_hashes_to_the_stored_fingerprint(client, lead):
    study = make_study(lead=lead, slug="proof", cases=3, status=Study.Status.DRAFT)
    opened = services.study_open(study=study, actor=lead)
    client.force_login(lead)
    url = reverse("studies:protocol", args=[study.slug])
    # Before unblinding the document would give the key away: refused, even to the lead.
    assert client.get(url).status_code == 403
    Study.objects.filter(pk=study.pk).update(status=Study.Status.UNBLINDED)
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="proof-protocol.json"'
    body = b"".join(response.streaming_content)
    assert hashlib.sha256(body).hexdigest() == opened.protocol_fingerprint


def test_the_rating_screen_options_are_part_of_the_fingerprint(lead):
    study = make_study(lead=lead, slug="screen", cases=2, status=Study.Status.DRAFT)
    before = fingerprint(study)
    Study.objects.filter(pk=study.pk).update(explanation_first=True)
    study.refresh_from_db()
    assert fingerprint(study) != before


def test_the_adaptive_design_is_part_of_the_fingerprint_and_a_fixed_one_adds_nothing(lead):
    study = make_study(lead=lead, slug="adaptive", cases=2, status=Study.Status.DRAFT)
    study = services.study_update(study=study, actor=lead, changes={"raters_per_item": 2})
    fixed = fingerprint(study)
    # A fixed design writes the document it wrote before the adaptive design existed.
    assert "adaptive_raters" not in json.loads(
        b"".join(selectors.study_protocol_chunks(study=study))
    )
    seen = {fixed}
    for k_max in (3, 5):
        study = services.study_update(
            study=study, actor=lead, changes={"raters_per_item_max": k_max}
        )
        document = json.loads(b"".join(selectors.study_protocol_chunks(study=study)))
        assert document["adaptive_raters"] == {"k_min": 2, "k_max": k_max}
        seen.add(fingerprint(study))
    assert len(seen) == 3
    study = services.study_update(study=study, actor=lead, changes={"raters_per_item_max": None})
    assert fingerprint(study) == fixed


def test_the_adaptive_design_is_frozen_when_the_study_opens(lead):
    study = make_study(lead=lead, slug="frozen-adaptive", cases=2, status=Study.Status.OPEN)
    with pytest.raises(ApplicationError, match="can no longer change: raters per test case"):
        services.study_update(study=study, actor=lead, changes={"raters_per_item_max": 4})
