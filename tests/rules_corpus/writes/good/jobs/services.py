from jobs.models import Job


def job_fail(*, job, error):
    Job.objects.filter(pk=job.pk).update(state=Job.State.FAILED, error=error)
