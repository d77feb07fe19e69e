"""Assign as a job: one path for every size, its progress, all or nothing, one job at a time."""

import time
from collections import Counter

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation import assignment_jobs, services
from annotation.models import Assignment
from annotation.services import assignment
from jobs import services as job_services
from jobs.models import Job
from studies.models import StudyEvent
from tests.jobs.lapse import job_heard_from_no_more
from tests.processes import sqlite_script_outcome

from .test_assignment import raters_only_study
from .test_locks import together


def assignments_of(study) -> Counter:
    """How many raters each test case has; also checks nobody has a case twice."""
    rows = list(
        Assignment.objects.filter(test_case__study=study).values_list("rater_id", "test_case_id")
    )
    assert len(rows) == len(set(rows)), "a rater has a case twice"
    return Counter(case for _, case in rows)


@pytest.fixture
def job_path(settings):
    """Every design runs as a job; the job runs in the request (the tests' in-process mode)."""
    settings.ASSIGN_JOB_FROM = 0


@pytest.fixture
def held_jobs(settings, jobs_in_threads):
    """Jobs are scheduled in a thread after commit, which a test's transaction never does:
    a started job stays running until the test runs it."""
    settings.ASSIGN_JOB_FROM = 0


@pytest.mark.django_db
def test_the_cut_runs_small_designs_in_the_request_and_large_ones_as_jobs(settings, held_jobs):
    study = raters_only_study(raters=4, cases=6, raters_per_item=2)
    assert assignment_jobs.assignment_design_size(study=study) == 12
    settings.ASSIGN_JOB_FROM = 13
    small = assignment_jobs.assignment_job_start(study=study, actor=study.lead)
    assert small.state == Job.State.DONE and sum(small.result["created"].values()) == 12
    full = raters_only_study(raters=3, cases=5)  # every rater rates every case: 15
    settings.ASSIGN_JOB_FROM = 15
    large = assignment_jobs.assignment_job_start(study=full, actor=full.lead)
    assert large.state == Job.State.RUNNING
    assert not Assignment.objects.filter(test_case__study=full).exists()


@pytest.mark.django_db
def test_the_page_shows_a_jobs_progress_then_the_same_result_as_in_the_request(client, held_jobs):
    study = raters_only_study(raters=4, cases=6, raters_per_item=2)
    client.force_login(study.lead)
    pressed = client.post(reverse("annotation:assign", args=[study.slug]))
    job = Job.objects.get(kind="assign", study_id=study.pk)
    job_url = reverse("annotation:assign_job", args=[study.slug, job.uuid])
    assert pressed.status_code == 302 and pressed.url == job_url
    progress = client.get(job_url)
    assert progress.status_code == 200 and 'id="job-progress"' in progress.text
    assert "Waiting to start" in progress.text
    status_url = reverse("annotation:assign_job_status", args=[study.slug, job.uuid])
    assert client.get(status_url).json()["state"] == "running"
    # The raters page says a job runs instead of offering Assign again.
    raters = client.get(reverse("annotation:raters", args=[study.slug]))
    assert 'id="assign-running"' in raters.text and ">Assign</button>" not in raters.text
    # A second press while it runs leads to the same job and starts nothing.
    again = client.post(reverse("annotation:assign", args=[study.slug]))
    assert (
        again.url == job_url and Job.objects.filter(kind="assign", study_id=study.pk).count() == 1
    )

    assignment_jobs.assignment_job_run(job_id=job.pk)
    status = client.get(status_url).json()
    assert status["state"] == "done" and status["assigned"] == 12
    done = client.get(job_url, follow=True)
    assert "12 cases assigned to 4 raters." in done.text  # as when assigned in the request
    assert set(assignments_of(study).values()) == {2}


