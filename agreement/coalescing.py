"""Keeps recomputes of one study to at most one running and one pending.

A request claims the study's "pending" key in Redis before it enqueues a task; while the
key is held, later requests only bump the study's ``requested`` counter, which the pending
run will read when it starts. The running run holds a lock, so a second worker cannot run
the same study at once. With in-process tasks (the embedded default) there is no Redis and
nothing to coalesce.
"""

from contextlib import contextmanager, suppress

import redis
from django.conf import settings

PENDING_SECONDS = 120
RUNNING_SECONDS = 600


def _in_process() -> bool:
    return bool(settings.CELERY_TASK_ALWAYS_EAGER)


def _client() -> redis.Redis:
    # Short timeouts: a rater's submit must not wait for a broker that is down.
    return redis.Redis.from_url(
        settings.REDIS_URL, socket_connect_timeout=0.5, socket_timeout=1.0, retry_on_timeout=False
    )


def _pending_key(study_id: int) -> str:
    return f"concord:agreement:{study_id}:pending"


def _running_key(study_id: int) -> str:
    return f"concord:agreement:{study_id}:running"


def claim_pending(study_id: int) -> bool:
    """True when this caller should enqueue a run (no run is pending yet)."""
    if _in_process():
        return True
    return bool(_client().set(_pending_key(study_id), "1", nx=True, ex=PENDING_SECONDS))


def release_pending(study_id: int) -> None:
    if not _in_process():
        _client().delete(_pending_key(study_id))


@contextmanager
def running(study_id: int):
    """Yield True when this run holds the study's running lock, False if another does."""
    if _in_process():
        yield True
        return
    lock = _client().lock(_running_key(study_id), timeout=RUNNING_SECONDS, blocking=False)
    acquired = lock.acquire(blocking=False)
    try:
        yield acquired
    finally:
        if acquired:
            # The lock may have expired during a very long run: nothing to release then.
            with suppress(redis.exceptions.LockError):
                lock.release()
