"""Closing says what it leaves undone (cases under their k, cases not started or not
submitted) and asks to confirm: on the Close page, and in the API's close."""

import pytest
from django.urls import reverse

from annotation.models import Assignment
from studies.models import Study, StudyEvent
from studies.selectors import study_unfinished_work
from tests.api.conftest import Api
from tests.factories import UserFactory, make_study
from tests.payloads import payload_for, submit

pytestmark = pytest.mark.django_db


@pytest.fixture
def running():
    """Three cases, two raters, every rater every case; one rater has submitted one."""
    raters = [UserFactory(), UserFactory()]
    study = make_study(cases=3, raters=raters, consented=True)
    first = Assignment.objects.filter(rater__user=raters[0]).order_by("position").first()
    submit(first, payload_for(1))
    return study


def test_the_summary_counts_what_is_left(running):
    unfinished = study_unfinished_work(study=running)
    assert (unfinished.cases, unfinished.k, unfinished.under_k) == (3, 2, 3)
    assert (unfinished.unstarted, unfinished.in_progress) == (5, 0)
    assert unfinished.sentences()[0] == "3 of 3 test cases have fewer than 2 submitted ratings."


def test_the_close_page_says_what_closing_leaves_and_asks_to_confirm(client, running):
    client.force_login(running.lead)
    url = reverse("studies:status", args=[running.slug, "close"])
    page = client.get(url).content.decode()
    assert 'id="close-unfinished"' in page
    assert "3 of 3 test cases have fewer than 2 submitted ratings." in page
    assert "5 cases given to raters are not started." in page
    assert 'name="confirm"' in page
    # Unconfirmed: refused with the reason, and the study stays open.
    refused = client.post(url)
    assert refused.status_code == 400 and "Confirm to close anyway" in refused.content.decode()
    running.refresh_from_db()
    assert running.is_open
    assert client.post(url, {"confirm": "yes"}).status_code == 302
    running.refresh_from_db()
    assert running.status == Study.Status.CLOSED
    assert running.events.filter(kind=StudyEvent.Kind.CLOSED).count() == 1


def test_a_study_with_nothing_left_closes_without_being_asked(client):
    raters = [UserFactory()]
    study = make_study(cases=1, raters=raters, consented=True)
    submit(Assignment.objects.get(rater__user=raters[0]), payload_for(1))
    client.force_login(study.lead)
    url = reverse("studies:status", args=[study.slug, "close"])
    page = client.get(url).content.decode()
    assert 'name="confirm"' not in page and "Every test case has its 1 rating" in page
    assert client.post(url).status_code == 302
    study.refresh_from_db()
    assert study.status == Study.Status.CLOSED


def test_the_api_close_answers_the_same_summary_and_takes_a_confirm_flag(client, running):
    from studies.services import tokens

    _, secret = tokens.api_token_create(user=running.lead, name="tests")
    api = Api(client, secret)
    path = f"studies/{running.slug}/status/"
    refused = api("POST", path, {"action": "close"})
    assert refused.status_code == 409
    body = refused.json()
    assert body["error"]["code"] == "confirm"
    assert body["unfinished"]["cases_under_k"] == 3 and body["unfinished"]["unstarted"] == 5
    running.refresh_from_db()
    assert running.is_open
    closed = api("POST", path, {"action": "close", "confirm": True})
    assert closed.status_code == 200
    assert closed.json()["status"] == "closed"
    assert closed.json()["unfinished"]["sentences"] == body["unfinished"]["sentences"]
