"""Health checks, with no sign-in and nothing about the studies.

``/healthz/live`` (liveness): the process answers; for the container's health check, so an
orchestrator restarts only a web node that hangs. ``/healthz/ready`` (readiness, also at
``/healthz``): the database is reachable, so the node can serve pages; for a load balancer
and for monitoring. The broker's and the workers' states are reported there but do not fail
it: without Redis or a worker raters still rate (the statistics catch up through beat's
sweep), so neither outage must take every web node out of service. Each worker queue is
reported on its own (``"queues"``: the recompute and jobs queues of the scaled-out shape, or
the one default queue), "stalled" when work is queued in it and none of its workers began a
task for longer than the sweep interval (config/worker_health.py); ``"worker"`` sums them
up ("stalled" if any queue is).
"""

import logging

from django.db import Error as DatabaseError
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from config.worker_health import queue_states, workers_summed

logger = logging.getLogger(__name__)


def database_reachable() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        # Reporting the failure is this check's whole purpose: it is not a 500.
        logger.warning("Health check: the database is unreachable", exc_info=True)
        return False
    return True


@never_cache
@require_safe
def healthz_live(request):
    """200 whenever the process can answer at all."""
    return JsonResponse({"status": "ok"})


@never_cache
@require_safe
def healthz_ready(request):
    """200 when the database answers, else 503; the broker's and each worker queue's
    states reported beside it."""
    database = database_reachable()
    broker, queues = queue_states()
    return JsonResponse(
        {
            "database": "ok" if database else "down",
            "broker": broker,
            "worker": workers_summed(broker, queues),
            "queues": queues,
        },
        status=200 if database else 503,
    )
