"""Getting around and being told the truth, in headless Chromium: a coordinator creating a
study from the navigation alone, a paused rater's message, a submit after every cookie is
lost that keeps the answers and leads back, and the phone rating screen saying which
response is being scored. Screenshots at 1366 and 375 px go to artifacts/screenshots/."""

import re

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from annotation.models import Assignment
from studies.access import COORDINATORS_GROUP
from studies.models import Membership, Study

from ..annotation.support import consent_all
from ..factories import PASSWORD, UserFactory, make_study
from .accessibility import assert_accessible, assert_fits
from .conftest import open_phone_menu, sign_in
from .test_rating_flow import fill_response

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 375, "height": 740}


@pytest.fixture
def rater_study():
    rater = UserFactory(username="nav-rater")
    study = make_study(slug="nav-study", cases=3, raters=[rater])
    consent_all(study)
    return rater, study, Membership.objects.get(study=study, user=rater)


def phone_page(browser):
    context = browser.new_context(viewport=PHONE, is_mobile=True)
    page = context.new_page()
    page.set_default_timeout(10_000)
    return context, page


def test_a_coordinator_creates_a_study_from_the_navigation(page, live_server, screenshot):
    coordinator = UserFactory(username="nav-coordinator")
    coordinator.groups.add(Group.objects.get_or_create(name=COORDINATORS_GROUP)[0])
    sign_in(page, live_server, coordinator.username, PASSWORD)
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Django admin")).to_have_count(0)
    screenshot(page, "nav-coordinator-desktop")
    nav.get_by_role("link", name="New study").click()
    expect(page.get_by_role("heading", name="New study")).to_be_visible()
    page.fill("#id_name", "Navigation study")
    page.fill("#id_slug", "navigation-study")
    page.get_by_role("button", name="Create the study").click()
    expect(page.get_by_role("heading", name="Navigation study")).to_be_visible()
    assert Study.objects.get(slug="navigation-study").lead == coordinator
    nav.get_by_role("link", name="Studies", exact=True).click()
    expect(page.get_by_role("link", name="Navigation study")).to_be_visible()
    expect(nav.get_by_role("link", name="Studies", exact=True)).to_have_attribute(
        "aria-current", "page"
    )
    assert_accessible(page, name="study list with navigation")


