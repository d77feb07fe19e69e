"""Celery tasks: thin adapters that take ids and call the agreement services."""

import ctypes
import functools
import logging
import time

from celery import shared_task
from celery.signals import task_postrun, worker_init

from jobs.runner import job_schedule

from . import coalescing, selectors
from .analysis import jobs as analysis_jobs
from .services import recompute

logger = logging.getLogger(__name__)


@worker_init.connect
def _statistics_warm(**kwargs):
    """In a worker's main process, before it forks its pool: load scipy and run the
    statistics once, so that every pool process (a replacement too) starts with them and
    no rater's recompute pays the import (issue 45: about a second of CPU, more on a busy
    machine). Done before the fork, the pool processes share those pages: warming each pool
    process instead cost about 120 MB more PSS at concurrency 2 (benchmarks/worker.py). The
    web, which never loads scipy, imports this module only to queue a task."""
    from .stats.warm import statistics_warm

    began = time.process_time()
    statistics_warm()
    logger.info("Statistics loaded and warmed in %.2f s of CPU", time.process_time() - began)


@functools.cache
def _malloc_trim():
    """glibc's ``malloc_trim``, or None where the C library is another (musl, macOS)."""
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


@task_postrun.connect
def _memory_returned(**kwargs):
    """After each task, hand the heap it freed back to the system. A recompute's arrays and
    rows are freed when it ends (nothing is kept between runs: the traced Python memory is
    the same after the 2nd and the 8th run), but the C allocator keeps the pages of the
    largest run so far: a pool process stayed some 50 MB above its start after one run
    from scratch at 6,000 ratings, more at larger studies (benchmarks/worker.py)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@shared_task(acks_late=True, ignore_result=True)
def recompute_study(study_id: int, claim: str | None = None, recheck: bool = False) -> None:
    """Recompute the study unless its result is current or another run holds it.

    ``claim`` is the pending claim this task was enqueued under; ``recheck`` marks the one
    follow-up of a task that found the study running.
    """
    logger.info("Agreement task for study %s picked up", study_id)
    # From here on a new request may enqueue one more run: it will see newer data.
    coalescing.release_pending(study_id, claim)
    if not selectors.agreement_awaits_run(study_id=study_id):
        # E.g. a message redelivered after its worker died, once another run caught up.
        logger.info("Agreement task for study %s: the result is current", study_id)
        return
    stage = None
    with coalescing.running(study_id) as acquired:
        if acquired:
            stage = recompute.agreement_point_stage(study_id=study_id)
    if acquired:
        # The intervals are computed after the lock is freed, so that a newer request gets
        # its point estimates without waiting for them; if a newer run stores a result
        # meanwhile, these intervals give way to it.
        if stage is not None:
            recompute.agreement_interval_stage(stage=stage)
        # Requests that came during the run may have had their tasks give way to it: look
        # once more now that the lock is free, and enqueue one run if anything is left.
        recompute.agreement_enqueue_if_stale(study_id=study_id)
        return
    if recheck:
        # The lock was renewed since the first look, so its run is alive and will enqueue
        # what is left when it ends: no chain of re-queues.
        logger.info("Agreement task for study %s: a live run holds the study", study_id)
        return
    # Another run holds the study. Look once more just after its lock would have expired
    # without a heartbeat, in case that run's process died.
    countdown = coalescing.running_seconds_left(study_id) + 1
    new_claim = coalescing.claim_pending(study_id)
    if new_claim:
        logger.info("Agreement task for study %s: a run holds the study; one more look", study_id)
        job_schedule(
            recompute_study,
            args=[study_id],
            kwargs={"claim": new_claim, "recheck": True},
            countdown=countdown,
            on_unreachable=lambda: coalescing.release_pending(study_id, new_claim),
        )


@shared_task(ignore_result=True)
def sweep_stale_studies() -> None:
    recompute.agreement_sweep()


@shared_task(acks_late=True, ignore_result=True, soft_time_limit=10 * 60, time_limit=11 * 60)
def compute_analysis(job_id: int) -> None:
    analysis_jobs.analysis_job_run(job_id=job_id)
