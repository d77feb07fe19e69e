"""Health checks, with no sign-in and nothing about the studies.

``/healthz/live`` (liveness): the process answers; for the container's health check, so an
orchestrator restarts only a web node that hangs. ``/healthz/ready`` (readiness, also at
``/healthz``): the database is reachable, so the node can serve pages; for a load balancer
and for monitoring. The broker's state is reported there but does not fail it: without
Redis raters still rate (the statistics catch up through beat's sweep), so a broker outage
must not take every web node out of service.
"""

import logging

import kombu
from django.conf import settings
from django.db import Error as DatabaseError
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

logger = logging.getLogger(__name__)

# A health check must answer quickly even when a service hangs.
TIMEOUT_SECONDS = 2


def database_reachable() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        # Reporting the failure is this check's whole purpose: it is not a 500.
        logger.warning("Health check: the database is unreachable", exc_info=True)
        return False
    return True


def broker_reachable() -> bool:
    broker = kombu.Connection(
        settings.CELERY_BROKER_URL,
        connect_timeout=TIMEOUT_SECONDS,
        transport_options={
            **settings.CELERY_BROKER_TRANSPORT_OPTIONS,
            "socket_connect_timeout": TIMEOUT_SECONDS,
            "socket_timeout": TIMEOUT_SECONDS,
        },
    )
    try:
        broker.ensure_connection(max_retries=0, timeout=TIMEOUT_SECONDS)
    except (kombu.exceptions.KombuError, OSError):
        logger.warning("Health check: the broker is unreachable", exc_info=True)
        return False
    finally:
        broker.release()
    return True


@never_cache
@require_safe
def healthz_live(request):
    """200 whenever the process can answer at all."""
    return JsonResponse({"status": "ok"})


@never_cache
@require_safe
def healthz_ready(request):
    """200 when the database answers, else 503; the broker's state reported beside it."""
    database, broker = database_reachable(), broker_reachable()
    return JsonResponse(
        {"database": "ok" if database else "down", "broker": "ok" if broker else "down"},
        status=200 if database else 503,
    )
