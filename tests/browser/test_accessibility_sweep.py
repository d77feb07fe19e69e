"""axe over the pages each role visits in a running study, at a laptop's 1366 px and a
phone's 375 px: any violation, of any impact, fails (and a page that forces the phone to
scroll sideways). The coordinator's set-up and results pages, the Close page, the
adjudicator's queue and screen, a rater's cases, rating screen and self-check."""

import pytest

from annotation.models import Assignment
from studies.models import Membership

from ..annotation.adjudication_support import adjudication_world
from ..factories import PASSWORD
from .accessibility import assert_accessible, assert_fits
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

COORDINATOR_PAGES = [
    "/s/{slug}/", "/s/{slug}/settings/", "/s/{slug}/test-cases/", "/s/{slug}/rubric/",
    "/s/{slug}/quality-items/", "/s/{slug}/adjudication-rules/", "/s/{slug}/onboarding/",
    "/s/{slug}/welfare/", "/s/{slug}/profile-questions/", "/s/{slug}/raters/",
    "/s/{slug}/participant-links/", "/s/{slug}/results/", "/s/{slug}/agreement/",
    "/s/{slug}/quality/", "/s/{slug}/report/", "/s/{slug}/status/close/",
]  # fmt: skip


def _visit_all(browser, live_server, width, username, paths):
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    sign_in(page, live_server, username, PASSWORD)
    for path in paths:
        response = page.goto(f"{live_server.url}{path}")
        assert response and response.status == 200, path
        page.wait_for_load_state("load")
        assert_accessible(page, name=f"{path} at {width} px")
        if width <= 375:
            assert_fits(page, width)
    context.close()


@pytest.mark.parametrize("width", [1366, 375])
def test_every_page_a_role_visits_has_no_axe_violation(browser, live_server, width):
    world = adjudication_world(slug=f"sweep-{width}")
    slug = world.study.slug
    paths = [p.format(slug=slug) for p in COORDINATOR_PAGES]
    _visit_all(browser, live_server, width, world.study.lead.username, paths)
    _visit_all(
        browser, live_server, width, world.adjudicator.user.username,
        [f"/s/{slug}/adjudication/", f"/s/{slug}/adjudication/{world.adjudication.uuid}/"],
    )  # fmt: skip
    rater = Membership.objects.get(study=world.study, user=world.raters[0])
    submitted = Assignment.objects.filter(rater=rater, status="submitted").first()
    todo = Assignment.objects.filter(rater=rater, status="todo").first()
    _visit_all(
        browser, live_server, width, world.raters[0].username,
        [f"/s/{slug}/cases/", f"/rate/{todo.uuid}/", f"/rate/{submitted.uuid}/",
         f"/s/{slug}/self-check/"],
    )  # fmt: skip
