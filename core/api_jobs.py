"""What the HTTP API's endpoints of long work (a job of the runner) share: a job's state and
progress as they answer it, its URL, and the 202 that says it runs. See docs/api.md."""

from django.urls import reverse
from rest_framework import serializers, status
from rest_framework.response import Response

# A job's progress beside its state (whose field each endpoint describes), as ``job_progress``
# answers it.
JOB_PROGRESS_FIELDS: dict[str, serializers.Field] = {
    "stage": serializers.CharField(),
    "done": serializers.IntegerField(),
    "total": serializers.IntegerField(),
    "message": serializers.CharField(),
    "error": serializers.CharField(),
}


def job_progress(job, job_status: dict | None) -> dict:
    """The job's state and progress: the runner's status (``jobs.services.job_status``)
    where it says, else the job's row (its state) and nothing done."""
    job_status = job_status or {}
    return {
        key: job_status.get(key) or default
        for key, default in (
            ("state", job.state),
            ("stage", ""),
            ("done", 0),
            ("total", 0),
            ("message", ""),
            ("error", ""),
        )
    }


def job_url(request, name: str, *args) -> str:
    """The absolute URL of the API's endpoint ``name`` (a job's, to GET for its progress)."""
    return request.build_absolute_uri(reverse(name, args=args))


def job_accepted(body: dict, location: str) -> Response:
    """202: the job runs; ``location`` (also in Location) is where to GET its progress."""
    return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": location})
