"""``/healthz``: is the database reachable, and the Celery broker? For the container's health
check and for monitoring; no sign-in, and nothing about the studies."""

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
def healthz(request):
    """200 with every check "ok", or 503 naming what is down."""
    checks = {"database": database_reachable(), "broker": broker_reachable()}
    return JsonResponse(
        {name: "ok" if up else "down" for name, up in checks.items()},
        status=200 if all(checks.values()) else 503,
    )