@pytest.mark.django_db
def test_the_job_reports_its_stages(job_path, monkeypatch):
    study = raters_only_study(raters=5, cases=1200, raters_per_item=2)
    monkeypatch.setattr(job_services, "PROGRESS_INTERVAL", 0)
    seen = []
    real_set = cache.set

    def spy(key, value, *args, **kwargs):
        if key.startswith("job:"):
            seen.append((value["stage"], value["done"], value["total"]))
        return real_set(key, value, *args, **kwargs)

    monkeypatch.setattr(cache, "set", spy)
    job = assignment_jobs.assignment_job_start(study=study, actor=study.lead)
    assert job.state == Job.State.DONE
    assert seen == [
        ("waiting", 0, 0),
        ("planning", 0, 1200), ("planning", 500, 1200), ("planning", 1000, 1200),
        *(("writing", n, 5) for n in range(6)),
    ]  # fmt: skip


@pytest.mark.django_db
def test_a_job_that_fails_halfway_keeps_nothing(job_path, monkeypatch):
    study = raters_only_study(raters=4, cases=6, raters_per_item=2)
    real_create, calls = services.assignments_create, []

    def third_rater_fails(**kwargs):
        calls.append(kwargs["rater"].pseudonym)
        if len(calls) == 3:
            raise RuntimeError("the database went away")
        return real_create(**kwargs)

    monkeypatch.setattr(assignment, "assignments_create", third_rater_fails)
    with pytest.raises(RuntimeError):  # a server error stays an error (logged, a 500)
        assignment_jobs.assignment_job_start(study=study, actor=study.lead)
    job = Job.objects.get(kind="assign", study_id=study.pk)
    assert job.state == Job.State.FAILED and "nothing was assigned" in job.error
    assert not Assignment.objects.filter(test_case__study=study).exists()
    assert not StudyEvent.objects.filter(study=study, kind="raters_assigned").exists()


@pytest.mark.django_db
def test_a_refusal_is_the_jobs_outcome(client, job_path):
    study = raters_only_study(raters=1, cases=3, raters_per_item=2)
    client.force_login(study.lead)
    response = client.post(reverse("annotation:assign", args=[study.slug]), follow=True)
    assert "needs 2 raters per test case but the study has 1 rater." in response.text
    assert Job.objects.get(kind="assign", study_id=study.pk).state == Job.State.FAILED


@pytest.mark.django_db
def test_a_job_heard_from_no_more_is_stopped_and_may_be_started_again(client, held_jobs):
    study = raters_only_study(raters=4, cases=6, raters_per_item=2)
    first = assignment_jobs.assignment_job_start(study=study, actor=study.lead)
    job_heard_from_no_more(first)  # its process died
    assert assignment_jobs.assignment_job_status(job=first)["state"] == "stopped"
    client.force_login(study.lead)
    page = client.get(reverse("annotation:assign_job", args=[study.slug, first.uuid]), follow=True)
    assert "stopped before it finished; nothing was assigned" in page.text
    assert ">Assign</button>" in page.text  # the raters page offers it again
    second = assignment_jobs.assignment_job_start(study=study, actor=study.lead)
    assert second.pk != first.pk
    first.refresh_from_db()
    assert first.state == Job.State.STOPPED
    assignment_jobs.assignment_job_run(job_id=second.pk)
    assert set(assignments_of(study).values()) == {2}


@pytest.mark.django_db
def test_a_job_said_to_be_stopped_while_it_waited_for_the_lock_assigns_nothing(
    held_jobs, monkeypatch
):
    # The page told the coordinator "nothing was assigned" while the run waited for the
    # study's lock (behind a case import): taking the lock later, it must give up.
    study = raters_only_study(raters=4, cases=6, raters_per_item=2)
    job = assignment_jobs.assignment_job_start(study=study, actor=study.lead)
    real_lock = assignment.study_lock

    def lock_then_declared_stopped(pk, **kwargs):
        locked = real_lock(pk, **kwargs)
        job_heard_from_no_more(job)
        assert assignment_jobs.assignment_job_status(job=job)["state"] == "stopped"
        return locked

    monkeypatch.setattr(assignment, "study_lock", lock_then_declared_stopped)
    assignment_jobs.assignment_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.state == Job.State.STOPPED and job.result == {}
    assert not Assignment.objects.filter(test_case__study=study).exists()


