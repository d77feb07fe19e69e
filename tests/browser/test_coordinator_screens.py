"""The coordinator's screens a newcomer meets, at 1366 and 375 px, with no axe violation of
any impact: a draft study's set-up checklist, the quality-control page with its evidence
charts, the gold and attention page, and the report's histogram of paired differences.
Screenshots go to artifacts/screenshots/ (copies in docs/screenshots/)."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from studies.services import study_create

from .accessibility import assert_accessible, assert_fits
from .conftest import sign_in
from .test_report import demo  # noqa: F401 - the unblinded demo study, a fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = {"1366": {"width": 1366, "height": 900}, "375": {"width": 375, "height": 800}}


@pytest.mark.parametrize("width", sorted(SIZES))
def test_the_coordinators_screens_read_well_at_desktop_and_phone_width(
    browser,
    live_server,
    demo,  # noqa: F811
    screenshot,
    width,
):
    draft = study_create(slug="draft-checklist", name="A new study", lead=demo.lead)
    context = browser.new_context(viewport=SIZES[width])
    page = context.new_page()
    page.set_default_timeout(10_000)
    sign_in(page, live_server, "admin", "concord-demo")

    def visit(name, *args):
        page.goto(live_server.url + reverse(name, args=args))
        page.wait_for_load_state("load")
        if width == "375":
            assert_fits(page)

    # A draft study's Overview: the set-up checklist, each step done or missing.
    visit("annotation:overview", draft.slug)
    # (On a phone the study pages fold behind "Study pages": read the checklist itself.)
    expect(page.locator("#setup-checklist").get_by_text("Test cases").first).to_be_visible()
    screenshot(page, f"overview-checklist-{width}")
    assert_accessible(page, name="draft study overview", every_impact=True)

    # Quality control: the Action menu starts empty; the charts have labelled axes.
    visit("agreement:qc", demo.slug)
    action = page.locator("select[name=action]").first
    expect(action.locator("option").first).to_have_text("Choose an action…")
    expect(action).to_have_value("")
    assert_accessible(page, name="quality control", every_impact=True)
    # The first rater's evidence (time histogram, gold chart) at the top of the screenshot.
    page.locator("[data-time-chart]").first.evaluate(
        "(chart) => chart.closest('section').scrollIntoView({block: 'start', behavior: 'instant'})"
    )
    screenshot(page, f"qc-{width}")

    visit("studies:quality", demo.slug)
    assert_accessible(page, name="gold and attention", every_impact=True)

    # The report's histogram: round bin edges, the caption naming both systems.
    visit("agreement:report", demo.slug)
    caption = page.locator("#differences-caption")
    first, second = sorted(demo.systems.values_list("name", flat=True))
    expect(caption).to_contain_text("the total of")
    expect(caption).to_contain_text(first)
    expect(caption).to_contain_text(second)
    figure = page.locator("figure", has=caption)
    figure.evaluate("(figure) => figure.scrollIntoView({block: 'center', behavior: 'instant'})")
    # Its bin edges readable at this width: text at least 10 px high, labels apart.
    labels = page.evaluate(
        """(figure) => Array.from(figure.querySelectorAll('svg text[text-anchor=middle]:not([fill]):not(.axis-title)'))
            .map((text) => text.getBoundingClientRect())
            .filter((box) => box.width > 0)
            .map((box) => [box.left, box.right, box.height])""",
        figure.element_handle(),
    )
    assert len(labels) >= 2
    assert all(height >= 10 for _, _, height in labels), labels
    assert all(a[1] + 4 <= b[0] for a, b in zip(labels, labels[1:], strict=False)), labels
    screenshot(page, f"report-histogram-{width}")
    assert_accessible(page, name="report", every_impact=True)
    context.close()
