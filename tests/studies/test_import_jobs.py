"""Large case imports: streamed, written in batches, all or nothing, with their progress."""

from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from jobs import services as job_services
from jobs.models import Job
from studies import selectors, services
from studies.importing import case_checks
from studies.importing import cases as importing
from studies.importing.cases import parse_cases
from studies.models import BlindedLabel, CaseUpload, IdentityMention, Response, StudyEvent, System
from studies.models import TestCase as Case
from tests.jobs.lapse import job_heard_from_no_more

HEADER = "id,prompt,context,stratum,response:baseline,response:improved"


def db_counts() -> dict:
    models = (Case, Response, BlindedLabel, System, StudyEvent, IdentityMention)
    return {model.__name__: model.objects.count() for model in models}


def write_cases(path: Path, count: int, *, bad_last: bool = False) -> Path:
    with path.open("w", encoding="utf-8") as out:
        out.write(HEADER + "\n")
        for n in range(count):
            prompt = "" if bad_last and n == count - 1 else f"P{n}"
            out.write(f"T{n},{prompt},,s{n % 3},a{n},b{n}\n")
    return path


@pytest.fixture
def draft(lead):
    return services.study_create(slug="big", name="Big", lead=lead)


def test_a_file_read_through_a_sink_keeps_no_case(tmp_path):
    path = write_cases(tmp_path / "c.csv", 2500)
    seen = []
    parsed = parse_cases(filename="c.csv", data=path, sink=seen.append)
    assert parsed.ok and parsed.case_count == 2500 and len(seen) == 2500
    assert parsed.cases == [] and len(parsed.first_cases) == importing.PREVIEW_CASES
    assert parsed.strata == [("s0", 834), ("s1", 833), ("s2", 833)]


# About 75 s, and 25 s more to empty the database after it; several times that on a busy
# machine, hence its own limit.
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_100000_cases_import_whole_or_not_at_all(draft, lead, tmp_path):
    """The largest file allowed: every row written, in order; a bad last row writes nothing."""
    count = importing.MAX_CASES
    bad = write_cases(tmp_path / "bad.csv", count, bad_last=True)
    before = db_counts()
    with pytest.raises(services.CaseImportError) as raised:
        services.test_cases_import(study=draft, actor=lead, filename="bad.csv", data=bad)
    assert raised.value.problems == [f"Row {count + 1}, column B 'prompt': the prompt is empty."]
    assert db_counts() == before
    good = write_cases(tmp_path / "good.csv", count)
    parsed = services.test_cases_import(study=draft, actor=lead, filename="good.csv", data=good)
    assert parsed.case_count == count
    assert Case.objects.filter(study=draft).count() == count
    assert Response.objects.filter(test_case__study=draft).count() == 2 * count
    assert BlindedLabel.objects.filter(test_case__study=draft).count() == 2 * count
    last = Case.objects.get(study=draft, case_id=f"T{count - 1}")
    assert last.position == count - 1 and last.prompt == f"P{count - 1}"
    assert StudyEvent.objects.get(study=draft, kind="cases_imported").detail["cases"] == count


def test_one_more_case_than_the_limit_is_refused(draft, lead, tmp_path, monkeypatch):
    monkeypatch.setattr(case_checks, "MAX_CASES", 50)
    path = write_cases(tmp_path / "c.csv", 51)
    with pytest.raises(services.CaseImportError):
        services.test_cases_import(study=draft, actor=lead, filename="c.csv", data=path)
    assert not Case.objects.filter(study=draft).exists()


def upload_of(draft, lead, data: bytes, cases: int) -> CaseUpload:
    return services.case_upload_create(
        study=draft, actor=lead, filename="c.csv", data=data, cases=cases
    )


def test_the_import_job_reports_its_progress_then_done(draft, lead, monkeypatch):
    from studies.services import cases as case_services

    monkeypatch.setattr(case_services, "WRITE_BATCH", 10)
    monkeypatch.setattr(job_services, "PROGRESS_INTERVAL", 0)
    data = "\n".join([HEADER, *(f"T{n},P,,,a,b" for n in range(35))]).encode()
    upload = upload_of(draft, lead, data, 35)
    seen = []
    real_set = cache.set

    def spy(key, value, *args, **kwargs):
        if key.startswith("job:"):
            seen.append(value["done"])
        return real_set(key, value, *args, **kwargs)

    monkeypatch.setattr(cache, "set", spy)
    assert services.case_upload_import_start(study=draft, upload=upload)
    assert not services.case_upload_import_start(study=draft, upload=upload)  # once only
    status = services.case_upload_import_status(upload=upload)
    assert (status["state"], status["done"], status["total"]) == ("running", 0, 35)
    services.case_upload_import_run(upload_id=upload.pk, actor_id=lead.pk)
    assert seen == [0, 10, 20, 30, 35]
    upload.refresh_from_db()
    assert services.case_upload_import_status(upload=upload)["state"] == "done"
    assert draft.test_cases.count() == 35


