"""An administrator erases a rater on request (reason, confirmation): the statistics, the
report and every export are the same before and after, and the rater cannot sign in; at
1366 and 375 pixels, with no policy violation and no serious accessibility problem."""

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from studies.models import IdentityErasure, StudyEvent
from tests.payloads import close_and_unblind, study_with_systems, submit_all
from tests.studies.erasure_support import differences, explain, study_outputs

from ..factories import PASSWORD, UserFactory
from .accessibility import assert_accessible, assert_fits
from .conftest import open_phone_menu, sign_in
from .test_content_security_policy import watched as watched  # shared fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1366, 375])
def test_an_administrator_erases_a_rater_and_no_number_changes(
    watched, live_server, screenshot, settings, width
):
    settings.AGREEMENT_BOOTSTRAP_RESAMPLES = 200
    rita = UserFactory(username=f"rita-{width}", email=f"rita-{width}@example.org")
    study = study_with_systems(slug=f"erasure-{width}", cases=4, consented=True,
                               raters=[rita, UserFactory()])  # fmt: skip
    submit_all(study)
    close_and_unblind(study)
    admin = UserFactory(username=f"admin-{width}", is_staff=True, is_superuser=True)
    since = timezone.now()
    before = study_outputs(study, since=since)

    tab = watched()
    page = tab.page
    page.set_viewport_size({"width": width, "height": 800})
    sign_in(page, live_server, admin.username, PASSWORD)
    if width < 768:  # the navigation folds into the menu button on phones
        open_phone_menu(page)
    page.get_by_role("link", name="Identity erasure").click()
    expect(page.get_by_role("heading", name="Identity erasure")).to_be_visible()
    page.get_by_label("Account").fill(rita.email)
    # Without a reason nothing happens but a message.
    page.get_by_role("button", name="Check what will be erased").click()
    expect(page.get_by_text("This field is required.")).to_be_visible()
    page.get_by_label("Reason").fill("Request by e-mail of 1 December")
    page.get_by_role("button", name="Check what will be erased").click()
    expect(page.get_by_role("heading", name="Erase this identity?")).to_be_visible()
    expect(page.get_by_role("cell", name="R-01", exact=True)).to_be_visible()
    assert not IdentityErasure.objects.exists()
    screenshot(page, f"erasure-confirm-{width}")
    assert_accessible(page, name="erasure confirmation")
    assert_fits(page, width)
    page.get_by_role("button", name="Erase the identity").click()
    expect(page.get_by_role("status").filter(has_text="Erased")).to_be_visible()
    record = IdentityErasure.objects.get()
    expect(page.get_by_role("cell", name=record.user.username)).to_be_visible()
    screenshot(page, f"erasure-done-{width}")
    assert_accessible(page, name="identity erasure")
    assert_fits(page, width)
    tab.assert_clean("identity erasure")

    after = study_outputs(study, since=since)
    assert differences(before, after) == [], explain(before, after)
    assert StudyEvent.objects.filter(
        kind=StudyEvent.Kind.IDENTITY_ERASED, membership__pseudonym="R-01"
    ).exists()

    # The rater can no longer sign in, under either name.
    rater_tab = watched()
    for name in (rita.username, record.user.username):
        rater_tab.page.goto(f"{live_server.url}/accounts/login/")
        rater_tab.page.fill("#id_username", name)
        rater_tab.page.fill("#id_password", PASSWORD)
        rater_tab.page.click("button[type=submit]")
        expect(rater_tab.page.locator("#id_username")).to_be_visible()
        assert "/accounts/login/" in rater_tab.page.url
