"""An adjudicator resolves a case three raters disagreed on; the export shows the decision."""

import csv
import io

import pytest
from playwright.sync_api import expect

from annotation.models import Adjudication

from ..annotation.adjudication_support import adjudication_world
from ..factories import PASSWORD
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def add_factors(page, label, factors):
    card = page.locator(f'.response-card[data-label="{label}"]')
    rows = card.locator(f"#{label}-depth .item-row")
    card.locator(f"#{label}-depth [data-add-item]").click()
    for number, factor in enumerate(factors):
        if number:
            page.keyboard.press("Enter")
        expect(rows).to_have_count(number + 1)
        page.keyboard.type(factor)


def test_adjudicator_resolves_a_case_and_the_export_shows_it(page, live_server, screenshot):
    world = adjudication_world(slug="browser-adj")
    sign_in(page, live_server, world.adjudicator.user.username, PASSWORD)
    page.get_by_role("link", name=world.study.name).click()
    expect(page.locator("#waiting-cases")).to_contain_text(world.case.case_id)
    page.get_by_role("link", name=f"Adjudicate case {world.case.case_id}").click()
    page.wait_for_load_state("load")

    # Three raters side by side, the disagreement on Depth highlighted and marked to resolve.
    expect(page.locator("#raters-answers thead th[data-rater]")).to_have_text(
        ["R-01", "R-02", "R-03"]
    )
    depth_a = page.locator('[data-dim-row="A-depth"]')
    expect(depth_a).to_have_attribute("data-differs", "")
    expect(depth_a).to_contain_text("To resolve")
    expect(page.locator('[data-dim-row="A-evidence"]')).to_contain_text("Read only")
    expect(page.locator("#raters-answers")).to_contain_text("note of rater 1")
    # The form asks for Depth only; the responses under their key labels.
    expect(page.locator("#rating-form fieldset.dimension")).to_have_count(2)
    expect(page.get_by_role("heading", name="Response A")).to_be_visible()

    add_factors(page, "A", ["market pressure", "misuse risk", "oversight"])
    add_factors(page, "B", ["market pressure"])
    # The draft is saved as the adjudicator works.
    page.locator("#notes").fill("A names three distinct factors; B restates one.")
    expect(page.locator("#save-status")).to_contain_text("Draft saved", timeout=15_000)
    screenshot(page, "adjudication-desktop")
    page.get_by_role("button", name="Record the decision").click()
    expect(page.locator("#decided-cases")).to_contain_text(world.case.case_id)

    world.adjudication.refresh_from_db()
    assert world.adjudication.status == Adjudication.Status.DONE
    assert world.adjudication.reason == "A names three distinct factors; B restates one."
    scoring = {d.key: d for d in world.study.rubric.scoring_dimensions()}["depth"]
    resolved = world.adjudication.answers["responses"]

    # The lead's long export shows the adjudicated answer and the reason.
    lead = page.context.browser.new_context().new_page()
    sign_in(lead, live_server, world.study.lead.username, PASSWORD)
    answer = lead.request.get(f"{live_server.url}/s/{world.study.slug}/results/export/long-csv/")
    assert answer.ok
    rows = list(csv.DictReader(io.StringIO(answer.text())))
    depth = [r for r in rows if r["test_case"] == world.case.case_id and r["dimension"] == "depth"]
    assert len(depth) == 6
    for row in depth:
        label = row["response_label"]
        assert row["adjudicated_value"] == str(scoring.cell_out(resolved[label]["depth"]))
        assert row["adjudication"] == "done"
        assert row["adjudication_reason"] == "A names three distinct factors; B restates one."


def test_adjudication_screen_works_on_a_phone(browser, live_server):
    world = adjudication_world(slug="phone-adj")
    context = browser.new_context(viewport={"width": 375, "height": 812}, is_mobile=True)
    page = context.new_page()
    sign_in(page, live_server, world.adjudicator.user.username, PASSWORD)
    page.goto(f"{live_server.url}/s/{world.study.slug}/adjudication/{world.adjudication.uuid}/")
    expect(page.get_by_role("button", name="Record the decision")).to_be_visible()
    # The raters' table scrolls inside its box; the page itself never sideways.
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
