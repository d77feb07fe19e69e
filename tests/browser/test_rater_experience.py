"""The rater's day in headless Chromium: consent, keyboard-only scoring, drafts that survive
reloads, lost connections and expired sessions, one rating per double submit, stale tabs,
the self-check, and an accessibility check of every rater page at desktop and phone width."""

import json
import time
from urllib.parse import parse_qs

import pytest
from playwright.sync_api import expect

from annotation import services
from annotation.models import Assignment, ConsentRecord, Rating
from annotation.services.training import training_answer_submit
from studies.models import Membership
from tests.payloads import full_marks_payload, zero_payload

from ..annotation.support import consent_all, make_item
from ..factories import PASSWORD, UserFactory, make_study
from .accessibility import assert_accessible, assert_fits
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG_TEXT = "\n\n".join(
    f"**Point {n}.** Competitive pressure, scientific norms and misuse risk interact; "
    "a staged release keeps option value while monitoring triggers are defined." * 2
    for n in range(1, 16)
)


@pytest.fixture
def setup():
    user = UserFactory(username="day-rater")
    study = make_study(slug="day-study", cases=3, raters=[user])
    study.consent_text = (
        "## About this study\n\n**Purpose.** Validate a rubric for strategic reasoning.\n\n"
        "**Tasks.** Score 3 pairs of responses. **Content warning:** some discuss misuse.\n\n"
        "**Pay.** $500-800. **Data.** Scores are pseudonymised. You may withdraw at any time."
    )
    study.instructions = "Evaluate responses based solely on rubric criteria."
    study.consent_version = 2  # a version no rater has agreed to, whatever the factory did
    study.save()
    rater = Membership.objects.get(study=study, user=user)
    return user, study, rater


def first_case(rater):
    return rater.assignments.order_by("position").first()


def open_case(page, live_server, assignment):
    page.goto(f"{live_server.url}/rate/{assignment.uuid}/")
    expect(page.get_by_role("heading", name="Response A")).to_be_visible()


def test_consent_gates_the_first_item(page, live_server, setup, screenshot):
    user, study, rater = setup
    sign_in(page, live_server, user.username, PASSWORD)
    page.get_by_role("link", name=study.name).click()
    expect(page.get_by_role("heading", name="Before you start")).to_be_visible()
    expect(page.get_by_role("link", name="Next unrated case")).to_have_count(0)
    assert_accessible(page, name="study page before consent")
    # Straight to a case by its address: sent to the information sheet instead.
    page.goto(f"{live_server.url}/rate/{first_case(rater).uuid}/")
    expect(page.get_by_role("heading", name="Information sheet")).to_be_visible()
    expect(page.get_by_text("Content warning:")).to_be_visible()
    assert_accessible(page, name="consent page")
    page.get_by_role("button", name="Agree and continue").click()
    expect(page.get_by_text("Tick the box to confirm")).to_be_visible()
    assert not ConsentRecord.objects.exists()
    page.get_by_role("radio", name="No", exact=True).check()
    page.get_by_label("I have read the information above and agree to take part.").check()
    screenshot(page, "consent-desktop")
    page.get_by_role("button", name="Agree and continue").click()
    expect(page.get_by_text("Agreed on")).to_be_visible()
    record = ConsentRecord.objects.get(rater=rater)
    assert record.version == study.consent_version and record.prior_knowledge is False
    page.get_by_role("link", name="Next unrated case").click()
    expect(page.get_by_role("heading", name="Response A")).to_be_visible()


