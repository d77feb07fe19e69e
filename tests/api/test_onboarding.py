"""A rater's own steps over the API, with their own token: the information sheet, consent
as on the consent page, and what comes next."""

import pytest

from annotation.models import ConsentRecord
from studies.models import Study, StudyEvent
from tests.factories import UserFactory, make_study
from tests.payloads import SYSTEMS

SHEET = "You will read pairs of answers and rate them. You may stop at any time."
QUESTION = "Do you know which systems are being compared?"


@pytest.fixture
def rater_user(db):
    return UserFactory(username="api-rater")


@pytest.fixture
def study(lead_user, rater_user):
    study = make_study(
        lead=lead_user, slug="sheet", cases=2, raters=[rater_user], status="open", systems=SYSTEMS
    )
    Study.objects.filter(pk=study.pk).update(consent_text=SHEET, disclosure_question=QUESTION)
    study.refresh_from_db()
    return study


def test_a_rater_reads_the_sheet_and_consents(study, rater_user, api_as):
    api = api_as(rater_user)
    steps = api("GET", "studies/sheet/onboarding/")
    assert steps.status_code == 200
    body = steps.json()
    assert body["pseudonym"] == "R-01" and body["started"] is True
    assert body["next_step"] == "consent"
    assert body["consent"]["asked"] is True and body["consent"]["given_at"] is None
    assert body["consent"]["information_sheet"] == SHEET
    assert body["consent"]["disclosure_question"] == QUESTION
    # What the welfare settings add to the sheet (the right to skip a case, at least).
    assert body["consent"]["additions"]
    # Nothing in it says which system wrote what.
    assert not any(name in str(body) for name in SYSTEMS)

    given = api("POST", "studies/sheet/consent/", {"agree": True, "prior_knowledge": False})
    assert given.status_code == 200, given.content
    after = given.json()
    assert after["next_step"] is None and after["consent"]["given_at"]
    record = ConsentRecord.objects.get(rater__user=rater_user)
    assert record.prior_knowledge is False and SHEET in record.consent_text
    assert study.events.filter(kind=StudyEvent.Kind.RATER_CONSENTED).count() == 1
    # Sent again (a retry): the first answers stand.
    again = api("POST", "studies/sheet/consent/", {"agree": True, "prior_knowledge": True})
    assert again.status_code == 200
    assert ConsentRecord.objects.get(rater__user=rater_user).prior_knowledge is False


@pytest.mark.parametrize(
    "body, problem",
    [
        ({"prior_knowledge": False}, "agree: Tick the box"),
        ({"agree": True}, "prior_knowledge: Answer yes or no."),
        ({"agree": True, "prior_knowledge": True}, "disclosure: Describe your prior"),
        ({"agree": "yes", "prior_knowledge": False}, "agree: send true or false."),
        ({"agree": True, "prior_knowledge": False, "disclosure": ["x"]}, "disclosure: must be"),
    ],
)
def test_consent_is_checked_as_the_form_checks_it(study, rater_user, api_as, body, problem):
    refused = api_as(rater_user)("POST", "studies/sheet/consent/", body)
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert any(line.startswith(problem) for line in error["problems"]), error
    assert not ConsentRecord.objects.exists()


def test_a_disclosure_is_recorded_with_the_consent(study, rater_user, api_as):
    body = {"agree": True, "prior_knowledge": True, "disclosure": "I built one of them."}
    assert api_as(rater_user)("POST", "studies/sheet/consent/", body).status_code == 200
    record = ConsentRecord.objects.get(rater__user=rater_user)
    assert record.prior_knowledge is True and record.disclosure == "I built one of them."


def test_no_consent_before_the_study_starts(study, rater_user, api_as):
    Study.objects.filter(pk=study.pk).update(status=Study.Status.DRAFT)
    api = api_as(rater_user)
    assert api("GET", "studies/sheet/onboarding/").json()["started"] is False
    refused = api("POST", "studies/sheet/consent/", {"agree": True, "prior_knowledge": False})
    assert refused.status_code == 400 and "not started" in refused.json()["error"]["message"]
    assert not ConsentRecord.objects.exists()


def test_only_the_rater_reads_their_steps(study, lead_user, api_as):
    lead = api_as(lead_user)
    assert lead("GET", "studies/sheet/onboarding/").status_code == 403
    stranger = api_as(UserFactory(username="stranger"))
    assert stranger("GET", "studies/sheet/onboarding/").status_code == 404
    body = {"agree": True, "prior_knowledge": False}
    assert stranger("POST", "studies/sheet/consent/", body).status_code == 404
    assert not ConsentRecord.objects.exists()
