"""Celery tasks of the job runner: thin adapters."""

from celery import shared_task

from .services import job_files_expire


@shared_task(ignore_result=True)
def job_files_expire_task() -> None:
    job_files_expire()
