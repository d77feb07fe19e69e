from jobs.models import Job


def forget(pk, stored):
    return Job.objects.filter(pk=pk, file_path=stored).update(file_path="")  # flagged: writes-outside-services
