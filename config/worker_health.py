"""Is a Celery worker consuming? Its heartbeat in the broker, and the queue's length.

A worker process sets a key in the broker's Redis each time it begins a task, with a
lifetime of one sweep interval (``AGREEMENT_SWEEP_SECONDS``); one key per queue, when the
work is split into queues (``RECOMPUTE_QUEUE``, ``JOBS_QUEUE``). Beat queues a sweep to the
recompute queue and a heartbeat task to the jobs queue every interval, so a working worker
renews its queue's key at least that often; the key's lifetime runs on Redis's clock, so no
two hosts' clocks are compared. The workers are "stalled" when work is queued in a queue
and none of its workers began anything for longer than the interval: the worker that died
with Redis, or one whose processes all hang. Asking costs one round trip (a pipeline).
"""

import logging
import time
from typing import TYPE_CHECKING

from django.conf import settings

if TYPE_CHECKING:
    import redis

logger = logging.getLogger(__name__)

CONSUMED_KEY = "concord:worker:consumed"
# A health check must answer quickly even when a service hangs.
TIMEOUT_SECONDS = 2

_clients: "dict[str, redis.Redis]" = {}


def _client() -> "redis.Redis":
    """One client (and connection pool) per broker URL and process. The Redis client is
    imported here, not at the top: the URL configuration imports this module, and a web
    process that is never asked its readiness (`make run`'s) need not load it."""
    import redis

    url = settings.CELERY_BROKER_URL
    if url not in _clients:
        _clients[url] = redis.Redis.from_url(
            url,
            socket_connect_timeout=TIMEOUT_SECONDS,
            socket_timeout=TIMEOUT_SECONDS,
            retry_on_timeout=False,
        )
    return _clients[url]


def consumed_key(queue: str | None = None) -> str:
    """The heartbeat of the workers that consume ``queue`` (the default queue's when None).
    Each queue has its own (the scaled-out shape's recompute and jobs workers), so a dead
    worker is not hidden by another queue's live one."""
    if not queue or queue == settings.CELERY_TASK_DEFAULT_QUEUE:
        return CONSUMED_KEY
    return f"{CONSUMED_KEY}:{queue}"


def worker_consumed(queue: str | None = None) -> None:
    """Record that a worker of this deployment began a task, from ``queue`` (called on
    ``task_prerun``): in the deployment's key, and in ``queue``'s own if it has one."""
    from redis import RedisError

    keys = dict.fromkeys([CONSUMED_KEY, consumed_key(queue)])
    try:
        with _client().pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.set(key, int(time.time()), ex=settings.AGREEMENT_SWEEP_SECONDS)
            pipe.execute()
    except RedisError:
        # The task runs whether or not the heartbeat is stored; readiness is only a report.
        logger.warning("Could not record the worker's heartbeat", exc_info=True)


def queue_states() -> tuple[str, dict[str, str]]:
    """(broker, {queue: state}): the broker "ok" or "down"; each queue of this deployment
    (``task_queues``, the default one first) "ok", "stalled" (work is queued in it and none
    of its workers began anything for longer than the sweep interval) or "unknown" (no
    broker)."""
    from redis import RedisError

    from config.celery import task_queues

    queues = task_queues()
    try:
        with _client().pipeline(transaction=False) as pipe:
            for queue in queues:
                pipe.llen(queue)
                pipe.exists(consumed_key(queue))
            answers = pipe.execute()
    except RedisError:
        logger.warning("Health check: the broker is unreachable", exc_info=True)
        return "down", dict.fromkeys(queues, "unknown")
    states = {
        queue: "stalled" if queued and not consumed else "ok"
        for queue, queued, consumed in zip(queues, answers[::2], answers[1::2], strict=True)
    }
    return "ok", states


def workers_summed(broker: str, queues: dict[str, str]) -> str:
    """The workers in one word: "stalled" if some queue is, "unknown" without a broker,
    else "ok"."""
    if broker != "ok":
        return "unknown"
    return "stalled" if "stalled" in queues.values() else "ok"


def worker_state() -> tuple[str, str]:
    """(broker, workers): ``queue_states`` summed up by ``workers_summed``."""
    broker, queues = queue_states()
    return broker, workers_summed(broker, queues)
