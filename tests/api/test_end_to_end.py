"""A whole study driven through the HTTP API alone, as a pipeline would: create, rubric,
cases, raters, assignment, open, (ratings in the browser's service), close, agreement,
export, unblind."""

import csv
import io

import pytest

from studies import selectors
from studies.models import Study, StudyEvent
from studies.services import invitations
from tests.factories import UserFactory, make_cases
from tests.payloads import SYSTEMS, payload_for, submit

pytestmark = pytest.mark.django_db(transaction=True)


def _body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def test_a_study_from_creation_to_unblinding_through_the_api(lead_user, api_as):
    api = api_as(lead_user)
    raters = [UserFactory(username=f"api-rater-{n}") for n in range(3)]

    created = api("POST", "studies/", {"slug": "pipeline", "name": "Pipeline study"})
    assert created.status_code == 201, created.json()
    assert created.json()["status"] == "draft"
    assert created.json()["lead"] == "api-lead"

    # The rubric: a preset as exported, renamed and set back.
    definition = api("GET", "rubric-presets/").json()["presets"]["reference"]
    definition["name"] = "Reasoning, as piloted"
    response = api("PUT", "studies/pipeline/rubric/", definition)
    assert response.status_code == 200, response.json()
    assert api("GET", "studies/pipeline/rubric/").json()["name"] == "Reasoning, as piloted"

    cases = make_cases(6, systems=SYSTEMS)
    response = api("POST", "studies/pipeline/cases/", {"cases": cases})
    assert response.status_code == 201, response.json()
    assert response.json()["imported"] == 6
    listed = api("GET", "studies/pipeline/cases/?page_size=4").json()
    assert listed["count"] == 6 and len(listed["results"]) == 4 and listed["next"]

    for rater in raters:
        answer = api("POST", "studies/pipeline/raters/", {"username": rater.username})
        assert answer.status_code == 202
        (invitation,) = selectors.invitations_for_user(user=rater)
        invitations.invitation_accept_personal(invitation_hash=invitation.token_hash, user=rater)
    assigned = api("POST", "studies/pipeline/assign/").json()["created"]
    assert assigned == {"R-01": 6, "R-02": 6, "R-03": 6}

    opened = api("POST", "studies/pipeline/status/", {"action": "open"})
    assert opened.status_code == 200, opened.json()
    assert opened.json()["status"] == "open" and opened.json()["protocol_fingerprint"]
    # The protocol is frozen now, for the API as on the settings page.
    frozen = api("PATCH", "studies/pipeline/", {"blinding_seed": 7})
    assert frozen.status_code == 400
    assert "can no longer change" in frozen.json()["error"]["message"]

    study = Study.objects.get(slug="pipeline")
    for rater in study.memberships.filter(role="rater").order_by("pseudonym"):
        for n, assignment in enumerate(rater.assignments.order_by("position")):
            submit(assignment, payload_for(n + int(rater.pseudonym[2:])), active_seconds=20)
    progress = api("GET", "studies/pipeline/progress/").json()
    assert progress["submitted"] == 18 and sorted(progress["systems"]) == sorted(SYSTEMS)
    assert [r["done"] for r in progress["raters"]] == [6, 6, 6]

    assert api("POST", "studies/pipeline/status/", {"action": "close"}).json()["status"] == "closed"
    agreement = api("GET", "studies/pipeline/agreement/").json()
    assert agreement["stale"] is False and agreement["computed_at"]
    assert agreement["ratings"] == 36  # one per response: 18 cases of two
    assert {d["key"] for d in agreement["result"]["dimensions"]} >= {"depth", "evidence"}

    long_csv = api("GET", "studies/pipeline/exports/long-csv/")
    assert long_csv.status_code == 200 and long_csv.streaming
    text = _body(long_csv).decode()
    assert "R-01" in text and not any(system in text for system in SYSTEMS)
    assert api("GET", "studies/pipeline/exports/key-csv/").status_code == 403

    refused = api("POST", "studies/pipeline/unblind/", {"reason": "analysis"})
    assert refused.status_code == 400  # not confirmed
    unblinded = api("POST", "studies/pipeline/unblind/", {"confirm": True, "reason": "analysis"})
    assert unblinded.status_code == 200, unblinded.json()
    assert unblinded.json()["status"] == "unblinded"
    event = study.events.get(kind=StudyEvent.Kind.UNBLINDED)
    assert event.actor == lead_user and event.reason == "analysis"
    key = list(
        csv.reader(io.StringIO(_body(api("GET", "studies/pipeline/exports/key-csv/")).decode()))
    )
    assert key[0] == ["TC-ID", "Response", "System"] and {row[2] for row in key[1:]} == set(SYSTEMS)


