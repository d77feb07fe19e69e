"""The running lock and pending claim in Redis: a run's lock lives as long as its process,
a claim is freed only by its own task, and a task that finds the study running looks once
more, not in a loop."""

import multiprocessing
import os
import signal
import threading
import time

import pytest
import redis
from django.conf import settings as django_settings

from agreement import coalescing, tasks
from agreement.models import StudyAgreement

from ..factories import make_study

pytestmark = pytest.mark.integration

STUDY_ID = 987_654  # keys only: no study row is needed for the lock and the claim


@pytest.fixture
def redis_coalescing(settings, monkeypatch):
    """Coalescing against the real Redis (JOBS_RUN "celery"), with a lock that lives one
    second unless renewed."""
    settings.JOBS_RUN = "celery"
    monkeypatch.setattr(coalescing, "RUNNING_SECONDS", 1)
    monkeypatch.setattr(coalescing, "HEARTBEAT_SECONDS", 0.2)
    client = redis.Redis.from_url(django_settings.REDIS_URL)

    def clean():
        for key in client.scan_iter("concord:agreement:*"):
            client.delete(key)

    clean()
    yield client
    clean()


def lock_is_free(study_id: int) -> bool:
    with coalescing.running(study_id) as acquired:
        return acquired


def test_a_live_run_keeps_its_lock_past_the_lock_lifetime_and_frees_it_at_the_end(
    redis_coalescing, monkeypatch
):
    # No wall-clock window: the run counts its heartbeat's renewals, and the test waits for
    # as many as outlast the lifetime the lock was taken with (a heartbeat at least 0.5 s
    # apart, a lifetime of 3 s: seven renewals), however slowly the machine gets there.
    monkeypatch.setattr(coalescing, "RUNNING_SECONDS", 3)
    monkeypatch.setattr(coalescing, "HEARTBEAT_SECONDS", 0.5)
    renewals, renewed = [], threading.Event()
    reacquire = redis.lock.Lock.reacquire

    def counted(lock):
        outcome = reacquire(lock)
        renewals.append(outcome)
        if len(renewals) * coalescing.HEARTBEAT_SECONDS > coalescing.RUNNING_SECONDS:
            renewed.set()
        return outcome

    monkeypatch.setattr(redis.lock.Lock, "reacquire", counted)
    with coalescing.running(STUDY_ID) as acquired:
        assert acquired
        assert renewed.wait(timeout=120), "the heartbeat never renewed the lock"
        assert all(renewals)  # every renewal found the lock still this run's
        assert coalescing.running_seconds_left(STUDY_ID) > 0
        assert not lock_is_free(STUDY_ID)
    assert coalescing.running_seconds_left(STUDY_ID) == 0
    assert lock_is_free(STUDY_ID)


def _hold_the_lock_forever(study_id: int, ready) -> None:
    with coalescing.running(study_id):
        ready.set()
        time.sleep(3600)


def test_the_lock_of_a_killed_run_expires(redis_coalescing):
    context = multiprocessing.get_context("fork")
    ready = context.Event()
    run = context.Process(target=_hold_the_lock_forever, args=(STUDY_ID, ready))
    run.start()
    try:
        assert ready.wait(timeout=30)
        assert not lock_is_free(STUDY_ID)
    finally:
        os.kill(run.pid, signal.SIGKILL)
        run.join()
    deadline = time.monotonic() + 60
    while not lock_is_free(STUDY_ID):
        assert time.monotonic() < deadline, "the dead run's lock never expired"
        time.sleep(0.1)


def test_a_claim_is_freed_only_by_the_task_it_was_made_for(redis_coalescing):
    old = coalescing.claim_pending(STUDY_ID)
    assert old and coalescing.claim_pending(STUDY_ID) is None
    coalescing.release_pending(STUDY_ID, old)
    new = coalescing.claim_pending(STUDY_ID)
    assert new and new != old
    # The old task's message is delivered again (its worker died): the new claim stands.
    coalescing.release_pending(STUDY_ID, old)
    assert coalescing.claim_pending(STUDY_ID) is None
    coalescing.release_pending(STUDY_ID, new)
    assert coalescing.claim_pending(STUDY_ID)


@pytest.mark.django_db(transaction=True)
def test_a_task_that_finds_the_study_running_looks_once_more_and_no_more(
    redis_coalescing, settings, monkeypatch
):
    settings.JOBS_RUN = "inline"
    study = make_study(slug="coalescing-busy", cases=2)  # computed in-process
    settings.JOBS_RUN = "celery"
    runs = StudyAgreement.objects.get(study=study).runs
    StudyAgreement.objects.filter(study=study).update(requested=100)  # stale again
    sent = []
    monkeypatch.setattr(tasks.recompute_study, "apply_async", lambda **kwargs: sent.append(kwargs))
    with coalescing.running(study.pk):
        tasks.recompute_study(study.pk)
        assert len(sent) == 1
        recheck = sent[0]
        assert recheck["kwargs"]["recheck"] is True
        assert 0 < recheck["countdown"] <= coalescing.RUNNING_SECONDS + 1
        # At most one pending: a request meanwhile finds the recheck's claim.
        assert coalescing.claim_pending(study.pk) is None
        # The lock was renewed by then: its run is alive and will enqueue what is left.
        tasks.recompute_study(*recheck["args"], **recheck["kwargs"])
        assert len(sent) == 1
    assert StudyAgreement.objects.get(study=study).runs == runs
    # The run has ended: a task now runs the study, then finds nothing left to do.
    tasks.recompute_study(study.pk)
    agreement = StudyAgreement.objects.get(study=study)
    assert (agreement.runs, agreement.computed) == (runs + 1, 100)
    assert sent == [recheck]
    # A message of a dead worker delivered again once the result is current does nothing.
    tasks.recompute_study(study.pk, claim="from-a-dead-worker")
    assert StudyAgreement.objects.get(study=study).runs == runs + 1
