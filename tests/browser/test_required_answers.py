"""Issue 39 on the rating page, in headless Chromium: the required answers not yet given are
marked as the rater goes, a total with a part unanswered reads "—", and Submit with one
missing moves to it, names the rest and keeps the draft; nothing is recorded."""

import pytest
from playwright.sync_api import expect

from annotation.models import Rating
from studies.models import Membership, Study
from studies.services import rubric_replace_with_preset

from ..annotation.support import consent_all
from ..factories import PASSWORD, UserFactory, make_study
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_missing_answers_are_marked_live_and_submit_goes_to_the_first(page, live_server):
    user = UserFactory(username="likert-rater")
    study = make_study(slug="likert-day", cases=2, raters=[user], status=Study.Status.DRAFT)
    study = rubric_replace_with_preset(study=study, actor=study.lead, preset="likert")
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    consent_all(study)
    assignment = Membership.objects.get(study=study, user=user).assignments.order_by("position")[0]
    sign_in(page, live_server, user.username, PASSWORD)
    page.goto(f"{live_server.url}/rate/{assignment.uuid}/")
    missing = page.locator("[data-missing]:visible")
    expect(missing).to_have_count(6)  # three scales, two responses
    expect(page.locator("#missing-answers")).to_have_text("6 required answers missing")
    expect(page.locator('[data-label="A"] [data-total]')).to_have_text("—")
    for key in ("helpfulness", "clarity"):
        page.locator(f"#A-{key}-3").check()
    expect(missing).to_have_count(4)
    expect(page.locator("#A-accuracy [data-missing]")).to_be_visible()
    page.locator("#A-accuracy-4").check()
    expect(page.locator('[data-label="A"] [data-total]')).to_have_text("13")  # 4 + 4 + 5
    expect(page.locator("#missing-answers")).to_have_text("3 required answers missing")
    page.get_by_role("radio", name="High").check()
    page.get_by_role("button", name="Submit and next").click()
    # Not sent: the first missing answer has the focus and the message names them all.
    expect(page.locator("#B-helpfulness")).to_be_focused()
    expect(page.locator("#B-helpfulness .field-error")).to_contain_text(
        "Response B: Helpfulness; Response B: Clarity; Response B: Accuracy"
    )
    expect(page.locator("#save-status")).to_contain_text("3 required answers missing")
    assert not Rating.objects.filter(assignment=assignment).exists()
    page.locator("#save-draft").click()
    expect(page.locator("#save-status")).to_contain_text("Draft saved")
    assignment.refresh_from_db()
    assert assignment.draft["responses"]["A"]["accuracy"]["choice"] == 5