def test_the_study_pages_fit_a_laptop_grouped_by_the_studys_life(page, live_server, screenshot):
    lead = UserFactory(username="laptop-lead")
    make_study(slug="laptop-tabs", lead=lead, status=Study.Status.DRAFT)
    page.set_viewport_size({"width": 1366, "height": 768})
    sign_in(page, live_server, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/s/laptop-tabs/rubric/")
    life = page.get_by_role("list", name="Where the study is in its life")
    expect(life.locator("[aria-current=step]")).to_have_text("Draft")
    pages = page.get_by_role("navigation", name="Study pages")
    links = pages.get_by_role("link")
    assert links.count() >= 15
    # Every page in view without scrolling anything, in two rows at most of the groups.
    for n in range(links.count()):
        expect(links.nth(n)).to_be_in_viewport()
    height = links.first.bounding_box()["height"]
    assert pages.bounding_box()["height"] < 5 * height
    expect(
        pages.get_by_role("list", name="Set-up").get_by_role("link", name="Rubric")
    ).to_have_attribute("aria-current", "page")
    screenshot(page, "study-pages-laptop")
    assert_accessible(page, name="study pages on a laptop")


def test_navigation_and_study_tabs_on_a_phone(browser, live_server, screenshot):
    admin = UserFactory(username="nav-admin", is_staff=True, is_superuser=True)
    make_study(slug="phone-tabs", lead=admin)
    context, page = phone_page(browser)
    sign_in(page, live_server, admin.username, PASSWORD)
    page.goto(f"{live_server.url}/s/phone-tabs/")
    # Where the study is in its life, then its pages, folded behind one button.
    life = page.get_by_role("list", name="Where the study is in its life")
    expect(life.locator("[aria-current=step]")).to_have_text("Open")
    pages = page.get_by_role("navigation", name="Study pages")
    expect(page.locator("#study-pages")).to_be_hidden()
    pages.get_by_role("button", name="Study pages").click()
    links = pages.get_by_role("link")
    expect(links.first).to_be_visible()
    assert links.count() >= 15
    # Unfolded: every page in view at once, in its group, none beyond the screen's edge.
    for n in range(links.count()):
        box = links.nth(n).bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 375, links.nth(n)
    for group in ("Set-up", "Running", "Results"):
        expect(pages.get_by_role("list", name=group)).to_be_visible()
    assert_fits(page)
    screenshot(page, "study-tabs-phone")
    assert_accessible(page, name="study pages on a phone")
    pages.get_by_role("list", name="Results").get_by_role("link", name="Report").click()
    expect(page).to_have_url(re.compile("/report/"))
    assert_fits(page)
    page.goto(f"{live_server.url}/s/phone-tabs/")
    open_phone_menu(page)
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Django admin")).to_be_in_viewport()
    nav.get_by_role("button", name="Quality control").click()
    expect(nav.get_by_role("link", name="Study phone-tabs")).to_be_in_viewport()
    expect(nav.get_by_role("link", name="All studies")).to_be_in_viewport()
    assert_fits(page)
    screenshot(page, "nav-admin-phone")
    assert_accessible(page, name="admin navigation on a phone")
    context.close()


def test_a_paused_rater_is_told_their_participation_is_on_hold(
    page, browser, live_server, rater_study, screenshot
):
    rater, study, membership = rater_study
    membership.status = Membership.Status.PAUSED
    membership.save()
    assignment = membership.assignments.order_by("position").first()
    sign_in(page, live_server, rater.username, PASSWORD)
    expect(page.get_by_text("On hold")).to_be_visible()
    page.get_by_role("link", name=study.name).click()
    hold = page.locator("#rating-hold")
    expect(hold).to_contain_text("Your participation in this study is on hold.")
    expect(hold).to_contain_text(study.lead.get_username())
    expect(page.get_by_role("link", name="Next unrated case")).to_have_count(0)
    screenshot(page, "paused-study-desktop")
    page.goto(f"{live_server.url}/rate/{assignment.uuid}/")
    expect(page.locator("#rating-hold")).to_contain_text("on hold")
    expect(page.get_by_text("not accepting ratings")).to_have_count(0)
    expect(page.get_by_text("You can revise")).to_have_count(0)
    expect(page.get_by_role("button", name="Submit and next")).to_be_disabled()
    screenshot(page, "paused-case-desktop")
    assert_accessible(page, name="paused rater's case")
    context, phone = phone_page(browser)
    sign_in(phone, live_server, rater.username, PASSWORD)
    phone.goto(f"{live_server.url}/rate/{assignment.uuid}/")
    expect(phone.locator("#rating-hold")).to_be_visible()
    assert_fits(phone)
    screenshot(phone, "paused-case-phone")
    context.close()


def test_submit_after_every_cookie_is_lost_keeps_the_answers_and_leads_back(
    page, live_server, rater_study, screenshot
):
    rater, study, membership = rater_study
    assignment = membership.assignments.order_by("position").first()
    sign_in(page, live_server, rater.username, PASSWORD)
    page.goto(f"{live_server.url}/rate/{assignment.uuid}/")
    fill_response(page, "A")
    fill_response(page, "B")
    page.get_by_label("High").check()
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    # Every cookie gone (session and security token), then one more answer and Submit.
    page.context.clear_cookies()
    page.locator("#notes").fill("Written after the cookies were lost.")
    page.get_by_role("button", name="Submit and next").click()
    alert = page.locator("#session-alert")
    expect(alert).to_contain_text("signed out")
    expect(page.locator("#save-status")).to_contain_text("signed out")
    expect(page).to_have_url(f"{live_server.url}/rate/{assignment.uuid}/")
    expect(page.locator("#notes")).to_have_value("Written after the cookies were lost.")
    kept = page.evaluate(f"window.localStorage.getItem('concord:rate:{assignment.uuid}')")
    assert "Written after the cookies were lost." in kept
    screenshot(page, "lost-cookies-desktop")
    assert Assignment.objects.get(pk=assignment.pk).status != Assignment.Status.SUBMITTED
    # Sign in here and come back: the case opens with the answers, and submits.
    alert.get_by_role("link", name="Sign in here and come back to this case").click()
    page.fill("#id_username", rater.username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    expect(page).to_have_url(f"{live_server.url}/rate/{assignment.uuid}/")
    expect(page.locator("#restored-alert")).to_be_visible()
    expect(page.locator("#notes")).to_have_value("Written after the cookies were lost.")
    page.get_by_role("button", name="Submit and next").click()
    expect(page.locator("#progress-text")).to_have_text("1 of 3 done")
    submitted = Assignment.objects.get(pk=assignment.pk)
    assert submitted.status == Assignment.Status.SUBMITTED
    assert submitted.notes == "Written after the cookies were lost."
    assert submitted.confidence == "high"


def test_a_form_post_without_cookies_ends_on_a_page_that_leads_back(
    page, live_server, rater_study, screenshot
):
    rater, study, membership = rater_study
    assignment = membership.assignments.order_by("position").first()
    sign_in(page, live_server, rater.username, PASSWORD)
    page.goto(f"{live_server.url}/rate/{assignment.uuid}/")
    page.context.clear_cookies()
    # A form that posts directly (no autosave in front of it): the page says what happened.
    page.get_by_role("button", name="nav-rater").click()
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", name="Not sent: you are signed out")).to_be_visible()
    screenshot(page, "lost-token-page-desktop")
    assert_accessible(page, name="lost security token page")
    page.get_by_role("link", name="Sign in again and go back").click()
    page.fill("#id_username", rater.username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    expect(page).to_have_url(f"{live_server.url}/rate/{assignment.uuid}/")


def test_the_phone_rating_screen_shows_which_response_is_scored(
    browser, live_server, rater_study, screenshot
):
    rater, study, membership = rater_study
    assignment = membership.assignments.order_by("position").first()
    context, page = phone_page(browser)
    sign_in(page, live_server, rater.username, PASSWORD)
    page.goto(f"{live_server.url}/rate/{assignment.uuid}/")
    top_header = """() => {
        const el = document.elementFromPoint(window.innerWidth / 2, 12);
        const header = el && el.closest('.card-header');
        return header ? header.textContent.replace(/\\s+/g, ' ').trim() : null;
    }"""
    page.locator("#A-structure-0").scroll_into_view_if_needed()
    page.locator("#A-structure-0").check()
    assert page.evaluate(top_header).startswith("Response A Total 1 /")
    screenshot(page, "rating-phone-scoring-a")
    page.locator("#B-evidence-0").scroll_into_view_if_needed()
    page.locator("#B-evidence-0").check()
    page.locator("#B-evidence-1").check()
    assert page.evaluate(top_header).startswith("Response B Total 2 /")
    screenshot(page, "rating-phone-scoring-b")
    assert_fits(page)
    # Submitting without a confidence is caught in the page, next to the field.
    page.get_by_role("button", name="Submit and next").click()
    group = page.locator("#confidence-group")
    expect(group.locator(".field-error")).to_have_text(
        "Choose your confidence (Low, Medium or High) before submitting."
    )
    expect(group).to_be_in_viewport()
    # The picture once the smooth scroll to the field has ended: the page has stopped moving
    # for a few frames in a row.
    page.evaluate(
        """() => new Promise((done) => {
            let last = window.scrollY, still = 0;
            const frame = () => {
                still = window.scrollY === last ? still + 1 : 0;
                last = window.scrollY;
                if (still >= 5) done(); else requestAnimationFrame(frame);
            };
            requestAnimationFrame(frame);
        })"""
    )
    screenshot(page, "rating-phone-confidence-missing")
    assert Assignment.objects.get(pk=assignment.pk).status != Assignment.Status.SUBMITTED
    page.locator("#confidence-low").check()
    expect(group.locator(".field-error")).to_have_count(0)
    context.close()


def test_a_refusal_from_the_server_is_shown_next_to_its_field(page, live_server, rater_study):
    rater, study, membership = rater_study
    assignment = membership.assignments.order_by("position").first()
    sign_in(page, live_server, rater.username, PASSWORD)
    page.goto(f"{live_server.url}/rate/{assignment.uuid}/")
    # Posted past the page's own check (as an old page or a script would).
    page.evaluate(
        """() => {
            document.getElementById('payload').value = JSON.stringify({responses: {}});
            document.getElementById('rating-form').submit();
        }"""
    )
    group = page.locator("#confidence-group")
    expect(group.locator(".field-error")).to_contain_text("Choose your confidence")
    expect(group).to_have_attribute("aria-invalid", "true")
    top = page.locator("#form-error")
    expect(top).to_contain_text("Not submitted.")
    expect(top.get_by_role("button", name="Go to the field")).to_be_visible()
    assert_accessible(page, name="a refused submission")