def test_scoring_with_the_keyboard_only(page, live_server, setup):
    user, study, rater = setup
    consent_all(study)
    assignment = first_case(rater)
    sign_in(page, live_server, user.username, PASSWORD)
    open_case(page, live_server, assignment)
    keys = page.keyboard
    keys.type("?")
    expect(page.get_by_role("heading", name="Keyboard shortcuts")).to_be_visible()
    keys.press("Escape")
    expect(page.get_by_role("heading", name="Keyboard shortcuts")).to_be_hidden()
    keys.type("j")  # Response A, Depth of Analysis
    keys.type("+")
    keys.type("competitive pressure")
    keys.press("Enter")
    keys.type("misuse risk")
    keys.press("Enter")
    keys.type("monitoring triggers")
    keys.press("Tab")  # the ½ toggle of the third factor
    keys.press("Space")
    keys.type("j")  # Evidence Integration
    keys.press("Tab")
    keys.press("Space")  # evidence cited
    keys.type("j")  # Alternative Consideration
    keys.type("j")  # Logical Structure
    keys.press("Tab")
    keys.press("Space")  # premises
    keys.type("j")  # Actionability
    keys.type("+")
    keys.type("pre-register update rules")
    keys.press("Escape")
    keys.type("f")  # hard to apply; the focus stays on the dimension, so j and k move on
    keys.type("j")
    keys.type("k")  # back on Actionability; nothing was typed into its note
    keys.press("Shift+F")  # into the note
    keys.type("vague or not?")
    keys.press("Escape")
    keys.type("j")  # Response B, Depth of Analysis
    keys.type("+")
    keys.type("option value")
    keys.press("Escape")
    card_a = page.locator('.response-card[data-label="A"]')
    expect(card_a.locator("[data-total]")).to_have_text("6")  # 2 + 1 + 0 + 1 + 2
    keys.type("3")  # confidence High
    keys.type("n")
    keys.type("Scored without a mouse.")
    keys.press("Control+Enter")
    expect(page.locator("#progress-text")).to_have_text("1 of 3 done")

    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    assert (assignment.confidence, assignment.notes) == ("high", "Scored without a mouse.")
    ratings = {r.label: r for r in Rating.objects.filter(assignment=assignment)}
    shown_a = "B" if assignment.flipped else "A"
    a = ratings[shown_a].scores
    assert ratings[shown_a].total == 6
    assert [i["half"] for i in a["depth"]["items"]] == [False, False, True]
    assert a["actionability"]["flagged"] is True
    assert a["actionability"]["flag_note"] == "vague or not?"
    assert assignment.active_seconds >= 0


