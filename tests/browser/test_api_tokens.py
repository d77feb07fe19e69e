"""The API tokens page: a token is made, shown once, used by a script and revoked, at 1366
and 375 pixels, with no policy violation and no serious accessibility problem."""

import json
import urllib.error
import urllib.request

import pytest
from playwright.sync_api import expect

from studies.models import ApiToken

from ..factories import PASSWORD, UserFactory, make_study
from .accessibility import assert_accessible, assert_fits
from .conftest import open_phone_menu, sign_in
from .test_content_security_policy import watched as watched  # shared fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def api_get(live_server, path, secret):
    url = f"{live_server.url}/api/v1/{path}"  # the test server, over http
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {secret}"})  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - the test server
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.parametrize("width", [1366, 375])
def test_a_token_from_the_page_drives_the_api_until_revoked(
    watched, live_server, screenshot, width
):
    lead = UserFactory(username=f"token-lead-{width}")
    make_study(lead=lead, slug=f"tokens-{width}", cases=1)
    tab = watched()
    page = tab.page
    page.set_viewport_size({"width": width, "height": 800})
    sign_in(page, live_server, lead.username, PASSWORD)
    if width < 768:  # the navigation folds into the menu button on phones
        open_phone_menu(page)
    page.locator("#user-menu").click()
    page.get_by_role("link", name="API tokens").click()
    page.get_by_label("Name").fill("nightly pipeline")
    page.get_by_role("button", name="Create a token").click()
    secret = page.get_by_label("New token").input_value()
    assert secret.startswith("concord_")
    screenshot(page, f"api-tokens-created-{width}")
    assert_accessible(page, name="API tokens")
    assert_fits(page, width)
    status, body = api_get(live_server, f"studies/tokens-{width}/", secret)
    assert (status, body["slug"]) == (200, f"tokens-{width}")

    # Reloading the page does not send the form again: one token, its secret gone.
    page.reload()
    expect(page.get_by_role("heading", name="Your tokens")).to_be_visible()
    assert ApiToken.objects.filter(user=lead).count() == 1
    assert secret not in page.content()
    page.goto(f"{live_server.url}/account/tokens/")
    assert secret not in page.content()
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Revoke nightly pipeline").click()
    expect(page.get_by_text("revoked", exact=False).first).to_be_visible()
    status, body = api_get(live_server, f"studies/tokens-{width}/", secret)
    assert status == 401 and body["error"]["code"] == "authentication_failed"
    tab.assert_clean("API tokens page")
