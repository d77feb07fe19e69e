"""Rater welfare over the API: coordinators read and change the settings, all or nothing,
with the pages' rules (one service), and read the pay check."""

from studies.models import StratumSetting, StudyEvent, WelfareSettings
from tests.factories import UserFactory, make_study
from tests.payloads import coordinator_of

URL = "studies/care/welfare/"


def test_a_coordinator_sets_and_reads_the_welfare_settings(lead_user, api_as):
    study = make_study(lead=lead_user, slug="care", cases=2, status="draft")
    coordinator = coordinator_of(study)
    api = api_as(coordinator)
    body = {
        "pay_basis": "case",
        "pay_amount": 2.5,
        "pay_currency": "gbp",
        "minimum_hourly": "12.21",
        "daily_minutes": 120,
        "strata": [{"stratum": "policy", "content_warning": "Violence.", "daily_minutes": 30}],
    }
    response = api("PUT", URL, body)
    assert response.status_code == 200, response.content
    data = response.json()
    assert (data["pay_amount"], data["pay_currency"], data["minimum_hourly"]) == (
        "2.50",
        "GBP",
        "12.21",
    )
    assert data["daily_minutes"] == 120 and data["profile_min_cell"] == 5
    assert {"stratum": "policy", "content_warning": "Violence.", "daily_minutes": 30} in data[
        "strata"
    ]
    assert data["pay_check"] == {"rows": [], "untimed": 0, "warnings": []}
    assert api("GET", URL).json() == data
    event = study.events.get(kind=StudyEvent.Kind.WELFARE_SETTINGS_CHANGED)
    assert event.actor == coordinator and event.detail["stratum_limits"]["policy"]["to"] == 30


def test_one_bad_value_refuses_the_request(lead_user, api_as):
    study = make_study(lead=lead_user, slug="care", cases=2, status="draft")
    api = api_as(lead_user)
    body = {
        "pay_basis": "case",
        "pay_amount": "2",
        "pay_currency": "EURO",
        "daily_minutes": 2000,
        "strata": [{"stratum": "policy", "content_warning": "Violence."}],
    }
    response = api("PUT", URL, body)
    assert response.status_code == 400
    problems = response.json()["error"]["problems"]
    assert any(p.startswith("currency: give the three-letter ISO 4217 code") for p in problems)
    assert any(p.startswith("daily limit (minutes): give a whole number 1-1440") for p in problems)
    assert api("PUT", URL, {"strata": {"policy": "x"}}).status_code == 400
    assert api("PUT", URL, {"recruitment": ["a list"]}).status_code == 400
    assert not WelfareSettings.objects.filter(study=study).exists()
    assert not StratumSetting.objects.exists()


def test_outsiders_and_raters_cannot_reach_it(lead_user, api_as):
    rater = UserFactory()
    make_study(lead=lead_user, slug="care", cases=2, status="draft", raters=[rater])
    assert api_as(rater)("GET", URL).status_code == 403
    assert api_as(UserFactory())("PUT", URL, {"pay_basis": "unpaid"}).status_code == 404
    assert not WelfareSettings.objects.exists()