def _draft_notes_reach(assignment, notes: str, seconds: float = 30) -> None:
    """Wait for the server to hold this draft (sent by a closing tab, so not awaited)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assignment.refresh_from_db()
        if assignment.draft.get("notes") == notes:
            return
        time.sleep(0.05)
    raise AssertionError(f"the closing tab's draft never reached the server: {notes!r}")


def test_a_draft_survives_a_reload_a_lost_connection_and_a_closed_tab(page, live_server, setup):
    user, study, rater = setup
    consent_all(study)
    assignment = first_case(rater)
    sign_in(page, live_server, user.username, PASSWORD)
    open_case(page, live_server, assignment)
    page.locator("#A-depth [data-add-item]").click()
    page.keyboard.type("saved by the server")
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    page.reload()
    expect(page.locator("#A-depth [data-item-text]")).to_have_value("saved by the server")

    # The connection drops: the answers stay in the page and in the browser, saved on return.
    page.context.set_offline(True)
    page.locator("#notes").fill("written offline")
    expect(page.locator("#offline-alert")).to_be_visible()
    page.context.set_offline(False)
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    assignment.refresh_from_db()
    assert assignment.draft["notes"] == "written offline"

    # The tab is closed straight after typing: the page sends what it has as it goes.
    context = page.context
    page.locator("#notes").fill("typed just before closing")
    page.close()
    # The closing tab's save lands on the server (on a loaded machine after the next tab
    # has opened the case, whose copy would then be one version behind: a false conflict).
    _draft_notes_reach(assignment, "typed just before closing")
    page = context.new_page()
    open_case(page, live_server, assignment)
    expect(page.locator("#notes")).to_have_value("typed just before closing")

    # No connection at all, then the tab is closed: nothing reaches the server, and the copy
    # kept in this browser is restored, and saved, when the case is opened again.
    context.route("**/draft/", lambda route: route.abort())
    page.locator("#notes").fill("only in this browser")
    expect(page.locator("#save-status")).to_contain_text("Not saved")
    page.evaluate("() => { window.fetch = () => Promise.reject(new TypeError('offline')); }")
    page.close()
    context.unroute("**/draft/")
    assignment.refresh_from_db()
    assert assignment.draft["notes"] == "typed just before closing"
    again = context.new_page()
    open_case(again, live_server, assignment)
    expect(again.locator("#restored-alert")).to_contain_text("had not been saved")
    expect(again.locator("#notes")).to_have_value("only in this browser")
    expect(again.locator("#save-status")).to_contain_text("Draft saved")
    assignment.refresh_from_db()
    assert assignment.draft["notes"] == "only in this browser"


def test_an_expired_session_keeps_the_draft_until_signed_in_again(page, live_server, setup):
    user, study, rater = setup
    consent_all(study)
    assignment = first_case(rater)
    sign_in(page, live_server, user.username, PASSWORD)
    open_case(page, live_server, assignment)
    page.context.clear_cookies(name="sessionid")
    page.locator("#A-depth [data-add-item]").click()
    page.keyboard.type("typed after the session expired")
    alert = page.locator("#session-alert")
    expect(alert).to_contain_text("session has expired")
    login = alert.get_by_role("link", name="Sign in again")
    other = page.context.new_page()
    other.goto(live_server.url + login.get_attribute("href"))
    other.fill("#id_username", user.username)
    other.fill("#id_password", PASSWORD)
    other.click("button[type=submit]")
    expect(other.get_by_role("heading", name="You are signed in again")).to_be_visible()
    other.close()
    page.bring_to_front()
    page.evaluate("window.dispatchEvent(new Event('focus'))")
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    expect(alert).to_have_count(0)
    assignment.refresh_from_db()
    assert assignment.draft["responses"]["A"]["depth"]["items"][0]["text"] == (
        "typed after the session expired"
    )


def test_a_double_submit_records_one_rating(page, live_server, setup):
    user, study, rater = setup
    consent_all(study)
    assignment = first_case(rater)
    sign_in(page, live_server, user.username, PASSWORD)
    open_case(page, live_server, assignment)
    page.locator("#A-evidence-0").check()
    page.get_by_role("radio", name="Low").check()
    posts = []
    page.on(
        "request",
        lambda r: (
            posts.append(r.post_data)
            if r.method == "POST" and r.url.endswith(f"/rate/{assignment.uuid}/")
            else None
        ),
    )
    page.get_by_role("button", name="Submit and next").dblclick()
    expect(page.locator("#progress-text")).to_have_text("1 of 3 done")
    assert len(posts) == 1
    assignment.refresh_from_db()
    version = assignment.version
    assert Rating.objects.filter(assignment=assignment).count() == 2
    # The same request retried (a flaky network, a resend): the same submission, recorded once.
    form = {k: v[0] for k, v in parse_qs(posts[0]).items()}
    retry = page.request.post(
        f"{live_server.url}/rate/{assignment.uuid}/", form=form, max_redirects=0
    )
    assert retry.status == 302
    assignment.refresh_from_db()
    assert assignment.version == version
    assert Rating.objects.filter(assignment=assignment).count() == 2
    assert json.loads(form["payload"])["confidence"] == "low"


def test_a_stale_second_tab_is_refused_without_losing_its_answers(page, live_server, setup):
    user, study, rater = setup
    consent_all(study)
    assignment = first_case(rater)
    sign_in(page, live_server, user.username, PASSWORD)
    open_case(page, live_server, assignment)
    second = page.context.new_page()
    open_case(second, live_server, assignment)
    expect(page.locator("#tab-alert")).to_contain_text("also open in another tab")

    second.locator("#A-depth [data-add-item]").click()
    second.keyboard.type("from the second tab")
    expect(second.locator("#save-status")).to_contain_text("Draft saved")

    page.bring_to_front()
    page.locator("#A-depth [data-add-item]").click()
    page.keyboard.type("from the first tab")
    stale = page.locator("#stale-alert")
    expect(stale).to_contain_text("saved from another tab")
    expect(page.locator("#A-depth [data-item-text]")).to_have_value("from the first tab")
    assignment.refresh_from_db()
    assert assignment.draft["responses"]["A"]["depth"]["items"][0]["text"] == "from the second tab"
    # A submit from the stale tab is held back too, with the same explanation.
    page.get_by_role("radio", name="High").check()
    page.get_by_role("button", name="Submit and next").click()
    expect(stale).to_be_visible()
    assert not Rating.objects.filter(assignment=assignment).exists()

    stale.get_by_role("button", name="Keep the answers on this page").click()
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    assignment.refresh_from_db()
    assert assignment.draft["responses"]["A"]["depth"]["items"][0]["text"] == "from the first tab"


def test_the_self_check_lists_the_raters_counted_items(page, live_server, setup, screenshot):
    user, study, rater = setup
    consent_all(study)
    first, second, third = rater.assignments.order_by("position")
    payload = full_marks_payload()
    payload["responses"]["A"]["depth"]["items"][0] = {"text": "Misuse risk", "half": False}
    payload["responses"]["B"]["alternatives"]["flagged"] = True
    payload["responses"]["B"]["alternatives"]["flag_note"] = "Is not-X an alternative?"
    services.rating_submit(assignment=first, payload=payload, expected_version=0)
    other = full_marks_payload(confidence="medium")
    other["responses"]["B"]["depth"]["items"][0] = {"text": "misuse risk", "half": True}
    services.rating_submit(assignment=second, payload=other, expected_version=0)
    services.rating_submit(assignment=third, payload=full_marks_payload(), expected_version=0)

    sign_in(page, live_server, user.username, PASSWORD)
    page.get_by_role("link", name=study.name).click()
    page.get_by_role("link", name="Self-check").click()
    expect(page.get_by_role("heading", name="Self-check")).to_be_visible()
    depth = page.locator('table[data-counted="depth"]')
    # Three cases: the lists are open; a longer study folds them (test_views_steps).
    expect(depth).to_be_visible()
    expect(depth).to_contain_text("Misuse risk")
    expect(depth.locator("tbody tr")).to_have_count(3)
    expect(page.locator('[data-finding="weight"]')).to_contain_text("half weight")
    expect(page.get_by_text("Is not-X an alternative?")).to_be_visible()
    assert_accessible(page, name="self-check")
    screenshot(page, "self-check")


def test_the_self_check_of_25_cases_stays_a_few_screens_long(page, live_server, screenshot):
    # 25 cases, each with a large gap between its responses (a finding per case) and six
    # factors, three alternatives and three recommendations listed per response.
    user = UserFactory(username="long-rater")
    study = make_study(slug="long-study", cases=25, raters=[user])
    consent_all(study)
    rater = Membership.objects.get(study=study, user=user)
    for assignment in rater.assignments.order_by("position"):
        payload = full_marks_payload()
        payload["responses"]["B"] = zero_payload()["responses"]["B"]
        services.rating_submit(assignment=assignment, payload=payload, expected_version=0)

    sign_in(page, live_server, user.username, PASSWORD)
    page.goto(f"{live_server.url}/s/{study.slug}/self-check/")
    expect(page.locator("[data-finding]")).to_have_count(25)
    expect(page.locator("#scores-table tbody tr")).to_have_count(50)
    # Each finding is one line with its Revise link beside it, and the counted items are
    # folded: about three screens at 1366 px, where unfolded they made some 14,000 px.
    finding = page.locator("[data-finding]").first.bounding_box()
    assert finding and finding["height"] < 50
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < 4 * 1000, height
    depth = page.locator('table[data-counted="depth"]')
    expect(depth).to_be_hidden()
    page.get_by_text("Depth of Analysis: what you counted").click()
    expect(depth.locator("tbody tr")).to_have_count(25)
    screenshot(page, "self-check-25-cases")


def rater_pages(live_server, study, rater, item, answered):
    base = f"{live_server.url}/s/{study.slug}"
    return {
        "training-answered": f"{base}/training/{answered.uuid}/",
        "study": f"{base}/cases/",
        "rating": f"{live_server.url}/rate/{first_case(rater).uuid}/",
        "practice": f"{base}/practice/",
        "training": f"{base}/training/{item.uuid}/",
        "self-check": f"{base}/self-check/",
        "feedback": f"{base}/feedback/",
        "withdraw": f"{base}/withdraw/",
        "consent": f"{base}/start/",
    }


@pytest.mark.parametrize("width", [1366, 375])
def test_rater_pages_are_accessible_and_fit_a_phone(browser, live_server, setup, screenshot, width):
    user, study, rater = setup
    consent_all(study)
    item = make_item(study, key=full_marks_payload())
    answered = make_item(study, key=full_marks_payload(), title="Answered example")
    training_answer_submit(rater=rater, item=answered, payload=zero_payload())
    case = first_case(rater)
    response = case.test_case.labels.get(label="A").response
    response.text = LONG_TEXT
    response.save()
    services.rating_submit(
        assignment=rater.assignments.order_by("position").last(),
        payload=full_marks_payload(),
        expected_version=0,
    )
    context = browser.new_context(
        viewport={"width": width, "height": 812 if width < 500 else 900}, is_mobile=width < 500
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    sign_in(page, live_server, user.username, PASSWORD)
    for name, url in rater_pages(live_server, study, rater, item, answered).items():
        page.goto(url)
        page.wait_for_load_state("load")
        assert_accessible(page, name=f"{name} at {width}px")
        if width < 500:
            assert_fits(page, width)
        screenshot(page, f"rater-{name}-{'phone' if width < 500 else 'desktop'}")
        if name == "rating":
            page.locator("#A-depth [data-add-item]").click()
            page.keyboard.type("competitive pressure")
            assert_accessible(page, name=f"{name} with an item at {width}px")
            screenshot(page, "rating-desktop-long" if width > 500 else "rating-phone-long")
    context.close()


def test_a_coordinator_writes_a_training_example_with_its_key(page, live_server, screenshot):
    lead = UserFactory(username="day-lead")
    study = make_study(slug="coord-study", lead=lead, cases=1, raters=[UserFactory()])
    sign_in(page, live_server, lead.username, PASSWORD)
    page.get_by_role("link", name="Rater onboarding").click()
    expect(page.get_by_role("heading", name="Rater onboarding")).to_be_visible()
    assert_accessible(page, name="rater onboarding")
    page.get_by_role("link", name="Add a training example").click()
    page.get_by_label("Title").fill("Staged release")
    page.get_by_label("Prompt").fill("Should the lab release the weights?")
    page.get_by_label("Response A").fill("Release in stages, with monitoring.")
    page.get_by_label("Response B").fill("Delay for a year.")
    page.get_by_label("Explanation").fill("Monitoring counts as a **separate** factor.")
    page.get_by_role("button", name="Save and enter the answer key").click()
    expect(page.get_by_role("heading", name="Answer key: Staged release")).to_be_visible()
    page.wait_for_load_state("load")  # the page's scripts handle the click below
    page.locator("#A-depth [data-add-item]").click()
    page.keyboard.type("staged release")
    page.keyboard.press("Enter")
    page.keyboard.type("monitoring")
    page.locator("#A-evidence-0").check()
    assert_accessible(page, name="answer key")
    page.get_by_role("button", name="Save the answer key").click()
    expect(page.get_by_text("Answer key of “Staged release” saved.")).to_be_visible()
    screenshot(page, "coordinator-onboarding")
    item = study.training_items.get()
    assert item.key["responses"]["A"]["depth"]["points"] == 2
    assert item.key["responses"]["A"]["evidence"]["points"] == 1
