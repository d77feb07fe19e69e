"""The calibration call through the API: the items to discuss as the page shows them, the
pilot cases' texts without labels before unblinding, and the lead's record of a call."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import CalibrationAttendance, CalibrationCall
from annotation.selectors import calibration_sheet
from studies.models import Membership, Study, StudyEvent
from tests.annotation.test_calibration_call import _pilot_study
from tests.payloads import coordinator_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def pilot(lead, rater, other_rater):
    return _pilot_study(lead, [rater, other_rater])


def test_the_items_as_the_page_shows_them_unlabelled_before_unblinding(pilot, api_as):
    body = api_as(pilot.lead)("GET", f"studies/{pilot.slug}/calibration-call/")
    assert body.status_code == 200
    data = body.json()
    sheet = calibration_sheet(study=pilot)
    assert data["pilot_compared"] == sheet.pilot_compared == 3
    assert [item["title"] for item in data["pilot"]] == [item.title for item in sheet.pilot]
    assert [item["percent"] for item in data["pilot"]] == [
        item.disagreement.percent for item in sheet.pilot
    ]
    first = data["pilot"][0]
    case = pilot.test_cases.get(case_id=first["title"])
    # The texts without labels, in their own order: nothing ties a text to a label.
    assert first["labelled"] is False
    assert first["responses"] == [
        {"label": None, "text": text}
        for text in sorted(case.responses.values_list("text", flat=True))
    ]
    # The raters' answers keep the labels of the key; no system is named anywhere.
    assert {q["label"] for q in first["questions"]} == {"A", "B"}
    assert first["raters"] == ["R-01", "R-02"]
    text = json.dumps(data)
    for name in pilot.systems.values_list("name", flat=True):
        assert name not in text
    # Coordinators read it; the study's raters do not.
    coordinator = api_as(coordinator_of(pilot))
    assert coordinator("GET", f"studies/{pilot.slug}/calibration-call/").status_code == 200
    rater = pilot.memberships.filter(role=Membership.Role.RATER).first().user
    refused = api_as(rater)("GET", f"studies/{pilot.slug}/calibration-call/")
    assert refused.status_code == 403


def test_after_unblinding_the_texts_are_under_their_labels(pilot, api_as):
    Study.objects.filter(pk=pilot.pk).update(
        status=Study.Status.UNBLINDED, opened_at=timezone.now()
    )
    data = api_as(pilot.lead)("GET", f"studies/{pilot.slug}/calibration-call/").json()
    first = data["pilot"][0]
    case = pilot.test_cases.get(case_id=first["title"])
    assert first["labelled"] is True
    assert first["responses"] == [
        {"label": row.label, "text": row.response.text}
        for row in case.labels.select_related("response").order_by("label")
    ]


def test_the_lead_records_a_call_by_pseudonym(pilot, api_as):
    api = api_as(pilot.lead)
    url = f"studies/{pilot.slug}/calibration-call/calls/"
    held = (timezone.now() - timedelta(hours=2)).replace(microsecond=0)
    answer = api("POST", url, {"held_at": held.isoformat(), "attended": ["R-02"], "note": "Depth"})
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert body["attended"] == ["R-02"] and body["note"] == "Depth"
    call = CalibrationCall.objects.get()
    assert call.held_at == held and call.recorded_by == pilot.lead
    assert str(call.uuid) == body["id"]
    event = pilot.events.get(kind=StudyEvent.Kind.CALIBRATION_CALL_RECORDED)
    assert event.detail["attended"] == ["R-02"]
    data = api("GET", f"studies/{pilot.slug}/calibration-call/").json()
    assert [c["id"] for c in data["calls"]] == [body["id"]]
    attended = {row["rater"]: row["attended"] for row in data["attendance"]}
    assert attended["R-01"] == [] and len(attended["R-02"]) == 1


@pytest.mark.parametrize(
    "body, problem",
    [
        ({"attended": ["R-01"]}, "held_at: This field is required."),
        ({"held_at": "yesterday", "attended": ["R-01"]}, "held_at: Enter a valid date/time."),
        ({"held_at": "2026-01-01T10:00"}, "attended: Tick at least one rater"),
        ({"held_at": "2026-01-01T10:00", "attended": ["R-99"]}, "attended: Select a valid"),
        ({"held_at": "2026-01-01T10:00", "attended": "R-01"}, "attended: a list"),
        ({"held_at": "2099-01-01T10:00", "attended": ["R-01"]}, "The date is in the future"),
    ],
)
def test_a_call_is_checked_by_the_form_and_the_service(pilot, api_as, body, problem):
    answer = api_as(pilot.lead)("POST", f"studies/{pilot.slug}/calibration-call/calls/", body)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert any(problem in line for line in [error["message"], *error["problems"]]), error
    assert not CalibrationCall.objects.exists() and not CalibrationAttendance.objects.exists()


def test_only_the_lead_records_a_call(pilot, api_as):
    api = api_as(coordinator_of(pilot))
    body = {"held_at": "2026-01-01T10:00", "attended": ["R-01"]}
    answer = api("POST", f"studies/{pilot.slug}/calibration-call/calls/", body)
    assert answer.status_code == 403
    assert not CalibrationCall.objects.exists()
