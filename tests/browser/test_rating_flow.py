import pytest
from playwright.sync_api import expect

from annotation.models import Assignment, Rating
from studies.models import Membership

from ..annotation.support import consent_all
from ..factories import PASSWORD, UserFactory, make_study
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def rater_study():
    rater = UserFactory(username="browser-rater")
    study = make_study(slug="browser-study", cases=3, raters=[rater])
    consent_all(study)
    return rater, study


def fill_response(page, label):
    # The page's scripts handle the clicks below: wait until they have run.
    page.wait_for_load_state("load")
    card = page.locator(f'.response-card[data-label="{label}"]')
    rows = card.locator(f"#{label}-depth .item-row")
    card.locator(f"#{label}-depth [data-add-item]").click()
    for number, factor in enumerate(("competitive pressure", "misuse risk", "monitoring triggers")):
        if number:
            page.keyboard.press("Enter")  # a new row, focused
        expect(rows).to_have_count(number + 1)
        page.keyboard.type(factor)
    # Mark the third factor half-weight: 2.5 factors stay in the 2-3 band.
    card.locator(f"#{label}-depth .item-row").nth(2).locator("label").click()
    card.locator(f"#{label}-evidence-0").check()
    card.locator(f"#{label}-structure-0").check()
    card.locator(f"#{label}-structure-2").check()


def test_rater_signs_in_scores_a_pair_and_sees_progress(page, live_server, rater_study, screenshot):
    rater, study = rater_study
    sign_in(page, live_server, rater.username, PASSWORD)
    page.get_by_role("link", name=study.name).click()
    expect(page.locator("#progress-text")).to_have_text("0 of 3 done")
    page.get_by_role("link", name="Next unrated case").click()

    fill_response(page, "A")
    card_a = page.locator('.response-card[data-label="A"]')
    expect(card_a.locator("#A-depth [data-count]")).to_have_text("2.5")
    expect(card_a.locator("#A-depth [data-points]")).to_have_text("2")
    expect(card_a.locator("[data-total]")).to_have_text("5")  # 2 + 1 + 0 + 2 + 0

    fill_response(page, "B")
    page.locator("#B-actionability [data-add-item]").click()
    page.keyboard.type("pre-register update rules")
    expect(page.locator('.response-card[data-label="B"] [data-total]')).to_have_text("7")
    page.get_by_label("Medium").check()
    page.locator("#notes").fill("Depth was hard to count in B.")
    screenshot(page, "rating-desktop")

    page.get_by_role("button", name="Submit and next").click()
    expect(page.locator("#progress-text")).to_have_text("1 of 3 done")

    rater_membership = Membership.objects.get(study=study, user=rater)
    submitted = Assignment.objects.get(rater=rater_membership, status="submitted")
    totals = dict(Rating.objects.filter(assignment=submitted).values_list("label", "total"))
    assert totals == {"A": 5, "B": 7}
    assert submitted.confidence == "medium"
    assert submitted.notes == "Depth was hard to count in B."


def test_rating_page_works_on_a_phone(browser, live_server, rater_study, screenshot):
    rater, study = rater_study
    context = browser.new_context(viewport={"width": 375, "height": 812}, is_mobile=True)
    page = context.new_page()
    sign_in(page, live_server, rater.username, PASSWORD)
    page.goto(f"{live_server.url}/s/{study.slug}/next/")
    expect(page.get_by_role("heading", name="Response A")).to_be_visible()
    # Nothing forces sideways scrolling of the page itself.
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    screenshot(page, "rating-phone")
    context.close()
