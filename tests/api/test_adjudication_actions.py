"""The lead's adjudication actions through the API, as on the agreement and QC pages: a
case sent to adjudication by hand, and 7.3's switch of a dimension that missed its target,
listed in the report's deviations. Coordinators other than the lead are refused."""

import pytest

from agreement.report.sections import study_report
from agreement.services.recompute import agreement_request_recompute
from annotation.models import Adjudication
from studies.models import StudyEvent
from tests.agreement.test_adjudication_pages import draft as draft  # the fixtures
from tests.agreement.test_adjudication_pages import rated as rated
from tests.payloads import coordinator_of

pytestmark = pytest.mark.django_db


def test_the_lead_sends_a_case_by_hand(rated, api_as):
    Adjudication.objects.all().delete()
    url = f"studies/{rated.slug}/adjudications/send/"
    member = api_as(coordinator_of(rated, "adj-member"))
    assert member("POST", url, {"case_id": "TC-002", "reason": "Odd"}).status_code == 403
    api = api_as(rated.lead)
    answer = api("POST", url, {"case_id": "TC-002", "reason": "Odd"})
    assert answer.status_code == 201, answer.content
    body = answer.json()
    adjudication = Adjudication.objects.get()
    assert body["adjudication"] == str(adjudication.uuid) and body["case_id"] == "TC-002"
    assert body["status"] == "waiting" and body["reason"] == "Odd"
    assert all("manual" in triggers for triggers in body["triggers"].values())
    assert rated.events.filter(kind=StudyEvent.Kind.ADJUDICATION_SENT).count() == 1
    # Refusals: no such case, no reason, sent already; nothing more is written.
    for sent, problem in [
        ({"case_id": "TC-999", "reason": "Odd"}, "the study has no test case with that id"),
        ({"case_id": "TC-003", "reason": ""}, "Give the reason"),
        ({"case_id": "TC-002", "reason": "Again"}, "sent to adjudication already"),
    ]:
        refused = api("POST", url, sent)
        assert refused.status_code == 400
        error = refused.json()["error"]
        assert any(problem in line for line in [error["message"], *error["problems"]]), error
    assert Adjudication.objects.count() == 1
    assert rated.events.filter(kind=StudyEvent.Kind.ADJUDICATION_SENT).count() == 1


def test_a_missed_target_is_switched_and_the_report_lists_it(rated, api_as):
    url = f"studies/{rated.slug}/adjudication-rules/switch/"
    body = {"dimension": "harmful", "reason": "κ 0.2, under 0.60"}
    assert api_as(coordinator_of(rated, "adj-member"))("POST", url, body).status_code == 403
    api = api_as(rated.lead)
    answer = api("POST", url, body)
    assert answer.status_code == 200, answer.content
    switched = answer.json()
    assert switched["dimension"] == "harmful" and switched["switched_at"]
    assert switched["switched_reason"] == "κ 0.2, under 0.60"
    rules = api("GET", f"studies/{rated.slug}/adjudication-rules/").json()["rules"]
    assert next(r for r in rules if r["dimension"] == "harmful")["switched_at"]
    agreement_request_recompute(study_id=rated.pk)
    deviations = study_report(study=rated)["deviations"]
    assert deviations[0]["what"] == "Adjudication switched to every disagreement"
    # Once only; a dimension that meets its target (or none) cannot be switched.
    again = api("POST", url, {"dimension": "harmful", "reason": "again"})
    assert again.status_code == 400 and "already" in again.json()["error"]["message"]
    refused = api("POST", url, {"dimension": "nope", "reason": "x"})
    assert "Only a dimension whose α is below" in refused.json()["error"]["message"]
    assert rated.events.filter(kind=StudyEvent.Kind.ADJUDICATION_SWITCHED).count() == 1