@pytest.mark.django_db
def test_a_job_recorded_as_stopped_before_its_task_starts_does_not_run(held_jobs):
    study = raters_only_study(raters=4, cases=6, raters_per_item=2)
    job = assignment_jobs.assignment_job_start(study=study, actor=study.lead)
    job_heard_from_no_more(job)  # queued past the timeout
    assert assignment_jobs.assignment_job_status(job=job)["state"] == "stopped"
    assignment_jobs.assignment_job_run(job_id=job.pk)  # the task arrives late
    assert not Assignment.objects.filter(test_case__study=study).exists()


@pytest.mark.django_db
def test_a_running_job_keeps_saying_it_is_alive_while_it_waits(held_jobs, monkeypatch):
    study = raters_only_study(raters=4, cases=6, raters_per_item=2)
    job = assignment_jobs.assignment_job_start(study=study, actor=study.lead)
    key = job_services.progress_key(job)
    monkeypatch.setattr(job_services, "HEARTBEAT_SECONDS", 0.05)
    real_lock = assignment.study_lock

    def slow_lock(pk, **kwargs):
        cache.delete(key)  # the progress lapsed while the lock was awaited...
        deadline = time.monotonic() + 5
        while cache.get(key) is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert cache.get(key) is not None  # ...and the run's heartbeat put it back
        return real_lock(pk, **kwargs)

    monkeypatch.setattr(assignment, "study_lock", slow_lock)
    assignment_jobs.assignment_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.state == Job.State.DONE
    assert set(assignments_of(study).values()) == {2}


class _BrokenCache:
    def __getattr__(self, name):
        def unreachable(*args, **kwargs):
            raise ConnectionError("the cache is down")

        return unreachable


@pytest.mark.django_db
def test_assign_works_while_the_cache_is_down(client, job_path, monkeypatch):
    monkeypatch.setattr(job_services, "cache", _BrokenCache())
    study = raters_only_study(raters=4, cases=6, raters_per_item=2)
    job = assignment_jobs.assignment_job_start(study=study, actor=study.lead)
    assert job.state == Job.State.DONE
    assert set(assignments_of(study).values()) == {2}
    client.force_login(study.lead)
    assert client.get(reverse("annotation:raters", args=[study.slug])).status_code == 200


@pytest.mark.django_db
def test_the_api_answers_a_job_with_202_and_its_url(client, held_jobs):
    from studies.services import tokens

    study = raters_only_study(raters=4, cases=6, raters_per_item=2)
    _, secret = tokens.api_token_create(user=study.lead, name="t")
    auth = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
    response = client.post(reverse("api:assign", args=[study.slug]), **auth)
    assert response.status_code == 202
    body = response.json()
    assert body["state"] == "running" and response["Location"] == body["job"]
    assignment_jobs.assignment_job_run(job_id=Job.objects.get(kind="assign", study_id=study.pk).pk)
    done = client.get(body["job"], **auth).json()
    assert done["state"] == "done" and sum(done["created"].values()) == 12


@pytest.mark.django_db(transaction=True)
def test_the_embedded_default_assigns_in_a_thread_after_the_response(held_jobs):
    study = raters_only_study(raters=4, cases=6, raters_per_item=2)
    job = assignment_jobs.assignment_job_start(study=study, actor=study.lead)
    deadline = time.monotonic() + 60
    while assignment_jobs.assignment_job_status(job=job)["state"] == "running":
        assert time.monotonic() < deadline
        time.sleep(0.05)
        job.refresh_from_db()
    assert job.state == Job.State.DONE
    assert set(assignments_of(study).values()) == {2}


@pytest.mark.django_db(transaction=True)
def test_presses_at_once_assign_each_case_k_times(job_path):
    """Four presses and two direct runs at once (PostgreSQL): each case gets its k raters
    once; every run either did the work, found nothing to do, or joined a running job."""
    if connection.vendor != "postgresql":
        pytest.skip("needs concurrent connections")
    study = raters_only_study(raters=6, cases=30, raters_per_item=3)

    def press():
        return assignment_jobs.assignment_job_start(study=study, actor=study.lead)

    def direct():
        return assignment.study_assign(study=study, actor=None)

    runs = together(press, press, press, press, direct, direct)
    assert [run.error for run in runs] == [None] * 6
    assert set(assignments_of(study).values()) == {3} and len(assignments_of(study)) == 30
    created = [run.result if isinstance(run.result, dict) else None for run in runs]
    jobs = Job.objects.filter(kind="assign", study_id=study.pk, state=Job.State.DONE)
    total = sum(sum(c.values()) for c in created if c) + sum(
        sum(job.result["created"].values()) for job in jobs
    )
    assert total == 90  # the 90 assignments were created once, by one of the runs


