"""The worksheet check and import as a job: the request only starts it, the page shows its
progress, a failed job keeps nothing, and a file at the row limit is imported by its job."""

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation import worksheet_jobs
from annotation.models import Assignment, Rating
from annotation.worksheets.columns import MAX_ROWS
from jobs.models import Job
from studies.models import Membership
from studies.services import membership_add
from tests.payloads import coordinator_of

from ..factories import UserFactory, make_study
from .support import consent_all
from .test_worksheets import GOOD_A, GOOD_B, HEADER, csv_bytes, snapshot

pytestmark = pytest.mark.django_db


@pytest.fixture
def held_jobs(jobs_in_threads):
    """Jobs are started in a thread after commit, which a test's transaction never does: a
    started job stays running until the test runs it."""


def upload(client, study, data, *, action="import", rater="R-01"):
    return client.post(
        reverse("annotation:worksheet_import", args=[study.slug]),
        {"rater": rater, "action": action, "file": SimpleUploadedFile("sheet.csv", data)},
    )


def the_job(study) -> Job:
    return Job.objects.get(kind=Job.Kind.WORKSHEET_IMPORT, study_id=study.pk)


def test_the_request_starts_the_job_and_its_page_shows_the_progress(client, study, held_jobs):
    client.force_login(study.lead)
    before = snapshot()
    response = upload(client, study, csv_bytes(HEADER, GOOD_A, GOOD_B))
    job = the_job(study)
    job_url = reverse("annotation:worksheet_job", args=[study.slug, job.uuid])
    assert response.status_code == 302 and response.url == job_url
    # Nothing is recorded by the request: the job has not run.
    assert job.state == Job.State.RUNNING and snapshot() == before
    page = client.get(job_url)
    assert page.status_code == 200 and 'id="job-progress"' in page.text
    assert "Importing a worksheet" in page.text
    status_url = reverse("annotation:worksheet_job_status", args=[study.slug, job.uuid])
    assert client.get(status_url).json()["state"] == "running"
    # One import of a study at a time.
    again = upload(client, study, csv_bytes(HEADER, GOOD_A, GOOD_B))
    assert again.status_code == 400 and "A worksheet import of this study is running" in again.text

    worksheet_jobs.worksheet_job_run(job_id=job.pk)
    status = client.get(status_url).json()
    assert status["state"] == "done" and status["result"]["cases"] == 1
    done = client.get(job_url)
    assert done.status_code == 302 and done.url == reverse("annotation:results", args=[study.slug])
    assert "Imported 1 test case for R-01" in client.get(done.url).text
    assert Rating.objects.filter(assignment__rater__pseudonym="R-01").count() == 2


def test_a_job_that_fails_while_writing_keeps_nothing(client, study, held_jobs, monkeypatch):
    client.force_login(study.lead)
    before = snapshot()
    upload(client, study, csv_bytes(HEADER, GOOD_A, GOOD_B))
    job = the_job(study)

    def fail(**kwargs):  # the last write of the import: every rating is written by now
        raise RuntimeError("the worker died")

    monkeypatch.setattr("annotation.services.rating_imports.study_event_record", fail)
    with pytest.raises(RuntimeError):
        worksheet_jobs.worksheet_job_run(job_id=job.pk)
    assert snapshot() == before
    job.refresh_from_db()
    assert job.state == Job.State.FAILED
    page = client.get(reverse("annotation:worksheet_job", args=[study.slug, job.uuid]))
    assert "Nothing was imported." in page.text
    assert "stopped on an error of the server" in page.text


def test_a_job_whose_file_is_no_longer_kept_asks_for_it_again(client, study, held_jobs):
    client.force_login(study.lead)
    upload(client, study, csv_bytes(HEADER, GOOD_A, GOOD_B), action="check")
    job = the_job(study)
    cache.clear()  # the file lapsed (or the cache was emptied) before the job ran
    worksheet_jobs.worksheet_job_run(job_id=job.pk)
    page = client.get(reverse("annotation:worksheet_job", args=[study.slug, job.uuid]))
    assert "no longer kept; choose it again" in page.text
    assert not Rating.objects.exists()


def test_only_the_person_who_checked_is_offered_import_now(client, study):
    client.force_login(study.lead)
    upload(client, study, csv_bytes(HEADER, GOOD_A, GOOD_B), action="check")
    job_url = reverse("annotation:worksheet_job", args=[study.slug, the_job(study).uuid])
    assert "Import this file now for R-01" in client.get(job_url).text
    client.force_login(coordinator_of(study))
    page = client.get(job_url)
    assert "is fine: 1 test case for R-01" in page.text
    assert "Import this file now" not in page.text


# Over 60 s of one core (about 90 s of CPU in the test's process, building the 9,999-case
# study included, besides PostgreSQL's): slow, so a local `-m "not slow"` leaves it out;
# CI runs it.
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_worksheet_one_row_short_of_the_limit_is_imported_by_its_job(client):
    rows = MAX_ROWS - 2  # 19,998 rows of answers and the heading
    study = make_study(slug="worksheet-limit", cases=rows // 2, raters=[UserFactory()])
    consent_all(study)
    offline = membership_add(study=study, user=UserFactory(), role=Membership.Role.RATER)
    lines = [HEADER]
    for case_id in study.test_cases.order_by("pk").values_list("case_id", flat=True):
        lines += [GOOD_A.replace("TC-001", case_id), GOOD_B.replace("TC-001", case_id)]
    assert len(lines) == rows + 1
    client.force_login(study.lead)
    response = upload(client, study, csv_bytes(*lines), rater=offline.pseudonym)
    job = the_job(study)
    assert response.url == reverse("annotation:worksheet_job", args=[study.slug, job.uuid])
    assert job.state == Job.State.DONE, job.error
    assert job.result["cases"] == rows // 2 and job.result["created"] == rows // 2
    assert Assignment.objects.filter(rater=offline, status="submitted").count() == rows // 2
    assert Rating.objects.filter(assignment__rater=offline).count() == rows
