"""A rater reaches the study's daily exposure limit: the case they are on can be finished,
and then they are told, in their own time zone, when they can continue."""

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from annotation.models import ExposureDay
from studies.exposure import local_day, zone_of
from studies.models import Membership, WelfareSettings

from ..annotation.support import consent_all
from ..factories import PASSWORD, UserFactory, make_study
from .accessibility import assert_accessible
from .conftest import sign_in
from .test_rating_flow import fill_response

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ZONE = "Asia/Tokyo"  # UTC+9: a local midnight that is not UTC's


@pytest.fixture
def limited():
    user = UserFactory(username="limited-rater")
    study = make_study(slug="limit-study", cases=3, raters=[user])
    consent_all(study)
    WelfareSettings.objects.create(study=study, daily_minutes=1)
    return user, study, Membership.objects.get(study=study, user=user)


def test_a_rater_who_reaches_the_daily_limit_is_told_when_to_come_back(
    browser, live_server, limited, screenshot
):
    user, study, rater = limited
    context = browser.new_context(viewport={"width": 1366, "height": 900}, timezone_id=ZONE)
    page = context.new_page()
    page.set_default_timeout(10_000)
    sign_in(page, live_server, user.username, PASSWORD)
    page.goto(f"{live_server.url}/s/{study.slug}/next/")
    expect(page.get_by_role("heading", name="Response A")).to_be_visible()
    page.wait_for_load_state("load")
    page.locator("#notes").fill("Started before the limit.")
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    rater.refresh_from_db()
    assert rater.time_zone == ZONE  # reported by the browser with the save

    # Earlier work today (in the rater's own day) reaches the one-minute limit.
    today = local_day(moment=timezone.now(), zone=zone_of(ZONE))
    ExposureDay.objects.update_or_create(
        rater=rater, day=today, stratum="", defaults={"seconds": 60}
    )

    # The case already open can still be finished and submitted.
    fill_response(page, "A")
    fill_response(page, "B")
    page.get_by_label("Medium").check()
    page.get_by_role("button", name="Submit and next").click()

    notice = page.locator("#exposure-limit")
    expect(notice).to_contain_text("You have reached today's limit of 1 minute of rating")
    expect(notice).to_contain_text("tomorrow at 00:00 (Asia/Tokyo)")
    expect(page.locator("#progress-text")).to_have_text("1 of 3 done")
    expect(page.get_by_role("link", name="Next unrated case")).to_have_count(0)
    screenshot(page, "exposure-limit-desktop")
    assert_accessible(page, name="exposure-limit")

    # "Next unrated" and a case not started lead back to the same notice, on a phone too.
    page.set_viewport_size({"width": 375, "height": 812})
    page.goto(f"{live_server.url}/s/{study.slug}/next/")
    expect(page.locator("#exposure-limit")).to_contain_text("tomorrow at 00:00 (Asia/Tokyo)")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    screenshot(page, "exposure-limit-phone")
    context.close()
