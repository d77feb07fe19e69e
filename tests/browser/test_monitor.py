"""Monitored collection on the report page: "not yet decided", then "decided" after enough
one-sided ratings, with nothing directional anywhere; the lead stops collection there."""

import pytest
from playwright.sync_api import expect

from studies.models import Study

from ..agreement.test_monitor import monitored_study, rate
from ..factories import PASSWORD
from .accessibility import assert_accessible
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SYSTEMS = ("baseline", "improved")


@pytest.fixture(autouse=True)
def _few_resamples(settings):
    settings.AGREEMENT_BOOTSTRAP_RESAMPLES = 20


def _monitor_section(page, live_server, study) -> str:
    page.goto(f"{live_server.url}/s/{study.slug}/report/")
    return page.locator("#section-monitor").inner_text()


def test_the_monitor_shows_decided_and_never_the_direction(browser, page, live_server):
    one = monitored_study(slug="watch-one")
    other = monitored_study(slug="watch-two")
    sign_in(page, live_server, one.lead.username, PASSWORD)
    rate(one, winner="improved", count=5)
    text = _monitor_section(page, live_server, one)
    expect(page.locator("#monitor-state")).to_contain_text("Not yet decided after 5 non-tied")
    expect(page.locator("#monitor-stop")).to_have_count(0)
    rate(one, winner="improved", start=5, count=15)
    page.reload()
    expect(page.locator("#monitor-state")).to_contain_text("Decided after 20 non-tied")
    decided = page.locator("#section-monitor").inner_text()
    html = page.content()
    for system in SYSTEMS:
        assert system not in html
    assert "%" not in text + decided and "wins" not in decided.lower()
    assert_accessible(page, name="report-monitored")
    # The other system preferred in a second study: the section reads the same, word for word.
    page.context.clear_cookies()
    sign_in(page, live_server, other.lead.username, PASSWORD)
    rate(other, winner="baseline", count=20)
    assert _monitor_section(page, live_server, other) == decided
    # Decided: the lead may stop collection, which closes the study and says so.
    page.get_by_role("button", name="Stop collection and close the study").click()
    expect(page.get_by_text("Collection stopped under the plan")).to_be_visible()
    expect(page.locator("#monitor-stopped")).to_contain_text("at 20 non-tied comparisons")
    assert Study.objects.get(pk=other.pk).is_closed
