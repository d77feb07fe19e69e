"""The rating screen with long responses at 1366x768 and 1920x1080: the response panels
take the room the rater chooses (tall, short, collapsed or not pinned), the choice is
remembered in this browser for this rater, and counted items being typed stay in view
below the pinned panels."""

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import expect

from annotation.models import Assignment
from studies.models import Response

from ..annotation.support import consent_all
from ..factories import PASSWORD, UserFactory, make_study
from .accessibility import assert_accessible
from .conftest import sign_in

PARAGRAPH = (
    "The ministry should weigh the fiscal cost against the expected reduction in waiting "
    "times, bearing in mind that the evidence from the pilot regions is mixed and that the "
    "staffing constraints noted in the audit may limit how quickly any change takes effect. "
)
LONG = "\n\n".join(f"**Point {n}.** " + PARAGRAPH * 3 for n in range(1, 13))


@pytest.fixture
def long_study():
    rater = UserFactory(username="panel-rater")
    study = make_study(slug="panel-study", cases=2, raters=[rater])
    consent_all(study)
    Response.objects.filter(test_case__study=study).update(text=LONG)
    assignment = Assignment.objects.filter(rater__user=rater).order_by("position").first()
    return rater, study, assignment


def _open(browser, live_server, rater, assignment, size):
    context = browser.new_context(viewport=size)
    page = context.new_page()
    page.set_default_timeout(10_000)
    sign_in(page, live_server, rater.username, PASSWORD)
    page.goto(f"{live_server.url}/rate/{assignment.uuid}/")
    page.wait_for_load_state("load")
    return context, page


def _typing_stays_below_the_panel(page, label="A"):
    """Scroll the rubric under the pinned panel, type a counted item, and say whether the
    field being typed in ends below the panel (not under or over it)."""
    card = page.locator(f'.response-card[data-label="{label}"]')
    card.locator(f"#{label}-depth [data-add-item]").click()
    page.keyboard.type("first factor")
    # An instant scroll (a wheel scrolls smoothly, and would race the typing below).
    page.evaluate("window.scrollBy({top: 450, behavior: 'instant'})")
    page.keyboard.type(" and more")
    field = card.locator(f"#{label}-depth [data-item-text]").first
    expect(field).to_be_focused()
    try:
        page.wait_for_function(
            """([field, head]) => field.getBoundingClientRect().top
                >= head.getBoundingClientRect().bottom - 1""",
            arg=[field.element_handle(), card.locator(".response-head").element_handle()],
            timeout=5_000,
        )
    except PlaywrightTimeoutError:
        return False
    return True


def test_the_rater_chooses_the_room_the_responses_take_and_it_is_remembered(
    browser, live_server, long_study, screenshot
):
    rater, _, assignment = long_study
    context, page = _open(browser, live_server, rater, assignment, {"width": 1366, "height": 768})
    head = page.locator('.response-card[data-label="A"] .response-head')
    layout = page.get_by_role("radiogroup", name="Response text:")
    expect(layout.get_by_role("radio", name="Tall")).to_be_checked()
    tall = head.bounding_box()["height"]
    assert tall < 0.55 * 768
    assert _typing_stays_below_the_panel(page)
    screenshot(page, "rating-long-1366-after")
    assert_accessible(page, name="rating screen with long responses")

    layout.get_by_text("Short", exact=True).click()
    short = head.bounding_box()["height"]
    assert short < 0.7 * tall
    # From the keyboard: the arrow keys move through the choices.
    layout.get_by_role("radio", name="Short").focus()
    page.keyboard.press("ArrowRight")
    expect(layout.get_by_role("radio", name="Collapsed")).to_be_checked()
    expect(page.locator("#response-A-text")).to_be_hidden()
    assert head.bounding_box()["height"] < 80
    screenshot(page, "rating-long-1366-collapsed")

    # Remembered on the next case and after a reload.
    page.reload()
    page.wait_for_load_state("load")
    layout = page.get_by_role("radiogroup", name="Response text:")
    expect(layout.get_by_role("radio", name="Collapsed")).to_be_checked()
    expect(page.locator("#response-A-text")).to_be_hidden()
    layout.get_by_text("Not pinned", exact=True).click()
    expect(page.locator("#response-A-text")).to_be_visible()
    position = page.evaluate(
        "getComputedStyle(document.querySelector('.response-card .response-head')).position"
    )
    assert position == "static"
    # For this rater: the choice is kept under their name in this browser.
    stored = page.evaluate(f"localStorage.getItem('concord:response-layout:{rater.username}')")
    assert stored == "unpinned"
    context.close()


def test_the_default_panels_at_1920x1080(browser, live_server, long_study, screenshot):
    rater, _, assignment = long_study
    size = {"width": 1920, "height": 1080}
    context, page = _open(browser, live_server, rater, assignment, size)
    assert _typing_stays_below_the_panel(page)
    screenshot(page, "rating-long-1920-after")
    context.close()
