"""A pause reaches an open rating page; after reinstatement the rater's draft is theirs again."""

import pytest
from playwright.sync_api import expect

from annotation import services
from annotation.models import Assignment
from studies.models import Membership
from studies.services import rater_pause_automatic, rater_status_change

from ..annotation.support import consent_all
from ..factories import PASSWORD, UserFactory, make_study
from .accessibility import assert_accessible
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def setup():
    user = UserFactory(username="paused-rater")
    study = make_study(slug="pause-study", cases=2, raters=[user])
    consent_all(study)
    rater = Membership.objects.get(study=study, user=user)
    return user, study, rater


def open_first_case(page, live_server, user, rater) -> Assignment:
    assignment = rater.assignments.order_by("position").first()
    sign_in(page, live_server, user.username, PASSWORD)
    page.goto(f"{live_server.url}/rate/{assignment.uuid}/")
    expect(page.get_by_role("heading", name="Response A")).to_be_visible()
    page.wait_for_load_state("load")
    return assignment


def test_a_pause_shows_a_banner_and_disables_submit(page, live_server, setup):
    user, study, rater = setup
    open_first_case(page, live_server, user, rater)
    page.locator("#notes").fill("before the pause")
    expect(page.locator("#save-status")).to_contain_text("Draft saved")

    rater_status_change(membership=rater, action="pause", reason="Checking", actor=study.lead)
    page.locator("#notes").fill("typed after the pause")  # the autosave is refused
    banner = page.locator("#page-alerts #rating-hold")
    expect(banner).to_contain_text("Your participation in this study is on hold")
    expect(banner).to_contain_text("An administrator has paused it")
    expect(page.get_by_role("button", name="Submit and next")).to_be_disabled()
    assert_accessible(page, name="rating-paused-banner")


def test_the_automatic_pause_says_it_was_automatic_and_why_without_naming_gold_items(
    page, live_server, setup
):
    user, study, rater = setup
    open_first_case(page, live_server, user, rater)
    rater_pause_automatic(
        membership_id=rater.pk,
        rule="QC-001",
        reason="Gold accuracy 40% (2 of 5) is below 70%.",
        evidence={"correct": 2, "answered": 5},
    )
    page.locator("#notes").fill("typed after the automatic pause")
    banner = page.locator("#page-alerts #rating-hold")
    expect(banner).to_contain_text("paused automatically")
    expect(banner).not_to_contain_text("An administrator has paused it")
    expect(page.get_by_role("button", name="Submit and next")).to_be_disabled()
    # The study page, loaded afresh, says the same; neither names gold items.
    page.goto(f"{live_server.url}/s/{study.slug}/cases/")
    hold = page.locator("#rating-hold")
    expect(hold).to_contain_text("paused automatically")
    assert "gold" not in hold.inner_text().lower()


def test_after_pause_and_reinstatement_the_draft_is_the_raters_with_no_conflict(
    page, live_server, setup
):
    user, study, rater = setup
    assignment = open_first_case(page, live_server, user, rater)
    page.locator("#notes").fill("before the pause")
    expect(page.locator("#save-status")).to_contain_text("Draft saved")

    rater_status_change(membership=rater, action="pause", reason="Checking", actor=study.lead)
    page.locator("#notes").fill("typed while paused")
    expect(page.locator("#save-status")).to_contain_text("Not saved")
    rater_status_change(membership=rater, action="reinstate", reason="Fine", actor=study.lead)

    # The rater reloads. The page sends its answers as it unloads, and that save may land
    # after the new page was rendered: the test makes it so. The page's own unload save is
    # held back, and sent (by the server-side service, the same write) just before the
    # reloaded page's first save goes out.
    page.evaluate("() => { window.fetch = () => new Promise(() => {}); }")
    landed = []

    def unload_save_lands_first(route):
        if not landed:
            sent = route.request.post_data_json
            services.draft_save(
                assignment=Assignment.objects.get(pk=assignment.pk),
                payload=sent["payload"],
                expected_version=sent["version"],
            )
            landed.append(sent["version"])
        route.continue_()

    page.route("**/draft/", unload_save_lands_first)
    page.reload()
    expect(page.locator("#notes")).to_have_value("typed while paused")
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    expect(page.locator("#stale-alert")).to_have_count(0)
    expect(page.get_by_text("saved from another tab")).to_have_count(0)
    expect(page.get_by_role("button", name="Submit and next")).to_be_enabled()
    assert landed
    assignment.refresh_from_db()
    assert assignment.draft["notes"] == "typed while paused"


def test_after_reinstatement_the_open_page_recovers_by_itself_without_a_reload(
    page, live_server, setup
):
    user, study, rater = setup
    assignment = open_first_case(page, live_server, user, rater)
    page.locator("#notes").fill("before the pause")
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    rater_status_change(membership=rater, action="pause", reason="Checking", actor=study.lead)
    page.locator("#notes").fill("typed while paused")
    expect(page.locator("#page-alerts #rating-hold")).to_be_visible()
    # Still on hold: coming back to the page leaves the banner and Submit as they are.
    page.evaluate("window.dispatchEvent(new Event('focus'))")
    expect(page.locator("#page-alerts #rating-hold")).to_be_visible()
    expect(page.get_by_role("button", name="Submit and next")).to_be_disabled()
    rater_status_change(membership=rater, action="reinstate", reason="Fine", actor=study.lead)
    # The rater comes back to the tab: no reload, the answers go to the server.
    page.evaluate("window.dispatchEvent(new Event('focus'))")
    expect(page.locator("#page-alerts #rating-hold")).to_have_count(0)
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    expect(page.get_by_role("button", name="Submit and next")).to_be_enabled()
    assignment.refresh_from_db()
    assert assignment.draft["notes"] == "typed while paused"
    # Ctrl+S sends again.
    page.locator("#notes").fill("after the reinstatement")
    page.keyboard.press("Escape")
    page.keyboard.press("Control+s")
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    assignment.refresh_from_db()
    assert assignment.draft["notes"] == "after the reinstatement"
