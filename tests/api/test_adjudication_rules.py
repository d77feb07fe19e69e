"""Adjudication over the API: the rules (read by coordinators, replaced by the lead until
the study opens), and adjudicators invited as raters are."""

import pytest

from studies.models import Invitation, Membership, Study
from studies.presets import CORRECTNESS_RUBRIC, HARM_RUBRIC
from studies.services import rubric_replace
from tests.factories import UserFactory, make_study
from tests.payloads import SYSTEMS, coordinator_of

RUBRIC = {"name": "Harm", "dimensions": [*HARM_RUBRIC["dimensions"], *CORRECTNESS_RUBRIC["dimensions"]]}  # fmt: skip
URL = "studies/adj/adjudication-rules/"


@pytest.fixture
def study(lead_user):
    study = make_study(lead=lead_user, slug="adj", cases=2, status="draft", systems=SYSTEMS)
    return rubric_replace(study=study, actor=lead_user, definition=RUBRIC)


def test_the_lead_replaces_the_rules_and_coordinators_read_them(study, lead_user, api_as):
    lead = api_as(lead_user)
    body = {
        "rules": [
            {"dimension": "harmful", "trigger": "values", "values": ["yes"]},
            {"dimension": "correctness", "trigger": "disagreement", "tolerance": 1},
        ]
    }
    response = lead("PUT", URL, body)
    assert response.status_code == 200
    rules = {rule["dimension"]: rule for rule in response.json()["rules"]}
    assert list(rules) == ["harmful", "harm_category", "correctness"]
    assert rules["harmful"] == {
        "dimension": "harmful", "trigger": "values", "values": ["yes"], "tolerance": 0,
        "allowed_values": ["no", "yes"], "tolerance_applies": False, "switched_at": None,
        "switched_reason": "",
    }  # fmt: skip
    assert rules["correctness"]["tolerance"] == 1 and rules["correctness"]["allowed_values"] == [
        2,
        1,
        0,
    ]
    member = api_as(coordinator_of(study, "adj-member"))
    assert member("GET", URL).json() == lead("GET", URL).json()
    assert member("PUT", URL, {"rules": []}).status_code == 403


def test_bad_rules_are_refused_whole(study, lead_user, api_as):
    lead = api_as(lead_user)
    response = lead(
        "PUT",
        URL,
        {
            "rules": [
                {"dimension": "correctness", "trigger": "disagreement"},
                {"dimension": "harmful", "trigger": "values", "values": ["maybe"]},
            ]
        },
    )
    assert response.status_code == 400
    assert "“maybe” is not one of its values" in response.json()["error"]["message"]
    assert all(r["trigger"] == "never" for r in lead("GET", URL).json()["rules"])
    assert lead("PUT", URL, {"rules": "all"}).status_code == 400


def test_the_rules_freeze_when_the_study_opens(study, lead_user, api_as):
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    response = api_as(lead_user)("PUT", URL, {"rules": []})
    assert response.status_code == 400
    assert "frozen protocol" in response.json()["error"]["message"]


def test_only_the_lead_invites_adjudicators(study, lead_user, api_as):
    member = api_as(coordinator_of(study, "adj-member"))
    invited = UserFactory(username="adj-invited")
    body = {"username": invited.username, "role": "adjudicator"}
    assert member("POST", "studies/adj/raters/", body).status_code == 403
    assert member("POST", "studies/adj/invitations/", {"role": "adjudicator"}).status_code == 403
    lead = api_as(lead_user)
    assert lead("POST", "studies/adj/raters/", body).status_code == 202
    personal = Invitation.objects.get(study=study, invitee=invited)
    assert personal.role == Membership.Role.ADJUDICATOR
    link = lead("POST", "studies/adj/invitations/", {"role": "adjudicator"})
    assert link.status_code == 201 and link.json()["role"] == "adjudicator"
    assert lead("POST", "studies/adj/raters/", {**body, "role": "coordinator"}).status_code == 400
