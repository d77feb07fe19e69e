"""The main pages run under the Content-Security-Policy without a single violation: the
rating screen (live totals, autosave), the agreement page (its refresh), the rubric builder
and preview, the onboarding page's delete confirmation, the invitation link's Copy button
and the admin."""

import pytest
from playwright.sync_api import expect

from annotation.models import TrainingItem

from ..annotation.support import make_item
from ..factories import PASSWORD, UserFactory, make_study
from ..payloads import submit_all
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Runs before any page script (Playwright injects it outside the page's policy).
LISTEN = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__violations.push(`${event.violatedDirective} ${event.blockedURI} ${event.sample}`);
});
"""


class Watched:
    """A browser tab that records CSP violations, policy warnings and script errors."""

    def __init__(self, browser, **options):
        self.context = browser.new_context(viewport={"width": 1366, "height": 900}, **options)
        self.context.add_init_script(LISTEN)
        self.page = self.context.new_page()
        self.page.set_default_timeout(10_000)
        self.console = []
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda error: self.console.append(f"page error: {error}"))

    def _console(self, message):
        # Policy messages at any level; other errors except a missing favicon and the like.
        text = message.text
        policy = "Content Security Policy" in text or "Permissions-Policy" in text
        if policy or (message.type == "error" and "Failed to load resource" not in text):
            self.console.append(text)

    def problems(self) -> list[str]:
        return self.console + self.page.evaluate("window.__violations || []")

    def assert_clean(self, where):
        assert self.problems() == [], where


@pytest.fixture
def watched(browser):
    tabs = []

    def open_tab(**options):
        tab = Watched(browser, **options)
        tabs.append(tab)
        return tab

    yield open_tab
    for tab in tabs:
        tab.context.close()


@pytest.fixture
def people():
    lead = UserFactory(username="csp-lead")
    raters = [UserFactory(username=f"csp-rater-{n}") for n in (1, 2)]
    study = make_study(lead=lead, slug="csp", cases=3, raters=raters, consented=True)
    # Two cases rated by both, so the agreement page has results; one left to rate.
    submit_all(study, limit=2)
    return lead, raters[0], study


def test_the_policy_is_enforced_and_the_watch_sees_it(watched, live_server):
    tab = watched()
    tab.page.goto(f"{live_server.url}/accounts/login/")
    tab.assert_clean("sign-in page")
    ran = tab.page.evaluate(
        """() => { const s = document.createElement("script");
                   s.textContent = "window.__ran = true"; document.body.append(s);
                   return window.__ran === true; }"""
    )
    assert ran is False
    expect(tab.page.locator("body")).to_be_visible()
    assert any("script-src" in problem for problem in tab.problems())


def test_the_rating_screen_autosaves_and_totals_without_violations(watched, live_server, people):
    _, rater, study = people
    tab = watched()
    page = tab.page
    sign_in(page, live_server, rater.username, PASSWORD)
    page.goto(f"{live_server.url}/s/{study.slug}/next/")
    card = page.locator('.response-card[data-label="A"]')
    card.locator("#A-depth [data-add-item]").click()
    page.keyboard.type("competitive pressure")
    page.keyboard.press("Enter")
    page.keyboard.type("misuse risk")
    card.locator("#A-evidence-0").check()
    expect(card.locator("#A-depth [data-count]")).to_have_text("2")
    expect(card.locator("[data-total]")).to_have_text("3")  # 2 + 1
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    page.keyboard.press("Escape")
    page.keyboard.press("?")  # the shortcuts panel (Bootstrap's offcanvas)
    tab.assert_clean("rating screen")


def test_coordinator_pages_run_without_violations(watched, live_server, people):
    lead, _, study = people
    tab = watched()
    page = tab.page
    sign_in(page, live_server, lead.username, PASSWORD)
    # The agreement page, through one of its refreshes.
    with page.expect_response(lambda response: "/agreement/status/" in response.url):
        page.goto(f"{live_server.url}/s/{study.slug}/agreement/")
    expect(page.locator("#agreement-results")).to_be_visible()
    tab.assert_clean("agreement page")
    for path in ("raters/", "results/", "quality/", ""):
        page.goto(f"{live_server.url}/s/{study.slug}/{path}")
        tab.assert_clean(path or "overview")

    # The invitation link's Copy button (a script file, no longer inline).
    page.goto(f"{live_server.url}/s/{study.slug}/raters/")
    page.get_by_role("button", name="Create link").click()
    page.get_by_role("button", name="Copy").click()
    expect(page.get_by_role("button", name="Copied")).to_be_visible()
    tab.assert_clean("invitation link")


def test_rubric_builder_preview_and_onboarding_run_without_violations(watched, live_server):
    lead = UserFactory(username="csp-builder")
    study = make_study(lead=lead, slug="csp-draft", cases=1, status="draft")
    make_item(study, title="Keep me")
    make_item(study, title="Delete me")
    tab = watched()
    page = tab.page
    sign_in(page, live_server, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/s/{study.slug}/rubric/")
    tab.assert_clean("rubric builder")
    page.get_by_role("link", name="Preview as raters see it").click()
    card = page.locator('.response-card[data-label="A"]')
    card.locator("#A-evidence-0").check()
    expect(card.locator("[data-total]")).to_have_text("1")
    tab.assert_clean("rubric preview")

    # Deleting asks first (a data-confirm form, no inline handler): no, then yes.
    page.goto(f"{live_server.url}/s/{study.slug}/onboarding/")
    delete = page.get_by_role("button", name="Delete Delete me")
    page.once("dialog", lambda dialog: dialog.dismiss())
    delete.click()
    expect(delete).to_be_visible()
    assert TrainingItem.objects.filter(title="Delete me").exists()
    page.once("dialog", lambda dialog: dialog.accept())
    delete.click()
    expect(page.get_by_text("“Delete me” deleted.")).to_be_visible()
    assert list(TrainingItem.objects.values_list("title", flat=True)) == ["Keep me"]
    tab.assert_clean("onboarding")


def test_the_admin_runs_without_violations(watched, live_server):
    UserFactory(username="csp-admin", is_staff=True, is_superuser=True)
    tab = watched()
    page = tab.page
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "csp-admin")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page.locator("#site-name")).to_be_visible()
    page.goto(f"{live_server.url}/admin/studies/study/")
    page.goto(f"{live_server.url}/admin/auth/user/add/")
    tab.assert_clean("admin")
