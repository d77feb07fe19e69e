"""A large export through the API as a job: start it, read its progress, download its file,
which is the direct export's, byte for byte."""

import hashlib
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import pytest
import time_machine

from jobs.models import Job
from jobs.services import job_create
from tests.annotation.test_export_golden import golden_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(settings):
    settings.TIME_ZONE = "UTC"
    return golden_study()


def _path(url: str) -> str:
    return urlsplit(url).path


def _body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


@pytest.mark.parametrize("fmt", ["long-csv", "worksheet-xlsx", "bundle"])
def test_an_export_job_through_the_api_is_the_direct_file(study, api_as, fmt):
    api = api_as(study.lead)
    direct_url = (
        f"studies/{study.slug}/report/bundle/"
        if fmt == "bundle"
        else f"studies/{study.slug}/exports/{fmt}/"
    )
    with time_machine.travel(datetime(2026, 3, 20, 12, 0, tzinfo=UTC), tick=False):
        direct = api("GET", direct_url)
        expected = _body(direct)  # streamed: written as it is read
        started = api("POST", f"studies/{study.slug}/exports/{fmt}/job/")
        assert started.status_code == 202, started.json()
        body = started.json()
        assert started["Location"] == body["job"]
        # Inline in the tests: done on return.
        assert body["state"] == "done" and body["export"] == fmt and body["problem"] == ""
        again = api("GET", _path(body["job"]))
        assert again.status_code == 200 and again.json() == body
        download = api("GET", _path(body["download"]), HTTP_ACCEPT="application/json")
    assert download.status_code == 200
    data = _body(download)
    assert data == expected
    assert download["Content-Disposition"] == direct["Content-Disposition"]
    file = body["file"]
    assert file["size"] == len(data) and file["sha256"] == hashlib.sha256(data).hexdigest()
    assert file["name"] in direct["Content-Disposition"]
    assert file["content_type"] == direct["Content-Type"]


def test_a_start_while_one_runs_answers_that_one(study, api_as):
    running = job_create(kind=Job.Kind.EXPORT, study_id=study.pk, name="long-csv")
    api = api_as(study.lead)
    started = api("POST", f"studies/{study.slug}/exports/long-csv/job/")
    assert started.status_code == 202
    assert started.json()["job"].endswith(f"/export-jobs/{running.uuid}/")
    assert started.json()["state"] == "running" and started.json()["download"] is None
    assert Job.objects.filter(kind=Job.Kind.EXPORT).count() == 1
    download = api("GET", f"studies/{study.slug}/export-jobs/{running.uuid}/download/")
    assert download.status_code == 404


def test_an_unknown_or_expired_export_is_not_found(study, api_as, settings):
    api = api_as(study.lead)
    for fmt in ("key-csv", "nope"):
        assert api("POST", f"studies/{study.slug}/exports/{fmt}/job/").status_code == 404
    body = api("POST", f"studies/{study.slug}/exports/long-csv/job/").json()
    job = Job.objects.get(kind=Job.Kind.EXPORT)
    with time_machine.travel(
        job.finished_at + timedelta(hours=settings.JOB_FILES_HOURS, seconds=1)
    ):
        expired = api("GET", _path(body["job"])).json()
        assert expired["file"] is None and expired["download"] is None
        assert "Prepare again" in expired["problem"]
        assert api("GET", _path(body["download"])).status_code == 404
