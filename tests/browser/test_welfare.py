"""The lead changes the open demo study's pay in the browser: a refused value changes
nothing, the limits are frozen, the pay check warns; the page at desktop and phone widths."""

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from studies.models import StratumSetting, Study, WelfareSettings

from .accessibility import assert_accessible, assert_fits
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_lead_sets_pay_and_sees_the_check(browser, page, live_server):
    call_command("load_demo", verbosity=0)
    study = Study.objects.get(slug="reference-demo")
    sign_in(page, live_server, "coordinator", "concord-demo")
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(f"{live_server.url}/s/{study.slug}/")
    page.get_by_role("link", name="Rater welfare").click()
    expect(page.locator("#pay-check-table tr[data-phase='main']").first).to_be_visible()
    # Open: exposure limits and warnings are frozen, pay is not.
    expect(page.locator("#welfare-frozen")).to_be_visible()
    expect(page.get_by_label("Daily limit of active rating minutes per rater")).to_be_disabled()
    page.get_by_label("Currency").fill("EU")
    page.get_by_role("button", name="Save welfare settings").click()
    expect(page.locator("#welfare-problems")).to_contain_text("ISO 4217")
    assert WelfareSettings.objects.get(study=study).pay_currency == "EUR"
    page.get_by_label("Currency").fill("EUR")
    page.get_by_label("Minimum hourly equivalent").fill("40")
    page.get_by_role("button", name="Save welfare settings").click()
    expect(page.get_by_text("The rater welfare settings are saved.")).to_be_visible()
    expect(page.locator("[data-pay-warning='main']").first).to_contain_text(
        "below the minimum of 40.00 EUR"
    )
    assert not StratumSetting.objects.filter(study=study).exists()
    assert_accessible(page, name="welfare")
    assert_fits(page, width=1366)
    page.set_viewport_size({"width": 375, "height": 800})
    page.reload()
    assert_fits(page)
