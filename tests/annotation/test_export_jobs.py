"""Large exports prepared as jobs: the file is the direct export's, byte for byte; Prepare
twice starts one job; the file is replaced, expires, is never seen half-written; the page
offers jobs by the size rule."""

import hashlib
import os
import time
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.urls import reverse

from annotation import export_jobs, exports
from jobs import files
from jobs import services as job_services
from jobs.models import Job
from jobs.services import JOBS_KEPT, job_create
from studies.models import Study
from tests.payloads import close_and_unblind, coordinator_of

from .test_export_golden import OPENED, golden_study

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 20, 12, 0, tzinfo=UTC)


def body(response) -> bytes:
    if response.streaming:
        return b"".join(response.streaming_content)
    return response.content


def stored(job: Job):
    return files.job_files_root() / str(job.uuid)


@pytest.fixture
def study(settings):
    settings.TIME_ZONE = "UTC"
    return golden_study()


@pytest.mark.parametrize("unblinded", [False, True], ids=["blinded", "unblinded"])
def test_each_job_file_is_the_direct_export_byte_for_byte(study, client, unblinded):
    if unblinded:
        study = close_and_unblind(study)
        Study.objects.filter(pk=study.pk).update(unblinded_at=OPENED + timedelta(days=9))
        study.refresh_from_db()
    client.force_login(study.lead)
    direct_urls = {
        fmt: reverse("annotation:export", args=[study.slug, fmt])
        for fmt in (exports.WORKSHEET_CSV, exports.WORKSHEET_XLSX, exports.LONG_CSV)
    }
    direct_urls["bundle"] = reverse("agreement:report_bundle", args=[study.slug])
    assert sorted(direct_urls) == sorted(export_jobs.EXPORT_KINDS)
    # Frozen time: the zip members' times and the dictionary's "exported" stamp.
    with time_machine.travel(NOW, tick=False):
        for key, url in direct_urls.items():
            direct = client.get(url)
            job = export_jobs.export_job_start(study=study, key=key, actor=study.lead)
            assert job.state == Job.State.DONE, job.error
            download = client.get(
                reverse("annotation:export_job_download", args=[study.slug, job.uuid])
            )
            assert download.status_code == 200
            data = body(download)
            assert data == body(direct), key
            assert download["Content-Disposition"] == direct["Content-Disposition"]
            assert download["Content-Type"] == direct["Content-Type"]
            assert download["Cache-Control"] == "no-store"
            job.refresh_from_db()
            assert job.file_size == len(data)
            assert job.file_sha256 == hashlib.sha256(data).hexdigest()
            # Stored under the job's UUID: nothing in the name says what the file holds.
            assert os.listdir(files.job_files_root()).count(str(job.uuid)) == 1


def test_prepare_shows_progress_then_the_download_and_a_second_press_finds_the_first(study, client):
    coordinator = coordinator_of(study)
    client.force_login(coordinator)
    running = job_create(kind=Job.Kind.EXPORT, study_id=study.pk, name="long-csv")
    prepare = reverse("annotation:export_prepare", args=[study.slug, "long-csv"])
    response = client.post(prepare)
    page = reverse("annotation:export_job", args=[study.slug, running.uuid])
    assert response.status_code == 302 and response["Location"] == page
    assert Job.objects.filter(kind=Job.Kind.EXPORT).count() == 1
    progress = client.get(page)
    assert b'id="job-progress"' in progress.content and b"Download" not in progress.content
    status = client.get(reverse("annotation:export_job_status", args=[study.slug, running.uuid]))
    assert status.json()["state"] == "running" and status.json()["file"] is None
    # The first ends (stopped); the next press runs a job of its own, inline here.
    Job.objects.filter(pk=running.pk).update(state=Job.State.STOPPED)
    response = client.post(prepare)
    job = Job.objects.filter(kind=Job.Kind.EXPORT, state=Job.State.DONE).get()
    assert response["Location"] == reverse("annotation:export_job", args=[study.slug, job.uuid])
    ready = client.get(response["Location"])
    download = reverse("annotation:export_job_download", args=[study.slug, job.uuid])
    assert download.encode() in ready.content
    assert f"Download {study.slug}-long.csv".encode() in ready.content
    # The results page lists the prepared file.
    results = client.get(reverse("annotation:results", args=[study.slug]))
    assert download.encode() in results.content


