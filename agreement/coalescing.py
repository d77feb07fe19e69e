"""Keeps recomputes of one study to at most one running and one pending.

A request claims the study's "pending" key in Redis before it enqueues a task; while the
key is held, later requests only bump the study's ``requested`` counter, which the pending
run will read when it starts. The claim holds a token that travels with the task, so only
that task releases it (a message redelivered from a dead worker cannot free a newer claim).

The running run holds a lock, so a second worker cannot run the same study at once. The
lock lives only a few seconds unless a heartbeat thread of the run renews it: a run whose
process dies loses its lock within ``RUNNING_SECONDS``, not after the run's whole time limit.
Without a broker (``JOBS_RUN`` "thread" or "inline": the embedded default, the tests) the
runs are this process's own, and the same guarantees are kept in its memory: the claim is
a token in a dict, the lock a per-study entry, and a run whose thread ends frees it.
"""

import logging
import secrets
import threading
import time
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING

from django.conf import settings

if TYPE_CHECKING:
    import redis

logger = logging.getLogger(__name__)

# A claim whose task was lost with its worker blocks new enqueues (and the sweep) this long,
# so it is short: the statistics must be current within a minute of a killed worker (the
# chaos run, benchmarks/chaos.py). A claim that lapses while its task still waits in a busy
# queue costs one more run at most: the running lock keeps runs of a study one at a time,
# and the request counter keeps a stale result from overwriting a fresh one.
PENDING_SECONDS = 20
# A dead run's lock is gone at most this long after the run's last heartbeat.
RUNNING_SECONDS = 8
HEARTBEAT_SECONDS = 2

# Delete the key only if it still holds this claim's token.
_RELEASE_OWN = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""


def _in_process() -> bool:
    return settings.JOBS_RUN != "celery"


# The in-process claims (study -> token, when made) and running studies, under one lock. A
# claim lapses as the Redis one does: one whose run was never started (its transaction
# rolled back before the thread was started) blocks new runs no longer than that.
_local_lock = threading.Lock()
_local_claims: dict[int, tuple[str, float]] = {}
_local_running: set[int] = set()


def _client() -> "redis.Redis":
    # Imported here, not at the top: without a broker (`make run`) Redis is never asked.
    import redis

    # Short timeouts: a rater's submit must not wait for a broker that is down.
    return redis.Redis.from_url(
        settings.REDIS_URL, socket_connect_timeout=0.5, socket_timeout=1.0, retry_on_timeout=False
    )


def _pending_key(study_id: int) -> str:
    return f"concord:agreement:{study_id}:pending"


def _running_key(study_id: int) -> str:
    return f"concord:agreement:{study_id}:running"


def claim_pending(study_id: int) -> str | None:
    """The claim's token when this caller should enqueue a run (none is pending), else None."""
    token = secrets.token_hex(8)
    if _in_process():
        now = time.monotonic()
        with _local_lock:
            held = _local_claims.get(study_id)
            if held is not None and now - held[1] < PENDING_SECONDS:
                return None
            _local_claims[study_id] = (token, now)
        return token
    if _client().set(_pending_key(study_id), token, nx=True, ex=PENDING_SECONDS):
        return token
    return None


def release_pending(study_id: int, claim: str | None) -> None:
    """Free the study's pending claim if it is still ``claim``; a None claim (a task sent
    before claims carried tokens) frees whatever claim is held."""
    if _in_process():
        with _local_lock:
            if claim is None or _local_claims.get(study_id, ("",))[0] == claim:
                _local_claims.pop(study_id, None)
        return
    if claim is None:
        _client().delete(_pending_key(study_id))
    else:
        _client().eval(_RELEASE_OWN, 1, _pending_key(study_id), claim)


def running_seconds_left(study_id: int) -> float:
    """How long the study's running lock lives unless it is renewed; 0 when none is held."""
    if _in_process():
        return 0.0  # a thread's run cannot die without its process: nothing to wait out
    milliseconds = _client().pttl(_running_key(study_id))
    return max(milliseconds, 0) / 1000


@contextmanager
def running(study_id: int):
    """Yield True when this run holds the study's running lock, False if another does.

    While the block runs, a heartbeat thread renews the lock; when the process dies the
    heartbeat stops with it and the lock expires.
    """
    if _in_process():
        with _local_lock:
            acquired = study_id not in _local_running
            _local_running.add(study_id)
        try:
            yield acquired
        finally:
            if acquired:
                with _local_lock:
                    _local_running.discard(study_id)
        return
    from redis.exceptions import LockError

    # thread_local=False: the heartbeat thread must see the token this thread acquired.
    lock = _client().lock(
        _running_key(study_id), timeout=RUNNING_SECONDS, blocking=False, thread_local=False
    )
    if not lock.acquire(blocking=False):
        yield False
        return
    stop = threading.Event()
    heartbeat = threading.Thread(
        target=_renew, args=(lock, stop, study_id), name=f"agreement-lock-{study_id}", daemon=True
    )
    heartbeat.start()
    try:
        yield True
    finally:
        stop.set()
        heartbeat.join()
        # The lock may have been lost (e.g. Redis restarted): nothing to release then.
        with suppress(LockError):
            lock.release()


def _renew(lock, stop: threading.Event, study_id: int) -> None:
    from redis.exceptions import LockNotOwnedError, RedisError

    while not stop.wait(HEARTBEAT_SECONDS):
        try:
            lock.reacquire()
        except LockNotOwnedError:
            # Another run may start now; the counter check keeps its result and ours apart.
            logger.warning("Agreement run for study %s lost its running lock", study_id)
            return
        except RedisError:
            logger.warning("Could not renew the running lock of study %s; retrying", study_id)
