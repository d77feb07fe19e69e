"""A rater meets a content warning, skips the case by keyboard on a phone-sized screen, and
the case goes to another rater, so the design's k per case still holds."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotation.models import Assignment
from annotation.services import assignment as design
from studies.models import Membership, StratumSetting, Study
from studies.models import TestCase as Case

from ..annotation.support import consent_all
from ..factories import PASSWORD, UserFactory, make_study
from .accessibility import assert_accessible, assert_fits
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def warned_study():
    study = make_study(slug="warned", cases=3, raters=[])
    Study.objects.filter(pk=study.pk).update(raters_per_item=2)
    users = [UserFactory(username=f"skipper-{n}") for n in range(3)]
    for user in users:
        Membership.objects.create(
            study=study,
            user=user,
            role=Membership.Role.RATER,
            pseudonym=f"R-0{users.index(user) + 1}",
        )
    study.refresh_from_db()
    design.study_assign(study=study, actor=None)
    consent_all(study)
    Case.objects.filter(study=study).update(stratum="harm")
    StratumSetting.objects.create(
        study=study, stratum="harm", content_warning="These cases discuss self-harm."
    )
    return study, users[0]


def test_a_rater_sees_the_warning_skips_and_the_case_goes_to_another_rater(
    browser, live_server, warned_study, screenshot
):
    study, user = warned_study
    rater = study.memberships.get(user=user)
    first = rater.assignments.select_related("test_case").order_by("position").first()
    case = first.test_case
    before = set(case.assignments.values_list("rater_id", flat=True))
    context = browser.new_context(viewport={"width": 375, "height": 812}, is_mobile=True)
    page = context.new_page()
    page.set_default_timeout(10_000)
    sign_in(page, live_server, user.username, PASSWORD)
    page.goto(live_server.url + reverse("annotation:rate", args=[first.uuid]))
    warning = page.locator("#content-warning")
    expect(warning).to_contain_text("These cases discuss self-harm.")
    # Nothing of the case before the rater chooses.
    expect(page.locator("#rating-form")).to_have_count(0)
    expect(page.locator("#prompt")).to_have_count(0)
    assert case.prompt not in page.content()
    assert_fits(page)
    assert_accessible(page, name="content warning")
    screenshot(page, "content-warning-375")

    # By keyboard: a reason, then "Skip this case".
    page.locator("#skip-reason-distressing").focus()
    page.keyboard.press("Space")
    page.locator("#skip-note").fill("Not today.")
    page.locator("#skip-submit").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: str(first.uuid) not in url)
    expect(page.locator(".alert-success")).to_contain_text("skipped")
    expect(page.locator("#progress-text")).to_contain_text("(1 skipped)")

    first.refresh_from_db()
    assert first.status == Assignment.Status.SKIPPED and first.skip_reason == "distressing"
    now = set(case.assignments.exclude(status="skipped").values_list("rater_id", flat=True))
    (newcomer,) = now - before
    assert newcomer != rater.pk and len(now) == 2  # k = 2 still holds

    # The skipped case's own page says so, and offers to undo while the study is open.
    page.goto(live_server.url + reverse("annotation:rate", args=[first.uuid]))
    expect(page.locator("#skipped-case")).to_contain_text("You skipped this case")
    expect(page.locator("#undo-skip")).to_be_visible()
    assert_fits(page)
    context.close()
