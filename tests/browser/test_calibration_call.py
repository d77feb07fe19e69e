"""The calibration call's page at 375 and 1366 pixels, and on paper: no navigation or form
printed, each item on its own page; no serious accessibility problem."""

import pytest

from annotation.services import rating_submit
from studies.models import Membership, Study

from ..factories import PASSWORD, UserFactory, make_study
from ..payloads import payload_for
from .accessibility import assert_accessible, assert_fits
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1366, 375])
def test_the_page_reads_on_a_phone_and_prints_one_item_per_page(
    page, live_server, screenshot, width
):
    lead = UserFactory(username=f"call-lead-{width}")
    raters = [UserFactory(username=f"call-rater-{width}-{n}") for n in range(3)]
    study = make_study(lead=lead, slug=f"call-{width}", cases=3, raters=raters, consented=True,
                       status=Study.Status.PILOT)  # fmt: skip
    for index, rater in enumerate(study.memberships.filter(role=Membership.Role.RATER)):
        for assignment in rater.assignments.all():
            rating_submit(
                assignment=assignment,
                payload=payload_for(index + 2 * assignment.position),
                any_version=True,
            )
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, live_server, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/s/{study.slug}/calibration-call/")
    items = page.locator(".calibration-item")
    assert items.count() >= 2
    screenshot(page, f"calibration-call-{width}")
    assert_accessible(page, name="calibration call")
    assert_fits(page, width)

    page.emulate_media(media="print")
    assert not page.locator("nav.navbar").is_visible()
    assert not page.locator(".nav-tabs").is_visible()
    assert not page.get_by_role("button", name="Record the call").is_visible()
    breaks = items.evaluate_all("(els) => els.map((el) => getComputedStyle(el).breakBefore)")
    assert set(breaks) == {"page"}