def test_an_unknown_export_is_not_found(study, client):
    client.force_login(study.lead)
    for fmt in ("key-csv", "dictionary-md", "nope"):
        response = client.post(reverse("annotation:export_prepare", args=[study.slug, fmt]))
        assert response.status_code == 404
    assert not Job.objects.filter(kind=Job.Kind.EXPORT).exists()


def test_another_studys_export_job_is_not_found(study, client):
    job = export_jobs.export_job_start(study=study, key="long-csv", actor=study.lead)
    other = Study.objects.exclude(pk=study.pk).first() or _other_study()
    client.force_login(other.lead)
    for name in ("annotation:export_job", "annotation:export_job_status"):
        assert client.get(reverse(name, args=[other.slug, job.uuid])).status_code == 404
    download = reverse("annotation:export_job_download", args=[other.slug, job.uuid])
    assert client.get(download).status_code == 404


def _other_study():
    from tests.factories import make_study

    return make_study(slug="other-study", cases=1)


def test_a_newer_file_replaces_the_older(study, client):
    first = export_jobs.export_job_start(study=study, key="long-csv", actor=study.lead)
    other_kind = export_jobs.export_job_start(study=study, key="worksheet-csv", actor=study.lead)
    assert stored(first).exists()
    second = export_jobs.export_job_start(study=study, key="long-csv", actor=study.lead)
    assert second.pk != first.pk
    assert not stored(first).exists() and stored(second).exists() and stored(other_kind).exists()
    first.refresh_from_db()
    assert first.file_path == ""
    client.force_login(study.lead)
    gone = client.get(reverse("annotation:export_job_download", args=[study.slug, first.uuid]))
    assert gone.status_code == 404
    page = client.get(reverse("annotation:export_job", args=[study.slug, first.uuid]))
    assert page.status_code == 302  # to the results page, saying why
    status = export_jobs.export_job_status(job=first)
    assert status["file"] is None and status["problem"] == export_jobs.EXPIRED


def test_a_file_expires(study, client, settings):
    settings.JOB_FILES_HOURS = 24
    job = export_jobs.export_job_start(study=study, key="worksheet-csv", actor=study.lead)
    kept = export_jobs.export_job_start(study=study, key="long-csv", actor=study.lead)
    client.force_login(study.lead)
    url = reverse("annotation:export_job_download", args=[study.slug, job.uuid])
    assert client.get(url).status_code == 200
    with time_machine.travel(job.finished_at + timedelta(hours=24, seconds=1)):
        # Read after its expiry: removed then and there.
        assert client.get(url).status_code == 404
        assert not stored(job).exists()
        assert export_jobs.export_job_status(job=job)["problem"] == export_jobs.EXPIRED
    assert stored(kept).exists()
    with time_machine.travel(kept.finished_at + timedelta(hours=25)):
        assert job_services.job_files_expire() == 1
    assert not stored(kept).exists()
    kept.refresh_from_db()
    assert kept.file_path == ""


def test_a_part_left_by_a_dead_run_is_removed_once_expired(settings):
    settings.JOB_FILES_HOURS = 1
    root = files.job_files_root()
    root.mkdir(parents=True, exist_ok=True)
    young, old = root / "young.part", root / "old.part"
    young.write_bytes(b"x")
    old.write_bytes(b"x")
    os.utime(old, (time.time() - 3601, time.time() - 3601))
    assert job_services.job_files_expire() == 1
    assert young.exists() and not old.exists()