SQLITE_SCRIPT = r"""
import json, threading
import django
django.setup()
from django.db import connection
from django.test.utils import CaptureQueriesContext
from annotation import assignment_jobs
from annotation.services.assignment import study_assign
from annotation.models import Assignment
from studies.models import Membership, Study
from studies.services import membership_add
from tests.factories import UserFactory, make_study

study = make_study(slug="presses", cases=20, raters=[], status=Study.Status.OPEN)
Study.objects.filter(pk=study.pk).update(raters_per_item=2)
study.refresh_from_db()
for _ in range(5):
    membership_add(study=study, user=UserFactory(), role=Membership.Role.RATER)
errors, start = [], threading.Barrier(5)

def press(inline):
    try:
        start.wait()
        if inline is None:
            study_assign(study=study, actor=None)
        else:
            assignment_jobs.assignment_job_start(study=study, actor=None, inline=inline)
    except Exception as error:
        errors.append(repr(error))
    finally:
        connection.close()

threads = [threading.Thread(target=press, args=(i,)) for i in (True, True, False, None, None)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
import time
deadline = time.monotonic() + 60
while assignment_jobs.assignment_job_running(study=study) and time.monotonic() < deadline:
    time.sleep(0.1)
rows = list(Assignment.objects.filter(test_case__study=study).values_list("rater_id", "test_case_id"))
print(json.dumps({"errors": errors, "rows": len(rows), "distinct": len(set(rows)),
                  "cases": len({case for _, case in rows})}))
"""


@pytest.mark.integration
def test_presses_at_once_on_sqlite_assign_each_case_k_times(tmp_path):
    """The embedded default (SQLite, a job in a thread): no row locks, one writer at a time."""
    outcome = sqlite_script_outcome(SQLITE_SCRIPT, tmp_path=tmp_path)
    assert outcome == {"errors": [], "rows": 40, "distinct": 40, "cases": 20}


@pytest.mark.django_db
@pytest.mark.parametrize("raters_per_item", [2, None])
def test_assign_costs_the_same_queries_at_10_and_at_60_cases(raters_per_item):
    """Reads once for the study and writes once per rater: no query per case (a deferred
    field read per case once cost 10,000 queries at 10,000 cases)."""
    counts = []
    for cases in (10, 60):
        study = raters_only_study(raters=4, cases=cases, raters_per_item=raters_per_item)
        with CaptureQueriesContext(connection) as captured:
            assignment.study_assign(study=study, actor=study.lead)
        counts.append(len(captured))
    assert counts[0] == counts[1]


@pytest.mark.django_db
def test_only_the_latest_finished_jobs_are_kept(job_path, settings):
    """A client pressing Assign in a loop keeps a bounded number of job records."""
    settings.ASSIGN_JOB_FROM = 10**6  # in the request: each start is done on return
    study = raters_only_study(raters=2, cases=3)
    jobs = [
        assignment_jobs.assignment_job_start(study=study, actor=study.lead)
        for _ in range(job_services.JOBS_KEPT + 5)
    ]
    kept = set(Job.objects.filter(kind="assign", study_id=study.pk).values_list("pk", flat=True))
    assert kept == {job.pk for job in jobs[-job_services.JOBS_KEPT :]}
    # A pruned job's task, delivered late, does nothing.
    assignment_jobs.assignment_job_run(job_id=jobs[0].pk)
    # The first job assigned every case; what it did stays in the history.
    assert sum(jobs[0].result["created"].values()) == 6
    assert study.events.filter(kind=StudyEvent.Kind.RATERS_ASSIGNED).count() == 1
