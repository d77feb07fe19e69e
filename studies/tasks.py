"""Celery tasks of the studies app: thin adapters that take ids and call a service."""

from celery import shared_task

from .services import case_upload_import_run, webhooks
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


# Webhooks (studies.services.webhooks): one attempt per task; a failed one schedules the
# next itself. Short limits: an attempt is one request with a timeout of a few seconds.
@shared_task(acks_late=True, ignore_result=True, soft_time_limit=60, time_limit=90)
def webhook_deliver(delivery_id: int) -> None:
    webhooks.webhook_delivery_attempt(delivery_id=delivery_id)


@shared_task(acks_late=True, ignore_result=True, soft_time_limit=60, time_limit=90)
def webhook_milestones_check(study_id: int) -> None:
    webhooks.webhook_milestones_announce(study_id=study_id)


@shared_task(ignore_result=True, soft_time_limit=60, time_limit=90)
def webhook_deliveries_sweep() -> None:
    """Beat's run: send the deliveries whose message was lost."""
    webhooks.webhook_deliveries_sweep()
