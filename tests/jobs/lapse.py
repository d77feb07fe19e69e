"""What the tests do to a job whose process died: nothing hears from it any more."""

from datetime import timedelta

from django.core.cache import cache
from django.db.models.functions import Now

from jobs import services
from jobs.models import Job


def job_heard_from_no_more(job: Job) -> None:
    """Its progress gone from the cache and its heartbeat older than the timeout."""
    cache.delete(services.progress_key(job))
    lapsed = Now() - timedelta(seconds=services.PROGRESS_TIMEOUT + 1)
    Job.objects.filter(pk=job.pk).update(heartbeat_at=lapsed)
