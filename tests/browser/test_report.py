"""The demo study's report after unblinding: every checklist item filled, printable."""

from pathlib import Path

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from studies.models import Study
from studies.services.unblinding import study_unblind

from .accessibility import assert_accessible, assert_fits
from .conftest import SCREENSHOTS, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def demo(settings):
    settings.AGREEMENT_BOOTSTRAP_RESAMPLES = 500
    call_command("load_demo", verbosity=0)
    study = Study.objects.get(slug="reference-demo")
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    study.refresh_from_db()
    return study_unblind(study=study, actor=study.lead)


def test_the_demo_report_after_unblinding_is_complete_and_prints(browser, page, live_server, demo):
    sign_in(page, live_server, "coordinator", "concord-demo")
    page.goto(f"{live_server.url}/s/{demo.slug}/report/")
    rows = page.locator("tr[data-checklist]")
    expect(rows).to_have_count(12)
    missing = page.locator('tr[data-checklist][data-done="no"]')
    assert missing.count() == 0, missing.all_inner_texts()
    # The demo names no primary question: every question is corrected, and the report says so.
    expect(page.locator("#primary-named")).to_contain_text("No primary question was named")
    # Unblinded: the primary question is shown, no longer offered for change.
    expect(page.locator("#id_measure")).to_be_disabled()
    expect(page.locator("#section-estimates svg.report-chart").first).to_be_visible()
    for system in demo.systems.values_list("name", flat=True):
        expect(page.locator("#section-systems")).to_contain_text(system)
    assert_accessible(page, name="report")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "report.png"), full_page=True)
    # Print to PDF as the browser's Print does: the print stylesheet drops the navigation.
    page.emulate_media(media="print")
    expect(page.locator("nav.navbar")).to_be_hidden()
    expect(page.locator(".report-actions").first).to_be_hidden()
    expect(page.locator("#id_shares")).to_be_hidden()
    expect(page.locator("#primary-question")).to_be_hidden()
    page.screenshot(path=str(SCREENSHOTS / "report-print.png"), full_page=True)
    pdf = Path(SCREENSHOTS / "report.pdf")
    page.pdf(path=str(pdf), format="A4", print_background=True)
    assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 20_000


def test_the_report_fits_a_phone(browser, live_server, demo):
    context = browser.new_context(viewport={"width": 375, "height": 800})
    page = context.new_page()
    sign_in(page, live_server, "coordinator", "concord-demo")
    page.goto(f"{live_server.url}/s/{demo.slug}/report/")
    assert_fits(page)
    page.screenshot(path=str(SCREENSHOTS / "report-phone.png"), full_page=False)
    context.close()


def test_the_coordinator_names_the_primary_question_under_the_report(page, live_server):
    call_command("load_demo", verbosity=0)
    study = Study.objects.get(slug="reference-demo")
    sign_in(page, live_server, "coordinator", "concord-demo")
    page.goto(f"{live_server.url}/s/{study.slug}/report/")
    measure = page.get_by_label("Primary question (protocol section 1)")
    expect(measure).to_have_value("")
    measure.select_option(label="Depth of Analysis: paired difference (Wilcoxon signed-rank test)")
    page.get_by_role("button", name="Save the primary question").click()
    expect(page.get_by_text("The primary question is saved.")).to_be_visible()
    expect(page.get_by_label("Primary question (protocol section 1)")).to_have_value(
        "dimension:depth"
    )
    assert_fits(page, width=page.viewport_size["width"])
