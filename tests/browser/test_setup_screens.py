"""The set-up pages changed for issue 11, at desktop and phone width: the worksheet check
that keeps its file, the item form, the onboarding page and the qualification result with
its rule. Each is checked for fit and accessibility and saved as a screenshot."""

import pytest
from playwright.sync_api import expect

from annotation.services import training
from studies.models import Membership
from tests.payloads import full_marks_payload, zero_payload

from ..annotation.support import consent_all, make_item
from ..factories import PASSWORD, UserFactory, make_study
from .accessibility import assert_accessible, assert_fits
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HEADER = "TC-ID,Response,Depth,Evidence,Alternatives,Structure,Actionability,Total,Confidence,Notes"


@pytest.fixture
def study():
    lead = UserFactory(username="screens-lead")
    rater = UserFactory(username="screens-rater")
    study = make_study(slug="screens", lead=lead, cases=2, raters=[rater])
    consent_all(study)
    membership = Membership.objects.get(study=study, user=rater)
    item = make_item(study, "qualification", full_marks_payload(), title="Quiz item")
    training.onboarding_settings_save(study=study, max_attempts=2, tolerance=1, pass_percent=80)
    attempt = training.qualification_attempt_start(rater=membership)
    training.qualification_answer_submit(
        rater=membership, attempt=attempt, item=item, payload=zero_payload()
    )
    return study


@pytest.mark.parametrize("width", [1366, 375])
def test_changed_setup_pages_fit_and_are_accessible(
    browser, live_server, study, tmp_path, screenshot, width
):
    tag = "phone" if width < 500 else "desktop"
    context = browser.new_context(
        viewport={"width": width, "height": 812 if width < 500 else 900}, is_mobile=width < 500
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    sign_in(page, live_server, "screens-lead", PASSWORD)
    base = f"{live_server.url}/s/{study.slug}"

    # Results: "Check only" keeps the file and offers to import it now.
    sheet = tmp_path / "filled.csv"
    sheet.write_text(
        "\n".join([HEADER, "TC-001,A,4,2,4,3,2,15,High,ok", "TC-001,B,2,1,2,2,0,7,High,"]),
        encoding="utf-8",
    )
    page.goto(f"{base}/results/")
    page.select_option("#id_rater", "R-01")
    page.set_input_files("#id_file", str(sheet))
    page.get_by_role("button", name="Check only").click()
    expect(page.get_by_role("button", name="Import this file now for R-01")).to_be_visible()
    page.locator("#import-check").scroll_into_view_if_needed()
    assert_accessible(page, name=f"worksheet check at {width}px")
    if width < 500:
        assert_fits(page, width)
    screenshot(page, f"issue11-results-check-{tag}")

    pages = {
        "item-qualification": f"{base}/onboarding/new/?kind=qualification",
        "onboarding": f"{base}/onboarding/",
    }
    for name, url in pages.items():
        page.goto(url)
        if name == "onboarding":
            page.locator("#pass-rule").scroll_into_view_if_needed()
        assert_accessible(page, name=f"{name} at {width}px")
        if width < 500:
            assert_fits(page, width)
        screenshot(page, f"issue11-{name}-{tag}")
    expect(page.locator("#pass-rule")).to_contain_text("Each dimension is scored on its own")
    context.close()

    # The rater's failed attempt: each dimension's share, and the rule.
    context = browser.new_context(
        viewport={"width": width, "height": 812 if width < 500 else 900}, is_mobile=width < 500
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    sign_in(page, live_server, "screens-rater", PASSWORD)
    page.goto(f"{base}/qualification/")
    expect(page.locator("#dimension-results")).to_contain_text("Depth of Analysis: 0 of 2")
    page.locator("#pass-rule summary").click()
    expect(page.locator("#pass-rule")).to_contain_text("an attempt left entirely blank")
    assert_accessible(page, name=f"qualification at {width}px")
    if width < 500:
        assert_fits(page, width)
    screenshot(page, f"issue11-qualification-{tag}")
    context.close()
