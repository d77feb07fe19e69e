"""Celery tasks: thin adapters that take ids and call the agreement services."""

import logging

from celery import shared_task

from . import coalescing, services

logger = logging.getLogger(__name__)


@shared_task(acks_late=True, ignore_result=True)
def recompute_study(study_id: int) -> None:
    logger.info("Agreement task for study %s picked up", study_id)
    # From here on a new request may enqueue one more run: it will see newer data.
    coalescing.release_pending(study_id)
    with coalescing.running(study_id) as acquired:
        if acquired:
            services.agreement_recompute(study_id=study_id)
            return
    # Another worker is running this study; come back once as the pending run.
    if coalescing.claim_pending(study_id):
        recompute_study.apply_async(args=[study_id], countdown=2)


@shared_task(ignore_result=True)
def sweep_stale_studies() -> None:
    services.agreement_sweep()
