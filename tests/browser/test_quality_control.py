"""QC-001 in headless Chromium: a rater misses gold items, is paused after the fifth, and
sees only that their participation is on hold; an administrator sees the flag with the
evidence and reinstates them, and the decision is in the history."""

import pytest
from playwright.sync_api import expect

from annotation.models import Assignment
from annotation.services import rating_submit
from studies.models import Membership

from ..agreement.test_gold import bad, gold_study, good, queue
from ..factories import PASSWORD, UserFactory
from .accessibility import assert_fits
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_rater_is_paused_after_the_fifth_missed_gold_item_and_reinstated(
    browser, page, live_server, screenshot
):
    study, (user,) = gold_study(sample=10, gold=6)
    membership = Membership.objects.get(study=study, user=user)
    golds = 0
    for assignment in queue(user, study):
        is_gold = assignment.test_case.purpose == "gold"
        if is_gold and golds == 4:
            continue  # left for the browser
        golds += is_gold
        rating_submit(assignment=assignment, payload=bad() if is_gold else good(), any_version=True)
    membership.refresh_from_db()
    assert membership.status == Membership.Status.ACTIVE

    sign_in(page, live_server, user.username, PASSWORD)
    page.goto(f"{live_server.url}/s/{study.slug}/next/")
    expect(page.get_by_role("heading", name="Response A")).to_be_visible()
    # Nothing on the page says this is a gold item.
    assert "gold" not in page.content().lower()
    page.get_by_label("High").check()
    page.get_by_role("button", name="Submit and next").click()
    expect(page.get_by_text("Your participation in this study is on hold")).to_be_visible()
    screenshot(page, "qc-rater-on-hold")
    membership.refresh_from_db()
    assert membership.status == Membership.Status.PAUSED
    # No next item.
    page.goto(f"{live_server.url}/s/{study.slug}/next/")
    expect(page.get_by_text("Your participation in this study is on hold")).to_be_visible()
    assert Assignment.objects.filter(rater=membership, status="submitted").count() == 15

    admin = UserFactory(username="qc-admin", is_staff=True)
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    admin_page = context.new_page()
    sign_in(admin_page, live_server, admin.username, PASSWORD)
    admin_page.goto(f"{live_server.url}/s/{study.slug}/quality/")
    expect(admin_page.get_by_text("gold accuracy 0% on 5 items")).to_be_visible()
    evidence = admin_page.locator("[data-evidence]")
    expect(evidence).to_contain_text("Q-TC-")
    expect(evidence.locator("tbody tr").first).to_be_visible()
    expect(admin_page.get_by_text("(automatically)")).to_be_visible()
    screenshot(admin_page, "qc-admin-flag")
    admin_page.set_viewport_size({"width": 375, "height": 800})
    assert_fits(admin_page)
    admin_page.set_viewport_size({"width": 1366, "height": 900})
    admin_page.select_option(f"#action-{membership.pseudonym}", "reinstate")
    admin_page.fill(f"#reason-{membership.pseudonym}", "Retrained on the gold items")
    admin_page.get_by_role("button", name="Record").click()
    expect(admin_page.get_by_text("the reason is recorded")).to_be_visible()
    expect(admin_page.get_by_text("Reinstated: Retrained on the gold items")).to_be_visible()
    membership.refresh_from_db()
    assert membership.status == Membership.Status.ACTIVE
    context.close()
