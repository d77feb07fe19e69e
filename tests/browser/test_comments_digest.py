"""QC-006 in headless Chromium: a coordinator follows the QC page's link to the comments
digest, filters it, marks a comment read and then the rest; the count on the QC page
follows, and the page fits a phone."""

import pytest
from playwright.sync_api import expect

from ..factories import PASSWORD, UserFactory
from ..payloads import SYSTEMS, coordinator_of, payload_for, study_with_systems, submit
from .accessibility import assert_fits
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_coordinator_reads_the_comments_and_marks_them_read(page, live_server, screenshot):
    study = study_with_systems(lead=UserFactory(), slug="browser-digest", cases=2)
    for rater in study.memberships.filter(role="rater").order_by("pseudonym"):
        for n, assignment in enumerate(rater.assignments.order_by("position")):
            payload = payload_for(n, notes=f"{rater.pseudonym} wonders about case {n}.")
            payload["responses"]["B"]["depth"].update(flagged=True, flag_note="Unclear factors.")
            submit(assignment, payload)
    coordinator = coordinator_of(study, "digest-browser")
    sign_in(page, live_server, coordinator.username, PASSWORD)
    page.goto(f"{live_server.url}/s/{study.slug}/quality/")
    expect(page.locator("[data-comments-unread]")).to_have_text("8")
    page.get_by_role("link", name="Comments", exact=True).click()
    expect(page.get_by_role("heading", name="Comments", exact=True)).to_be_visible()
    expect(page.locator("[data-comment]")).to_have_count(8)
    for name in SYSTEMS:
        assert name not in page.content()

    page.select_option("#id_source", "note")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("[data-comment]")).to_have_count(4)
    screenshot(page, "comments-digest")
    page.locator("[data-comment]").first.get_by_role("button", name="Mark as read").click()
    expect(page.get_by_text("1 comment marked as read.")).to_be_visible()
    expect(page.locator("#id_source")).to_have_value("note")
    expect(page.locator("[data-unread-total]")).to_contain_text("7 unread")
    page.set_viewport_size({"width": 375, "height": 800})
    assert_fits(page)
    page.set_viewport_size({"width": 1366, "height": 900})

    page.goto(f"{live_server.url}/s/{study.slug}/comments/?unread=on")
    expect(page.locator("[data-comment]")).to_have_count(7)
    page.get_by_role("button", name="Mark all 7 shown as read").click()
    expect(page.get_by_text("No comments unread match these filters.")).to_be_visible()
    page.goto(f"{live_server.url}/s/{study.slug}/quality/")
    expect(page.locator("[data-comments-unread]")).to_have_text("0")
