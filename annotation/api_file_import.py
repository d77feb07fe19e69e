"""What the two file-import endpoints share (the offline worksheet by key label, ratings by
system name): a job's answer and its schema, and the refusal of a file too large. Each job
kind's own status (``file_import_jobs``) is read by its module; this writes it out."""

from drf_spectacular.utils import inline_serializer
from rest_framework import exceptions, serializers

from core.api_jobs import job_url
from jobs.models import Job

from .worksheets import MAX_BYTES, WorksheetError

FILENAME_CHARS = 200


def check_flag(data) -> bool:
    """The upload's ``check`` field, read as the schema's boolean (true, yes, 1, on, ...;
    absent or empty: false). Anything else is refused: a check spelt otherwise must not
    import the file for real."""
    value = data.get("check", "")
    if value is None or value == "":
        return False
    try:
        return serializers.BooleanField().to_internal_value(value)
    except exceptions.ValidationError:
        raise exceptions.ValidationError(
            ["check: true or false (true checks the file only)."]
        ) from None


class FileImportProblemSerializer(serializers.Serializer):
    row = serializers.IntegerField(allow_null=True)
    column = serializers.CharField(allow_null=True)
    message = serializers.CharField()


def file_import_job_serializer(name: str, *, result: str):
    """The schema of a file-import job's answer; ``result`` names what a done job counts."""
    return inline_serializer(
        name,
        {
            "job": serializers.CharField(help_text="this job's URL: GET it for its progress"),
            "state": serializers.ChoiceField(choices=Job.State.values),
            "stage": serializers.CharField(help_text="checking or writing, while it runs"),
            "done": serializers.IntegerField(),
            "total": serializers.IntegerField(),
            "check_only": serializers.BooleanField(),
            "result": serializers.DictField(help_text=f"Once done: {result}."),
            "problems": FileImportProblemSerializer(many=True),
        },
    )


def file_import_job_body(
    request, *, url_name: str, slug: str, job, status: dict, check_only: bool
) -> dict:
    """A file-import job's answer, from its kind's status: the result once done, without
    what only the job itself keeps (its problems, apart; the check it imports)."""
    result = {
        k: v for k, v in status["result"].items() if k not in ("problems", "check_job", "dry_run")
    }
    return {
        "job": job_url(request, url_name, slug, job.uuid),
        **{key: status[key] for key in ("state", "stage", "done", "total", "problems")},
        "check_only": check_only,
        "result": result if status["state"] == Job.State.DONE else {},
    }


def file_too_large(upload) -> None:
    """Refuse an upload over the imports' size bound, before reading it."""
    if upload.size > MAX_BYTES:
        raise exceptions.ValidationError(
            [f"file: the file is larger than {MAX_BYTES // 2**20} MB."]
        )


def refused(error: WorksheetError) -> exceptions.ValidationError:
    """A file's problems, each a line of the API's error."""
    return exceptions.ValidationError([str(problem) for problem in error.problems])
