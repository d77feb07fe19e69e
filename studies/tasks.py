"""Celery tasks of the studies app: thin adapters that take ids and call a service."""

from celery import shared_task

from .services import case_upload_import_run
from .services.erasure import identities_purge

# A file of 100,000 cases takes about a minute to import on a small machine; the limits
# stop a stuck import, whose transaction is then undone.
CASE_IMPORT_SOFT_LIMIT = 30 * 60


@shared_task(
    acks_late=True,
    ignore_result=True,
    soft_time_limit=CASE_IMPORT_SOFT_LIMIT,
    time_limit=CASE_IMPORT_SOFT_LIMIT + 60,
)
def import_case_upload(upload_id: int, actor_id: int | None = None) -> None:
    case_upload_import_run(upload_id=upload_id, actor_id=actor_id)


@shared_task(acks_late=True, ignore_result=True, soft_time_limit=30 * 60, time_limit=31 * 60)
def purge_identities() -> None:
    """Beat's daily run: erase the identities whose retention period has ended."""
    identities_purge()
