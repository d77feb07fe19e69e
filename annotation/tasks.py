"""Celery tasks of the annotation app: thin adapters that take ids and call a service."""

from celery import shared_task

from .assignment_jobs import assignment_job_run
from .export_jobs import export_job_run
from .ratings_import_jobs import ratings_import_job_run
from .services.participants import participants_time_out
from .worksheet_jobs import worksheet_job_run

# Assign at 10,000 cases takes a few seconds; the limits stop a stuck run, whose
# transaction is then undone.
ASSIGN_SOFT_LIMIT = 15 * 60


@shared_task(
    acks_late=True,
    ignore_result=True,
    soft_time_limit=ASSIGN_SOFT_LIMIT,
    time_limit=ASSIGN_SOFT_LIMIT + 60,
)
def assign_study(job_id: int) -> None:
    assignment_job_run(job_id=job_id)


# A worksheet at the 20,000-row limit is checked and recorded in well under a minute.
WORKSHEET_SOFT_LIMIT = 10 * 60


@shared_task(
    acks_late=True,
    ignore_result=True,
    soft_time_limit=WORKSHEET_SOFT_LIMIT,
    time_limit=WORKSHEET_SOFT_LIMIT + 60,
)
def import_worksheet(job_id: int) -> None:
    worksheet_job_run(job_id=job_id)


@shared_task(
    acks_late=True,
    ignore_result=True,
    soft_time_limit=WORKSHEET_SOFT_LIMIT,
    time_limit=WORKSHEET_SOFT_LIMIT + 60,
)
def import_ratings(job_id: int) -> None:
    ratings_import_job_run(job_id=job_id)


# The Excel worksheet of 100,000 ratings takes about a minute on a loaded machine.
EXPORT_SOFT_LIMIT = 30 * 60


@shared_task(
    acks_late=True,
    ignore_result=True,
    soft_time_limit=EXPORT_SOFT_LIMIT,
    time_limit=EXPORT_SOFT_LIMIT + 60,
)
def export_study(job_id: int) -> None:
    export_job_run(job_id=job_id)


@shared_task(ignore_result=True, soft_time_limit=5 * 60, time_limit=6 * 60)
def participants_time_out_sweep() -> None:
    """Beat: release the cases of crowd participants idle past their link's time-out."""
    participants_time_out()
