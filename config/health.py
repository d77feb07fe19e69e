"""Health checks, with no sign-in and nothing about the studies.

``/healthz/live`` (liveness): the process answers; for the container's health check, so an
orchestrator restarts only a web node that hangs. ``/healthz/ready`` (readiness, also at
``/healthz``): the database is reachable, so the node can serve pages; for a load balancer
and for monitoring. The broker's and the workers' states are reported there but do not fail
it: without Redis or a worker raters still rate (the statistics catch up through beat's
sweep), so neither outage must take every web node out of service. The worker is "stalled"
when work is queued and no worker began a task for longer than the sweep interval
(config/worker_health.py).
"""

import logging

from django.db import Error as DatabaseError
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from config.worker_health import worker_state

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
    """200 when the database answers, else 503; the broker's and the workers' states
    reported beside it."""
    database = database_reachable()
    broker, worker = worker_state()
    return JsonResponse(
        {"database": "ok" if database else "down", "broker": broker, "worker": worker},
        status=200 if database else 503,
    )
