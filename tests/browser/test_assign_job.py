"""A coordinator presses Assign on a study large enough for a job: progress, then the result."""

import re
import threading

import pytest
from playwright.sync_api import expect

from annotation.models import Assignment
from annotation.services import assignment
from studies.models import Study

from ..factories import PASSWORD, UserFactory, make_study
from .accessibility import assert_accessible
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def held_writes(monkeypatch):
    """Each rater's assignments wait until the test releases them: the page has progress to
    show for as long as the test looks, however fast or slow the machine (no time window)."""
    release = threading.Event()
    real_create = assignment.assignments_create

    def held(**kwargs):
        assert release.wait(timeout=120), "the test never released the writes"
        return real_create(**kwargs)

    monkeypatch.setattr(assignment, "assignments_create", held)
    yield release
    release.set()  # a failed test must not leave the job's thread waiting


def test_assign_as_a_job_shows_its_progress_then_the_result(
    page, live_server, settings, held_writes, jobs_in_threads
):
    # The cut forced down to a small study; the job runs in a thread, as in the default.
    settings.ASSIGN_JOB_FROM = 1
    lead = UserFactory(username="job-lead")
    raters = [UserFactory(username=f"job-rater-{n}") for n in range(3)]
    study = make_study(lead=lead, slug="jobs", cases=6, raters=raters)
    Assignment.objects.filter(test_case__study=study).delete()  # make_study assigns all
    Study.objects.filter(pk=study.pk).update(raters_per_item=2)

    sign_in(page, live_server, lead.username, PASSWORD)
    page.goto(f"{live_server.url}/s/jobs/raters/")
    expect(page.locator("#unassigned")).to_contain_text("R-01, R-02, R-03")
    page.get_by_role("button", name="Assign", exact=True).click()
    expect(page).to_have_url(re.compile(r"/s/jobs/raters/assign/[0-9a-f-]{36}/$"))
    expect(page.locator("#job-progress")).to_be_visible()
    expect(page.locator("#job-label")).to_contain_text("Writing: the cases of 0 of 3 raters")
    assert_accessible(page, name="assign-progress")
    held_writes.set()
    # When it has finished, the raters page with the result, as when assigned at once.
    expect(page.get_by_text("12 cases assigned to 3 raters.")).to_be_visible(timeout=20_000)
    expect(page).to_have_url(f"{live_server.url}/s/jobs/raters/")
    expect(page.locator("#rater-table")).to_contain_text("0 / 4")
    assert Assignment.objects.filter(test_case__study=study).count() == 12
