"""Job rows written directly in a job module and in jobs/files.py (issue 37)."""
from django.db import connection
from django.utils import timezone

from jobs.models import Job


def unreachable(job):
    Job.objects.filter(pk=job.pk).update(state=Job.State.FAILED, finished_at=timezone.now())  # flagged: writes-outside-services
    Job.objects.filter(pk=job.pk).update(**{"error": "x"})  # flagged: writes-outside-services
    with connection.cursor() as cursor:  # flagged: writes-raw-sql
        cursor.execute("UPDATE jobs_job SET state = 'failed'")  # flagged: writes-outside-services