def test_a_file_with_problems_imports_nothing_and_names_each_row(lead_user, api_as):
    api = api_as(lead_user)
    api("POST", "studies/", {"slug": "rows", "name": "Rows"})
    cases = make_cases(3)
    cases[1]["prompt"] = ""
    del cases[2]["responses"]["improved"]
    response = api("POST", "studies/rows/cases/", {"cases": cases})
    assert response.status_code == 400
    error = response.json()["error"]
    assert "nothing was imported" in error["message"]
    assert any(p.startswith("Line 2") for p in error["problems"])
    assert any(p.startswith("Line 3") for p in error["problems"])
    assert api("GET", "studies/rows/cases/").json()["count"] == 0


def test_cases_can_be_uploaded_as_a_file(lead_user, api_as):
    api = api_as(lead_user)
    api("POST", "studies/", {"slug": "upload", "name": "Upload"})
    data = b"id,prompt,response:one,response:two\nC-1,Why?,Because.,No idea.\n"
    upload = io.BytesIO(data)
    upload.name = "cases.csv"
    response = api("POST", "studies/upload/cases/", files={"file": upload})
    assert response.status_code == 201, response.json()
    assert response.json() == {
        "imported": 1,
        "systems": ["one", "two"],
        "strata": {},
        "content_warnings": 0,
        "identity_mentions": {"count": 0, "listed": []},
    }


def test_the_case_import_answers_with_every_blinding_check_hit(lead_user, api_as, monkeypatch):
    api = api_as(lead_user)
    api("POST", "studies/", {"slug": "named", "name": "Named"})
    cases = make_cases(3, systems=SYSTEMS)
    cases[0]["responses"][SYSTEMS[0]] = "I am Claude, made by Anthropic."
    cases[2]["responses"][SYSTEMS[1]] = f"As an AI language model, I prefer {SYSTEMS[0]}."
    response = api("POST", "studies/named/cases/", {"cases": cases})
    assert response.status_code == 201, response.json()
    found = response.json()["identity_mentions"]
    assert found["count"] == 4
    assert [(m["case_id"], m["system"], m["reason"], m["phrase"]) for m in found["listed"]] == [
        (cases[0]["id"], SYSTEMS[0], "names a model or its maker", "Claude"),
        (cases[0]["id"], SYSTEMS[0], "names a model or its maker", "Anthropic"),
        (cases[2]["id"], SYSTEMS[1], "describes itself as an AI", "As an AI language model"),
        (cases[2]["id"], SYSTEMS[1], "mentions the name of a system in this study", SYSTEMS[0]),
    ]
    assert "label" not in str(found).lower()  # by case and system, never by blinded label
    # A second import answers with its own cases' hits only, listing at most the bound.
    monkeypatch.setattr("studies.selectors.cases.MAX_LISTED", 1)
    more = make_cases(5, systems=SYSTEMS)
    for case in more:
        case["id"] = f"more-{case['id']}"
        case["responses"][SYSTEMS[1]] = "Gemini says so."
    found = api("POST", "studies/named/cases/", {"cases": more}).json()["identity_mentions"]
    assert found["count"] == 5 and len(found["listed"]) == 1
    assert found["listed"][0]["phrase"] == "Gemini"


def test_a_custom_rubric_is_all_or_nothing(lead_user, api_as):
    api = api_as(lead_user)
    api("POST", "studies/", {"slug": "custom", "name": "Custom"})
    before = api("GET", "studies/custom/rubric/").json()
    bad = {
        "name": "Mine",
        "dimensions": [
            {"key": "ok", "name": "Fine", "kind": "checklist",
             "config": {"criteria": [{"label": "Cited?"}]}},
            {"key": "Bad Key", "name": "x", "kind": "scale", "config": {}},
            {"key": "scale", "name": "Scale", "kind": "scale", "config": {}},
        ],
    }  # fmt: skip
    response = api("PUT", "studies/custom/rubric/", bad)
    assert response.status_code == 400
    problems = response.json()["error"]["problems"]
    assert len(problems) == 2 and problems[0].startswith("Dimension 2")
    assert api("GET", "studies/custom/rubric/").json() == before
    likert = api("GET", "rubric-presets/").json()["presets"]["likert"]
    assert api("PUT", "studies/custom/rubric/", likert).json()["dimensions"] == likert["dimensions"]


def test_settings_are_validated_by_the_settings_form(lead_user, api_as):
    api = api_as(lead_user)
    api("POST", "studies/", {"slug": "settings", "name": "Settings"})
    response = api("PATCH", "studies/settings/", {"raters_per_item": 1, "colour": "red"})
    assert response.status_code == 400
    assert response.json()["error"]["problems"][0].startswith("colour: not a setting")
    response = api("PATCH", "studies/settings/", {"raters_per_item": 1})
    assert response.json()["error"]["problems"] == [
        "raters_per_item: Ensure this value is greater than or equal to 2."
    ]
    changed = api("PATCH", "studies/settings/", {"raters_per_item": 2, "name": "Renamed"})
    assert changed.status_code == 200
    assert changed.json()["raters_per_item"] == 2 and changed.json()["name"] == "Renamed"
