"""The raters' preparation over the API: the onboarding settings and the training and
qualification items with their keys, through the onboarding pages' forms and services."""

import pytest

from annotation.models import OnboardingSettings, TrainingItem
from annotation.selectors import onboarding_settings, training_items
from tests.factories import UserFactory, make_study
from tests.payloads import coordinator_of, full_marks_payload

SETTINGS = "studies/prep/onboarding-settings/"
ITEMS = "studies/prep/training-items/"


@pytest.fixture
def study(lead_user):
    return make_study(lead=lead_user, slug="prep", cases=3, raters=[UserFactory()], consented=True)


def test_the_settings_change_as_on_the_page_and_name_the_practice_case(study, lead_user, api_as):
    api = api_as(lead_user)
    shown = api("GET", SETTINGS).json()
    assert shown["practice_case"] is None and shown["max_attempts"] == 2
    assert [(r["pseudonym"], r["attempts"], r["passed"]) for r in shown["raters"]] == [
        ("R-01", 0, False)
    ]
    body = {"practice_case": "TC-002", "pass_percent": 90, "calibration_call_required": True}
    response = api("PATCH", SETTINGS, body)
    assert response.status_code == 200, response.content
    settings = onboarding_settings(study=study)
    assert settings.practice_case.case_id == "TC-002"
    assert (settings.pass_percent, settings.calibration_call_required) == (90, True)
    assert settings.max_attempts == 2  # left out, it stays
    assert response.json()["practice_case"] == "TC-002"
    for bad in (
        {"pass_percent": 101},
        {"max_attempts": 0},
        {"practice_case": "TC-404"},
        {"withdrawal_data": "shred"},
        {"practice_enabled": "no"},
        {"colour": "blue"},
    ):
        assert api("PATCH", SETTINGS, bad).status_code == 400, bad
    settings = OnboardingSettings.objects.get(study=study)
    assert (settings.pass_percent, settings.max_attempts) == (90, 2)
    assert api("PATCH", SETTINGS, {"practice_case": None}).json()["practice_case"] is None
    rater = study.memberships.get(role="rater").user
    assert api_as(rater)("GET", SETTINGS).status_code == 403


def test_an_item_is_made_keyed_edited_and_deleted(study, lead_user, api_as):
    api = api_as(lead_user)
    body = {
        "kind": "training",
        "title": "Worked example",
        "prompt": "Should the lab release the model?",
        "responses": ["Release in stages.", "Delay a year."],
        "explanation": "Staged release counts once.",
    }
    response = api("POST", ITEMS, body)
    assert response.status_code == 201, response.content
    item = response.json()
    assert item["key"] == {} and item["position"] == 1
    # Raters see it only once its key is entered.
    assert not training_items(study=study, kind="training").exists()
    # The answers as the rating screen sends them; its confidence and notes are no part of
    # a key, and sent here they are refused by name rather than dropped unseen.
    screen = full_marks_payload()
    refused = api("PUT", f"{ITEMS}{item['id']}/key/", screen)
    assert refused.status_code == 400
    assert (
        "confidence: not a field of this request; use responses, case."
        in (refused.json()["error"]["problems"])
    )
    key = {"responses": screen["responses"]}
    response = api("PUT", f"{ITEMS}{item['id']}/key/", key)
    assert response.status_code == 200, response.content
    assert response.json()["key"]["responses"]["A"]["depth"]["points"] == 5
    assert training_items(study=study, kind="training").count() == 1
    bad = {"responses": full_marks_payload()["responses"]}
    bad["responses"]["A"]["evidence"] = {"checked": [True]}
    assert api("PUT", f"{ITEMS}{item['id']}/key/", bad).status_code == 400
    assert api("PUT", f"{ITEMS}{item['id']}/key/", {"responses": []}).status_code == 400
    # Edited: fields left out stay, and the key with them.
    response = api("PATCH", f"{ITEMS}{item['id']}/", {"title": "Renamed"})
    assert response.status_code == 200
    assert response.json()["prompt"] == body["prompt"] and response.json()["key"]
    assert api("GET", ITEMS).json()["items"][0]["title"] == "Renamed"
    assert api("DELETE", f"{ITEMS}{item['id']}/").status_code == 204
    assert not TrainingItem.objects.exists()
    assert api("GET", f"{ITEMS}{item['id']}/").status_code == 404


def test_an_item_unlike_the_study_s_cases_is_refused(study, lead_user, api_as):
    api = api_as(lead_user)
    base = {"kind": "qualification", "title": "Q", "prompt": "P"}
    for body in (
        {**base, "responses": ["only one"]},
        {**base, "responses": ["a", "b", "c"]},  # the study's cases have two
        {**base, "responses": ["a", "b", "c", "d"]},
        {**base, "responses": "a, b"},
        {**base, "kind": "exam", "responses": ["a", "b"]},
        {**base, "title": "", "responses": ["a", "b"]},
    ):
        assert api("POST", ITEMS, body).status_code == 400, body
    assert not TrainingItem.objects.exists()
    created = api("POST", ITEMS, {**base, "responses": ["a", "b"], "explanation": "x"}).json()
    # A qualification item keeps no explanation, as on the page.
    assert created["kind"] == "qualification" and created["explanation"] == ""
    assert api("PATCH", f"{ITEMS}{created['id']}/", {"kind": "training"}).status_code == 400


def test_members_read_outsiders_do_not(study, lead_user, api_as):
    member = api_as(coordinator_of(study, "prep-member"))
    assert member("GET", ITEMS).json() == {"items": []}
    other = make_study(lead=UserFactory(), slug="prep-other", cases=1)
    item = api_as(lead_user)(
        "POST", ITEMS, {"kind": "training", "title": "t", "prompt": "p", "responses": ["a", "b"]}
    ).json()
    # An item of another study is not found under this one's address.
    outsider = api_as(other.lead)
    assert outsider("GET", f"{ITEMS}{item['id']}/").status_code == 404
    assert outsider("GET", f"studies/prep-other/training-items/{item['id']}/").status_code == 404
