"""A job's liveness is its heartbeat in the database: emptying the cache (a restart of
Redis) does not make a live job look dead, nor let a second run start beside it."""

import threading
import time

import pytest
from django.core.cache import cache
from django.db import connection, transaction

from jobs import services as job_services
from jobs.models import Job
from tests.config.test_broker_restart import OwnRedis, free_port
from tests.jobs.lapse import job_heard_from_no_more

ASSIGN = Job.Kind.ASSIGN


@pytest.mark.django_db
def test_a_live_job_is_still_running_after_the_cache_is_emptied():
    job = job_services.job_create(kind=ASSIGN, study_id=1)
    cache.clear()  # Redis restarted: every progress entry is gone
    assert job_services.job_heard_from(job=job)
    assert job_services.job_status(job=job)["state"] == Job.State.RUNNING
    assert job_services.job_active(kind=ASSIGN, study_id=1) == job
    assert job_services.job_create(kind=ASSIGN, study_id=1) is None  # no second run
    job.refresh_from_db()
    assert job.state == Job.State.RUNNING


@pytest.mark.django_db
def test_a_job_heard_from_neither_way_is_stopped_and_a_new_one_may_start():
    job = job_services.job_create(kind=ASSIGN, study_id=1)
    job_heard_from_no_more(job)
    assert not job_services.job_heard_from(job=job)
    assert job_services.job_active(kind=ASSIGN, study_id=1) is None
    job.refresh_from_db()
    assert job.state == Job.State.STOPPED
    assert job_services.job_create(kind=ASSIGN, study_id=1) is not None


@pytest.mark.django_db(transaction=True)
def test_the_runs_heartbeat_reaches_the_row_while_the_cache_is_empty(monkeypatch):
    monkeypatch.setattr(job_services, "HEARTBEAT_SECONDS", 0.05)
    job = job_services.job_create(kind=ASSIGN, study_id=1)
    seen = {}

    def work(job, report):
        report("working", 1, 2, "half way")
        job_heard_from_no_more(job)  # and the cache emptied, as by a restart
        lapsed = Job.objects.get(pk=job.pk).heartbeat_at
        deadline = time.monotonic() + 10
        while Job.objects.get(pk=job.pk).heartbeat_at == lapsed and time.monotonic() < deadline:
            time.sleep(0.02)
        cache.clear()  # only the row can say it is alive
        seen["status"] = job_services.job_status(job=job)
        return {}

    job_services.job_execute(job_id=job.pk, work=work)
    status = seen["status"]
    assert (status["state"], status["done"], status["total"]) == ("running", 1, 2)
    assert status["message"] == "half way"  # its last progress, written with the heartbeat
    job.refresh_from_db()
    assert job.state == Job.State.DONE


@pytest.mark.django_db(transaction=True)
def test_a_run_inside_its_transaction_is_never_recorded_stopped():
    """Even heard from by no heartbeat (its process frozen, say), a run whose transaction is
    open holds its row: another request neither records it stopped nor starts a second."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks are PostgreSQL's")
    job = job_services.job_create(kind=ASSIGN, study_id=1)
    seen = {}

    def other_request():
        try:
            seen["active"] = job_services.job_active(kind=ASSIGN, study_id=1)
            seen["second"] = job_services.job_create(kind=ASSIGN, study_id=1)
            seen["state"] = job_services.job_status(job=job)["state"]
        finally:
            connection.close()

    def work(job, report):
        job_heard_from_no_more(job)
        with transaction.atomic():
            report("writing", 0, 1)
            request = threading.Thread(target=other_request)
            request.start()
            request.join(timeout=30)
            seen["answered"] = not request.is_alive()
        return {}

    job_services.job_execute(job_id=job.pk, work=work)
    assert seen["answered"]  # it did not wait for the run's transaction
    assert seen["active"] == job and seen["second"] is None and seen["state"] == "running"
    job.refresh_from_db()
    assert job.state == Job.State.DONE


@pytest.mark.django_db(transaction=True)
def test_a_run_recorded_stopped_before_its_first_report_keeps_nothing():
    job = job_services.job_create(kind=ASSIGN, study_id=1)
    kept = []

    def work(job, report):
        job_heard_from_no_more(job)
        assert job_services.job_status(job=job)["state"] == Job.State.STOPPED
        with transaction.atomic():
            kept.append(1)
            report("writing", 0, 1)  # gives up here, before anything is kept
            kept.append(2)
        return {}

    job_services.job_execute(job_id=job.pk, work=work)
    job.refresh_from_db()
    assert job.state == Job.State.STOPPED and kept == [1]


@pytest.fixture
def own_redis():
    """A Redis of the test's own, on a free port: never the suite's (others use it)."""
    server = OwnRedis(free_port())
    server.start()
    try:
        yield server
    finally:
        server.kill()


@pytest.mark.django_db
@pytest.mark.integration
def test_a_live_job_is_still_running_across_a_real_redis_restart(settings, own_redis):
    """Issue 41: two seconds after a Redis restart a running import showed "stopped" and a
    second import was accepted. A Redis of the test's own (never the suite's) as the cache:
    killed, then started again empty."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{own_redis.port}/0",
        }
    }
    job = job_services.job_create(kind=Job.Kind.CASE_IMPORT, study_id=1)
    assert cache.get(job_services.progress_key(job)) is not None  # its progress is there
    own_redis.kill()
    assert job_services.job_status(job=job)["state"] == Job.State.RUNNING  # Redis is down
    own_redis.start()  # back, and empty
    assert job_services.job_status(job=job)["state"] == Job.State.RUNNING
    assert job_services.job_create(kind=Job.Kind.CASE_IMPORT, study_id=1) is None
    job.refresh_from_db()
    assert job.state == Job.State.RUNNING
