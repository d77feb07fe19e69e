"""Headless Chromium (Debian's package) driven by Playwright against the live server."""

import contextlib
import os
import shutil
import time
from pathlib import Path

import pytest
from django.db import connection
from playwright.sync_api import Error as PlaywrightError

# Playwright's sync API runs an event loop in this thread; the ORM calls the tests make
# between browser steps are still synchronous.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"

pytestmark = pytest.mark.browser


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"Chromium not found at {CHROMIUM}; `.ci/run` installs it (apt-get install chromium)."
        )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield browser
        browser.close()


# After a test, its pages may still be saving (a draft saved as the page closes): the
# database is emptied for the next test only once every connection to it is idle, or a
# request still writing would meet the emptying halfway (PostgreSQL stops one of the two).
QUIET_CHECKS = 3  # in a row, this many idle checks
QUIET_POLL = 0.05  # seconds between checks
QUIET_LIMIT = 15  # seconds at most


@pytest.fixture(autouse=True)
def _quiet_before_the_database_is_emptied(browser, live_server):
    yield
    for context in list(browser.contexts):
        with contextlib.suppress(PlaywrightError):  # closed by its test already
            context.close()
    if connection.vendor != "postgresql":
        return
    quiet, deadline = 0, time.monotonic() + QUIET_LIMIT
    while quiet < QUIET_CHECKS and time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND state NOT IN ('idle')"
            )
            busy = cursor.fetchone()[0]
        quiet = quiet + 1 if not busy else 0
        time.sleep(QUIET_POLL)


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


@pytest.fixture
def screenshot():
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(page, name):
        # Chromium sometimes cannot capture a page that is still settling after a form
        # post ("Unable to capture screenshot"): let it finish loading and try once more.
        page.wait_for_load_state("load")
        try:
            page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=False)
        except PlaywrightError:
            page.wait_for_timeout(500)
            page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=False)

    return take


def sign_in(page, live_server, username, password):
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    # Wait until signed in, so the next navigation cannot race the login's redirect.
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


def open_phone_menu(page):
    """Unfold the navigation behind the menu button and wait until it has finished opening,
    so a click on an entry cannot land while the menu is still sliding open."""
    page.get_by_role("button", name="Menu").click()
    page.wait_for_selector("#main-nav.show")
