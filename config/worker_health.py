"""Is a Celery worker consuming? Its heartbeat in the broker, and the queue's length.

A worker process sets a key in the broker's Redis each time it begins a task, with a
lifetime of one sweep interval (``AGREEMENT_SWEEP_SECONDS``). Beat queues a sweep every
interval, so a working worker renews the key at least that often; the key's lifetime runs
on Redis's clock, so no two hosts' clocks are compared. A worker is "stalled" when work is
queued and no worker began anything for longer than the interval: the worker that died
with Redis, or one whose processes all hang. Asking costs one round trip (a pipeline).
"""

import logging
import time

import redis
from django.conf import settings

logger = logging.getLogger(__name__)

CONSUMED_KEY = "concord:worker:consumed"
# A health check must answer quickly even when a service hangs.
TIMEOUT_SECONDS = 2

_clients: dict[str, redis.Redis] = {}


def _client() -> redis.Redis:
    """One client (and connection pool) per broker URL and process."""
    url = settings.CELERY_BROKER_URL
    if url not in _clients:
        _clients[url] = redis.Redis.from_url(
            url,
            socket_connect_timeout=TIMEOUT_SECONDS,
            socket_timeout=TIMEOUT_SECONDS,
            retry_on_timeout=False,
        )
    return _clients[url]


def worker_consumed() -> None:
    """Record that a worker of this deployment began a task (called on ``task_prerun``)."""
    try:
        _client().set(CONSUMED_KEY, int(time.time()), ex=settings.AGREEMENT_SWEEP_SECONDS)
    except redis.RedisError:
        # The task runs whether or not the heartbeat is stored; readiness is only a report.
        logger.warning("Could not record the worker's heartbeat", exc_info=True)


def worker_state() -> tuple[str, str]:
    """(broker, worker): the broker "ok" or "down"; the worker "ok", "stalled" (work is
    queued and nothing began for longer than the sweep interval) or "unknown" (no broker)."""
    try:
        with _client().pipeline(transaction=False) as pipe:
            pipe.llen(settings.CELERY_TASK_DEFAULT_QUEUE)
            pipe.exists(CONSUMED_KEY)
            queued, consumed = pipe.execute()
    except redis.RedisError:
        logger.warning("Health check: the broker is unreachable", exc_info=True)
        return "down", "unknown"
    return "ok", "stalled" if queued and not consumed else "ok"
