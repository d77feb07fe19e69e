"""The whole crowd-platform flow in a browser, with a simulated vendor (issue 29): the
vendor's URL with its parameters, consent, qualification, rating, the completion code and
the countdown back to the vendor; the screened-out path; and the time-out release."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotation.models import Assignment, OnboardingSettings
from annotation.services.participants import participants_time_out
from studies.models import Participant, ParticipantLink, Study
from studies.services.participants import participant_link_save

from ..annotation.support import make_item
from ..factories import make_study
from ..payloads import payload_for
from .accessibility import assert_accessible, assert_fits
from .test_rating_flow import fill_response

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def crowd_study():
    study = make_study(slug="crowd", cases=2, raters=[], status=Study.Status.OPEN)
    Study.objects.filter(pk=study.pk).update(
        consent_text="You will rate AI responses.", disclosure_question=""
    )
    study.refresh_from_db()
    return study


def vendor_link(study, live_server) -> ParticipantLink:
    # The simulated vendor's "completion" and "screened out" pages: the live server's own
    # health check, which answers any query string.
    return participant_link_save(
        study=study,
        actor=study.lead,
        values={
            "name": "Prolific",
            "completion_code": "C1234ABC",
            "completion_url": f"{live_server.url}/healthz/live?cc=C1234ABC",
            "screened_out_code": "SCREENED1",
            "screened_out_url": f"{live_server.url}/healthz/live?cc=SCREENED1",
            "max_participants": "5",
        },
    )


def from_vendor(page, live_server, link, pid, session="SESSION1"):
    page.goto(
        f"{live_server.url}/p/{link.token}/?PROLIFIC_PID={pid}&STUDY_ID=VSTUDY&SESSION_ID={session}"
    )
    page.click("#participant-start")


def test_participant_from_the_vendor_to_the_completion_code_and_back(
    page, live_server, crowd_study, screenshot
):
    study = crowd_study
    make_item(study, kind="qualification", key=payload_for(1))
    # Any answer that is not blank passes: the flow, not the rubric, is under test here.
    OnboardingSettings.objects.update_or_create(study=study, defaults={"pass_percent": 0})
    link = vendor_link(study, live_server)
    from_vendor(page, live_server, link, "5f1a2b3c4d5e6f7a8b9c0d1e")
    expect(page.get_by_role("heading", name="Before you start")).to_be_visible()
    page.check("#id_agree")
    page.get_by_role("button", name="Agree and continue").click()
    page.goto(f"{live_server.url}/s/{study.slug}/participant/")
    page.get_by_role("button", name="Start the test").click()
    fill_response(page, "A")
    fill_response(page, "B")
    page.get_by_role("button", name="Record and continue").click()
    page.goto(f"{live_server.url}/s/{study.slug}/participant/")
    for _ in range(2):
        expect(page.locator("#submit-rating")).to_be_visible()
        fill_response(page, "A")
        fill_response(page, "B")
        page.get_by_label("Medium").check()
        rated = page.url
        page.get_by_role("button", name="Submit and next").click()
        page.wait_for_url(lambda url, rated=rated: url != rated)
    page.goto(f"{live_server.url}/s/{study.slug}/participant/")
    expect(page.get_by_role("button", name="Send")).to_be_visible()  # the end-of-study form
    page.get_by_role("button", name="Send").click()
    expect(page.locator("#completion-code")).to_have_text("C1234ABC")
    expect(page.locator("#countdown")).to_be_visible()
    screenshot(page, "participant-completed")
    # The countdown sends the participant back to the vendor's completion URL.
    page.wait_for_url(f"{live_server.url}/healthz/live?cc=C1234ABC", timeout=20_000)
    participant = Participant.objects.get()
    assert participant.status == Participant.Status.COMPLETED
    submitted = Assignment.objects.filter(rater=participant.membership, status="submitted")
    assert submitted.count() == 2


def test_declining_consent_shows_the_screened_out_code(page, live_server, crowd_study):
    link = vendor_link(crowd_study, live_server)
    from_vendor(page, live_server, link, "PIDDECLINE")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#participant-decline")
    expect(page.locator("#screened-out-code")).to_have_text("SCREENED1")
    page.click("#screened-out-return")
    page.wait_for_url(f"{live_server.url}/healthz/live?cc=SCREENED1")
    assert Participant.objects.get().status == Participant.Status.SCREENED_OUT


def test_a_timed_out_participant_is_told_the_item_moved_on(page, live_server, crowd_study):
    Study.objects.filter(pk=crowd_study.pk).update(consent_text="", raters_per_item=1)
    link = vendor_link(crowd_study, live_server)
    from_vendor(page, live_server, link, "PIDSLOW")
    page.goto(f"{live_server.url}/s/{crowd_study.slug}/participant/")
    expect(page.locator("#submit-rating")).to_be_visible()
    fill_response(page, "A")
    fill_response(page, "B")
    # Away longer than the time-out: the case goes on to the next participant.
    assert participants_time_out(now=timezone.now() + timedelta(minutes=61)) == 1
    page.get_by_role("button", name="Submit and next").click()
    expect(page.get_by_text("moved on to another participant")).to_be_visible()
    participant = Participant.objects.get()
    assert participant.status == Participant.Status.TIMED_OUT
    assert not Assignment.objects.filter(rater=participant.membership, status="submitted").exists()
    assert json.dumps(participant.external_id) == '"PIDSLOW"'


def test_on_a_phone_the_pages_a_participant_sees_fit_and_show_their_codes(
    browser, live_server, crowd_study, screenshot
):
    """Crowd participants often come on a phone: the link's page, the information sheet,
    the screened-out code and the completion code fit 375 pixels and pass axe."""
    link = vendor_link(crowd_study, live_server)
    context = browser.new_context(viewport={"width": 375, "height": 812}, is_mobile=True)
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.goto(f"{live_server.url}/p/{link.token}/?PROLIFIC_PID=PIDPHONE1&SESSION_ID=S1")
    assert_fits(page)
    assert_accessible(page, name="participant-join-phone")
    page.click("#participant-start")
    expect(page.get_by_role("heading", name="Before you start")).to_be_visible()
    assert_fits(page)
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#participant-decline")
    expect(page.locator("#screened-out-code")).to_have_text("SCREENED1")
    assert_fits(page)
    assert_accessible(page, name="participant-screened-out-phone")
    screenshot(page, "participant-screened-out-phone")
    # A second participant who has completed: the code and the countdown, on a phone.
    page.context.clear_cookies()
    page.goto(f"{live_server.url}/p/{link.token}/?PROLIFIC_PID=PIDPHONE2&SESSION_ID=S2")
    page.click("#participant-start")
    Participant.objects.filter(external_id="PIDPHONE2").update(
        status=Participant.Status.COMPLETED, finished_at=timezone.now()
    )
    page.goto(f"{live_server.url}/s/{crowd_study.slug}/participant/")
    expect(page.locator("#completion-code")).to_have_text("C1234ABC")
    expect(page.locator("#countdown")).to_be_visible()
    assert_fits(page)
    assert_accessible(page, name="participant-completed-phone")
    context.close()