def test_a_failed_job_keeps_nothing_and_lists_the_problems(draft, lead):
    data = f"{HEADER}\nT1,P,,,a,b\n".encode()
    upload = upload_of(draft, lead, data, 1)
    services.test_cases_import(study=draft, actor=lead, filename="x.csv", data=data)
    before = db_counts()
    assert services.case_upload_import_start(study=draft, upload=upload)
    services.case_upload_import_run(upload_id=upload.pk, actor_id=lead.pk)
    upload.refresh_from_db()
    assert db_counts() == before and upload.imported_at is None
    assert services.case_upload_import_status(upload=upload)["state"] == "failed"
    assert services.case_upload_import_status(upload=upload)["problems"][0] == (
        "Row 2, column A 'id': the study already has a test case with the id 'T1'."
    )


def test_a_job_that_died_is_reported_stopped_and_can_run_again(client, draft, lead):
    data = f"{HEADER}\nT1,P,,,a,b\n".encode()
    upload = upload_of(draft, lead, data, 1)
    assert services.case_upload_import_start(study=draft, upload=upload)
    job = Job.objects.get(subject=upload.uuid)
    job_heard_from_no_more(job)  # the process running it died
    client.force_login(lead)
    page = reverse("studies:case_import", args=[draft.slug, upload.uuid])
    status = client.get(reverse("studies:case_import_status", args=[draft.slug, upload.uuid]))
    status = status.json()
    assert (status["state"], status["done"], status["total"]) == ("stopped", 0, 1)
    response = client.get(page)
    assert "The import stopped before it finished; nothing was imported." in response.text
    assert "Import 1 test case" in response.text
    assert client.post(page).status_code == 302
    assert draft.test_cases.count() == 1


def test_a_running_import_shows_its_progress_page(client, draft, lead):
    upload = upload_of(draft, lead, f"{HEADER}\nT1,P,,,a,b\n".encode(), 1)
    services.case_upload_import_start(study=draft, upload=upload)
    client.force_login(lead)
    page = client.get(reverse("studies:case_import", args=[draft.slug, upload.uuid])).text
    assert 'id="job-bar"' in page and "js/job-progress.js" in page
    assert "0 of 1 test cases written" in page


def test_another_upload_waits_until_a_running_import_has_finished(client, draft, lead):
    """A second coordinator's upload must not delete a file whose import is running."""
    upload = upload_of(draft, lead, f"{HEADER}\nT1,P,,,a,b\n".encode(), 1)
    services.case_upload_import_start(study=draft, upload=upload)
    client.force_login(lead)
    response = client.post(
        reverse("studies:cases", args=[draft.slug]),
        {"file": SimpleUploadedFile("other.csv", f"{HEADER}\nT2,P,,,a,b\n".encode())},
        follow=True,
    )
    assert "is running; upload another file once it has finished" in response.text
    assert list(CaseUpload.objects.filter(study=draft)) == [upload]
    assert Path(upload.file.path).exists()
    # The cache emptied (Redis restarted) is no reason: the import is still running.
    cache.clear()
    response = client.post(
        reverse("studies:cases", args=[draft.slug]),
        {"file": SimpleUploadedFile("other.csv", f"{HEADER}\nT2,P,,,a,b\n".encode())},
        follow=True,
    )
    assert "is running; upload another file once it has finished" in response.text
    # A job heard from no more is "stopped": a new upload replaces it.
    job_heard_from_no_more(Job.objects.get(subject=upload.uuid))
    response = client.post(
        reverse("studies:cases", args=[draft.slug]),
        {"file": SimpleUploadedFile("other.csv", f"{HEADER}\nT2,P,,,a,b\n".encode())},
    )
    assert response.status_code == 302
    assert [u.filename for u in CaseUpload.objects.filter(study=draft)] == ["other.csv"]


def test_a_large_upload_is_checked_on_disk_and_kept_as_a_file(client, draft, lead, settings):
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 100  # spooled to a temporary file
    data = "\n".join([HEADER, *(f"T{n},P,,,a,b" for n in range(20))]).encode()
    client.force_login(lead)
    response = client.post(
        reverse("studies:cases", args=[draft.slug]),
        {"file": SimpleUploadedFile("c.csv", data)},
    )
    assert response.status_code == 302
    upload = CaseUpload.objects.get(study=draft)
    assert upload.cases == 20 and upload.size == len(data)
    with upload.file.open("rb") as stored:
        assert stored.read() == data
    assert upload.filename == "c.csv" and "c.csv" not in upload.file.name


