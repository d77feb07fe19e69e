"""Nobody presses Assign: raters get their cases when the study opens, and when they join."""

import pytest
from playwright.sync_api import expect

from annotation.models import Assignment
from annotation.services.participation import consent_record
from studies.models import Membership, Study
from studies.services import membership_add

from ..factories import PASSWORD, UserFactory, make_study
from .accessibility import assert_accessible
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_opening_and_joining_give_raters_their_cases(browser, page, live_server):
    lead = UserFactory(username="auto-lead")
    early = UserFactory(username="auto-early")
    late = UserFactory(username="auto-late")
    study = make_study(lead=lead, slug="auto", cases=3, raters=[], status=Study.Status.DRAFT)
    consent_record(
        rater=membership_add(study=study, user=early, role=Membership.Role.RATER),
        agreed=True,
        prior_knowledge=False,
    )
    assert not Assignment.objects.filter(rater__study=study).exists()

    # The coordinator opens the study and never presses Assign.
    sign_in(page, live_server, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/s/auto/status/open/")
    page.get_by_role("button", name="Open the study").click()
    expect(page.get_by_text("The study is open.")).to_be_visible()

    rater_context = browser.new_context()
    rater = rater_context.new_page()
    sign_in(rater, live_server, early.username, PASSWORD)
    rater.goto(f"{live_server.url}/s/auto/cases/")
    expect(rater.locator("#progress-text")).to_have_text("0 of 3 done")
    rater.get_by_role("link", name="Next unrated case").click()
    expect(rater).to_have_url(
        f"{live_server.url}/rate/{Assignment.objects.filter(rater__user=early).order_by('position').first().uuid}/"
    )
    rater_context.close()

    # A rater who joins the open study (accepting an invitation) gets their cases at once.
    page.goto(f"{live_server.url}/s/auto/raters/")
    page.fill("#id_username", late.username)
    page.get_by_role("button", name="Invite as rater").click()
    late_context = browser.new_context(viewport={"width": 375, "height": 812}, is_mobile=True)
    joiner = late_context.new_page()
    sign_in(joiner, live_server, late.username, PASSWORD)
    joiner.goto(f"{live_server.url}/")
    joiner.get_by_role("button", name="Accept").click()
    expect(joiner.get_by_text("Welcome to")).to_be_visible()
    joined = Membership.objects.get(study=study, user=late)
    consent_record(rater=joined, agreed=True, prior_knowledge=False)
    joiner.goto(f"{live_server.url}/s/auto/cases/")
    expect(joiner.locator("#progress-text")).to_have_text("0 of 3 done")
    expect(joiner.locator("#cases-awaited")).to_have_count(0)
    assert_accessible(joiner, name="cases-after-joining")
    assert Assignment.objects.filter(rater__user=late, rater__study=study).count() == 3


def test_a_rater_without_cases_is_told_so_not_sent_to_the_self_check(page, live_server):
    lead = UserFactory(username="none-lead")
    rater = UserFactory(username="none-rater")
    study = make_study(lead=lead, slug="none", cases=2, raters=[rater], consented=True)
    Assignment.objects.filter(rater__study=study).delete()  # e.g. a design that failed

    sign_in(page, live_server, rater.username, PASSWORD)
    page.goto(f"{live_server.url}/s/none/cases/")
    expect(page.locator("#cases-awaited")).to_contain_text("No cases have been assigned to you")
    expect(page.get_by_text("0 of 0")).to_have_count(0)
    expect(page.get_by_role("link", name="Self-check")).to_have_count(0)
    page.goto(f"{live_server.url}/s/none/next/")
    expect(page).to_have_url(f"{live_server.url}/s/none/cases/")
    assert_accessible(page, name="cases-none-yet")


@pytest.mark.parametrize("width", [1366, 375])
def test_a_drafts_overview_and_the_open_page_show_the_set_up_checklist(
    browser, live_server, screenshot, width
):
    lead = UserFactory(username="check-lead")
    make_study(lead=lead, slug="check", cases=4, raters=[], status=Study.Status.DRAFT)
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    sign_in(page, live_server, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/s/check/")
    checklist = page.locator("#setup-checklist")
    expect(checklist).to_contain_text("4 test cases")
    expect(checklist.locator("[data-done=no]")).to_have_count(
        6
    )  # rater pay and the adjudication rules included
    expect(page.locator("#setup-next")).to_contain_text("Next step: raters")
    screenshot(page, f"overview-checklist-{width}")
    assert_accessible(page, name=f"overview-checklist-{width}")
    checklist.get_by_role("link", name="Set up raters").click()
    expect(page).to_have_url(f"{live_server.url}/s/check/raters/")
    page.goto(f"{live_server.url}/s/check/status/open/")
    expect(page.locator("#setup-checklist")).to_contain_text("4 test cases")
    assert_accessible(page, name=f"open-checklist-{width}")
    context.close()