def test_a_file_is_never_seen_half_written(study):
    """A writer that fails half-way leaves no file, no temporary file and no record."""
    seen = {}

    def write(study, file, written):
        file.write(b"half of it")
        file.flush()
        seen["listing"] = sorted(os.listdir(files.job_files_root()))
        raise RuntimeError("the disk is full")

    export_jobs.export_kind_register(
        export_jobs.ExportKind(
            key="broken", label="Broken", filename=lambda s: "x.csv", content_type="text/csv",
            write=write,
        )
    )  # fmt: skip
    try:
        with pytest.raises(RuntimeError):
            export_jobs.export_job_start(study=study, key="broken", actor=study.lead)
    finally:
        del export_jobs.EXPORT_KINDS["broken"]
    job = Job.objects.get(kind=Job.Kind.EXPORT, name="broken")
    # While it was written, only its temporary name existed.
    assert seen["listing"] == [f"{job.uuid}.part"]
    assert os.listdir(files.job_files_root()) == []
    assert job.state == Job.State.FAILED and job.file_path == "" and job.file_size is None
    assert export_jobs.export_job_status(job=job)["file"] is None


def test_pruned_jobs_take_their_files_with_them(study):
    first = export_jobs.export_job_start(study=study, key="long-csv", actor=study.lead)
    # Another export's files do not replace it, but the kind's oldest are pruned.
    Job.objects.filter(pk=first.pk).update(name="long-csv-old")
    for _ in range(JOBS_KEPT):
        export_jobs.export_job_start(study=study, key="worksheet-csv", actor=study.lead)
    assert not Job.objects.filter(pk=first.pk).exists()
    assert not stored(first).exists()
    assert len(os.listdir(files.job_files_root())) == 1  # the latest worksheet's


def test_the_results_page_offers_jobs_from_the_size_rule_on(study, client, settings):
    client.force_login(study.lead)
    url = reverse("annotation:results", args=[study.slug])
    prepare = reverse("annotation:export_prepare", args=[study.slug, "long-csv"]).encode()
    direct = f'href="{reverse("annotation:export", args=[study.slug, "long-csv"])}"'.encode()
    settings.EXPORT_JOB_FROM = 10_000
    small = client.get(url).content
    assert direct in small and prepare not in small
    settings.EXPORT_JOB_FROM = 1
    large = client.get(url).content
    assert prepare in large and direct not in large
    bundle = reverse("annotation:export_prepare", args=[study.slug, "bundle"]).encode()
    assert bundle in large


@pytest.fixture(autouse=True)
def _empty_job_files():
    root = files.job_files_root()
    yield
    if root.is_dir():
        for path in root.iterdir():
            path.unlink()


def test_a_large_studys_whole_excel_worksheet_is_prepared_by_the_job_only(study, client, settings):
    """Written whole before its first byte, it would hold a web worker half a minute: the
    direct URL sends a large study's coordinator to the Prepare button instead."""
    from studies.services.tokens import api_token_create

    client.force_login(study.lead)
    direct = reverse("annotation:export", args=[study.slug, "worksheet-xlsx"])
    settings.EXPORT_JOB_FROM = 10_000
    assert client.get(direct).status_code == 200  # a small study: downloaded at once
    settings.EXPORT_JOB_FROM = 1
    sent = client.get(direct)
    assert sent.status_code == 302 and sent["Location"].endswith("#exports")
    page = client.get(sent["Location"]).text
    assert "its Excel worksheet would take too long to write while you wait" in page
    prepare = reverse("annotation:export_prepare", args=[study.slug, "worksheet-xlsx"])
    assert prepare in page
    # One rater's worksheet and the CSV exports still download directly.
    assert client.get(direct, {"rater": "R-01"}).status_code == 200
    csv = reverse("annotation:export", args=[study.slug, "worksheet-csv"])
    assert client.get(csv).status_code == 200
    # The API says the same, as an error, and its job prepares the file.
    _, secret = api_token_create(user=study.lead, name="t")
    auth = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
    refused = client.get(f"/api/v1/studies/{study.slug}/exports/worksheet-xlsx/", **auth)
    assert refused.status_code == 400
    assert "/exports/worksheet-xlsx/job/" in refused.json()["error"]["message"]
    started = client.post(f"/api/v1/studies/{study.slug}/exports/worksheet-xlsx/job/", **auth)
    assert started.status_code in (200, 201, 202)
    assert Job.objects.get(kind=Job.Kind.EXPORT, name="worksheet-xlsx").state == Job.State.DONE