@pytest.mark.django_db(transaction=True)
def test_the_embedded_default_imports_in_a_thread_after_the_response(jobs_in_threads):
    """JOBS_RUN "thread": the request only starts the import; a thread runs it."""
    import threading
    import time

    from tests.factories import UserFactory

    lead = UserFactory(username="thread-lead")
    study = services.study_create(slug="thread", name="Thread", lead=lead)
    data = "\n".join([HEADER, *(f"T{n},P,,,a,b" for n in range(30))]).encode()
    upload = upload_of(study, lead, data, 30)
    from studies.tasks import import_case_upload

    assert services.case_upload_import_start(study=study, upload=upload)
    services.case_upload_import_schedule(upload=upload, actor_id=lead.pk)
    threads = {thread.name for thread in threading.enumerate()}
    assert import_case_upload.name in threads or (Case.objects.filter(study=study).count() == 30)
    deadline = time.monotonic() + 60
    while services.case_upload_import_status(upload=upload)["state"] == "running":
        assert time.monotonic() < deadline
        time.sleep(0.1)
        upload.refresh_from_db()
    assert services.case_upload_import_status(upload=upload)["state"] == "done"
    assert Case.objects.filter(study=study).count() == 30


@pytest.mark.parametrize(("cases", "analysed"), [(4, True), (3, False)])
def test_a_large_import_analyses_its_tables_after_commit_a_small_one_does_not(
    draft, lead, tmp_path, monkeypatch, django_capture_on_commit_callbacks, cases, analysed
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from studies.services import cases as case_services

    if connection.vendor != "postgresql":
        pytest.skip("planner statistics are PostgreSQL's")
    monkeypatch.setattr(case_services, "ANALYZE_AFTER_CASES", 4)
    path = write_cases(tmp_path / "c.csv", cases)
    with (
        CaptureQueriesContext(connection) as queries,
        django_capture_on_commit_callbacks(execute=True),
    ):
        services.test_cases_import(study=draft, actor=lead, filename="c.csv", data=path)
        before_commit = len(queries)
    analyze = [i for i, query in enumerate(queries) if query["sql"].startswith("ANALYZE")]
    if not analysed:
        assert analyze == []
        return
    assert len(analyze) == 1 and analyze[0] >= before_commit  # once, after the commit
    tables = ("testcase", "response", "blindedlabel", "identitymention")
    assert queries[analyze[0]]["sql"] == "ANALYZE " + ", ".join(f'"studies_{t}"' for t in tables)


def _mentions(study) -> list[tuple]:
    return list(
        IdentityMention.objects.filter(response__test_case__study=study)
        .order_by("response__test_case__position", "response__system__name", "pk")
        .values_list("response__test_case__case_id", "response__system__name", "reason", "matched")
    )


FLAGGED = (
    f"{HEADER}\n"
    "T1,P,,,As an AI language model I think so,fine\n"
    "T2,P,,,plain,GPT-4o says b is better than a\n"
    "T3,P,,,also plain,and plain\n"
)


def test_the_preview_is_kept_and_the_import_stores_the_same_blinding_check(client, draft, lead):
    """The upload's one pass keeps its preview: the page does not read the file again, and
    the import stores that check's mentions, the same as scanning the texts afresh."""
    client.force_login(lead)
    response = client.post(
        reverse("studies:cases", args=[draft.slug]),
        {"file": SimpleUploadedFile("f.csv", FLAGGED.encode())},
    )
    assert response.status_code == 302
    upload = CaseUpload.objects.get(study=draft)
    # Not read again. (A marker no random token on the page can contain by chance.)
    Path(upload.file.path).write_text(f"{HEADER}\nCASE-NOT-READ-AGAIN,P,,,changed,changed\n")
    page = client.get(response["Location"]).text
    assert 'id="count-cases">3<' in page and "describes itself as an AI" in page
    assert "CASE-NOT-READ-AGAIN" not in page
    Path(upload.file.path).write_text(FLAGGED)
    kept = selectors.case_upload_kept_mentions(study=draft, upload=upload)
    assert kept is not None and len(kept[0]) == 2 and kept[1] == ["baseline", "improved"]
    assert client.post(response["Location"]).status_code == 302
    assert Case.objects.filter(study=draft).count() == 3
    stored = _mentions(draft)
    services.identity_mentions_rescan(study=draft)
    assert stored == _mentions(draft) and len(stored) == 2


def test_a_kept_preview_is_not_used_once_the_study_has_changed(client, draft, lead):
    client.force_login(lead)
    response = client.post(
        reverse("studies:cases", args=[draft.slug]),
        {"file": SimpleUploadedFile("f.csv", FLAGGED.encode())},
    )
    upload = CaseUpload.objects.get(study=draft)
    services.test_cases_add(
        study=draft,
        systems=["baseline", "improved"],
        cases=[
            {
                "id": "T1",
                "prompt": "P",
                "stratum": "",
                "responses": {"baseline": "x", "improved": "y"},
            }
        ],
    )
    assert selectors.case_upload_kept_mentions(study=draft, upload=upload) is None
    page = client.get(response["Location"])
    # Checked again: the file's T1 is now in the study.
    assert "the study already has a test case with the id" in page.text
