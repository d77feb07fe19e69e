"""A large export prepared as a job of the job runner (``jobs``): its file written where
``JOB_FILES_ROOT`` says (``jobs.files``), then downloaded from the results page or the API.

The heavy exports (the worksheet as CSV and as Excel, the long table, and the report
bundle, which ``agreement`` registers in ``export_kinds``, as this app does not import it)
can take longer than a request may at 100,000 ratings. ``export_job_start`` starts one, or
returns the study's job of that export that is running already (two presses start one
job). The file is the direct export's, byte for byte: the same writer, the same download
name. Which way the results page offers an export is ``export_responses.export_by_job``:
a job from ``EXPORT_JOB_FROM`` submitted ratings on; the direct download stays for every
size, but for the whole Excel worksheet, which is then a job's only (docs/exports.md).
"""

from collections.abc import Callable
from typing import IO

from django.db import IntegrityError
from django.utils import timezone

from jobs.files import job_file_expires_at
from jobs.models import Job
from jobs.runner import job_schedule
from jobs.services import (
    JobFailed,
    job_active,
    job_create,
    job_execute,
    job_fail,
    job_file_path,
    job_file_write,
    job_files_expire,
    job_status,
)
from studies.models import Study

from . import exports
from .export_kinds import EXPORT_KINDS, ExportKind, Writer, export_kind_register
from .export_responses import CONTENT_TYPES

UNREACHABLE = (
    "The export could not be started (the task queue is unreachable). Try again in a moment."
)
EXPIRED = (
    "The prepared file has been removed (it expires, or a newer one replaced it). Press "
    "Prepare again."
)
# Progress is reported once per this many bytes written.
PROGRESS_BYTES = 1024 * 1024


class _Counted:
    """A binary file that reports how much has been written to it, now and then."""

    def __init__(self, file: IO[bytes], written: Callable[[int], None]):
        self.file, self.written, self.size, self.said = file, written, 0, 0

    def write(self, data) -> int:
        self.size += len(data)
        if self.size - self.said >= PROGRESS_BYTES:
            self.said = self.size
            self.written(self.size)
        return self.file.write(data)


def _text_writer(fmt: str) -> Writer:
    def write(study: Study, file: IO[bytes], written: Callable[[int], None]) -> None:
        counted = _Counted(file, written)
        for chunk in exports.export_text(study=study, fmt=fmt):
            counted.write(chunk.encode("utf-8"))

    return write


def _xlsx_write(study: Study, file: IO[bytes], written: Callable[[int], None]) -> None:
    # Written as ``export_write`` writes it (the zip seeks back: the file itself, not a
    # counting wrapper); its rows are counted instead, as bytes are not known until the end.
    from .export_xlsx import xlsx_write

    def rows():
        for number, row in enumerate(exports.worksheet_rows(study=study), 1):
            if not number % 10_000:
                written(number)
            yield row

    xlsx_write(rows(), file)


# The annotation app's own, registered when this module is first imported (the report
# bundle is registered by ``agreement`` at start-up).
for _fmt, _label, _writer in (
    (exports.WORKSHEET_CSV, "Worksheet (CSV)", _text_writer(exports.WORKSHEET_CSV)),
    (exports.WORKSHEET_XLSX, "Worksheet (Excel)", _xlsx_write),
    (exports.LONG_CSV, "Long table (CSV)", _text_writer(exports.LONG_CSV)),
):
    export_kind_register(
        ExportKind(
            key=_fmt,
            label=_label,
            filename=lambda study, fmt=_fmt: exports.export_filename(study=study, fmt=fmt),
            content_type=CONTENT_TYPES[_fmt],
            write=_writer,
        )
    )


def export_job_of(*, study: Study, job_uuid) -> Job | None:
    """The study's export job with this UUID; None for another study's."""
    return Job.objects.filter(kind=Job.Kind.EXPORT, study_id=study.pk, uuid=job_uuid).first()


def export_jobs_ready(*, study: Study) -> list[tuple[ExportKind, Job]]:
    """The study's latest prepared file of each export that has one, in ``EXPORT_KINDS``
    order: one query."""
    latest: dict[str, Job] = {}
    for job in Job.objects.filter(
        kind=Job.Kind.EXPORT, study_id=study.pk, state=Job.State.DONE
    ).exclude(file_path=""):
        latest.setdefault(job.name, job)
    now = timezone.now()
    return [
        (kind, latest[key])
        for key, kind in EXPORT_KINDS.items()
        if key in latest and (job_file_expires_at(job=latest[key]) or now) > now
    ]


def export_job_start(*, study: Study, key: str, actor) -> Job:
    """Start preparing the export ``key`` (one of ``EXPORT_KINDS``), or return the study's
    job of it that is running already. Scheduled where ``JOBS_RUN`` says: inline (the
    tests) it has ended on return."""
    if key not in EXPORT_KINDS:
        raise ValueError(f"No export {key!r} is prepared as a job.")
    job_files_expire()
    for _ in range(3):
        running = job_active(kind=Job.Kind.EXPORT, study_id=study.pk, name=key)
        if running is not None:
            return running
        job = job_create(kind=Job.Kind.EXPORT, study_id=study.pk, requested_by=actor, name=key)
        if job is not None:
            break
        # Another request started one a moment ago: show that one.
    else:
        raise IntegrityError("Could not start an export job.")
    _schedule(job)
    job.refresh_from_db()
    return job


def export_job_run(*, job_id: int) -> None:
    """The job: the export written to its file, then how it ended."""

    def work(job: Job, report) -> dict:
        study = Study.objects.filter(pk=job.study_id).first()
        kind = EXPORT_KINDS.get(job.name)
        if study is None or kind is None:
            raise JobFailed("This export can no longer be prepared.")
        name = kind.filename(study)
        counting = "rows" if kind.key == exports.WORKSHEET_XLSX else "bytes"
        report("writing", 0, 0, f"Writing {name}")

        def written(amount: int) -> None:
            so_far = f"{amount / 1e6:.1f} MB" if counting == "bytes" else f"{amount:,} rows"
            report("writing", amount, 0, f"Writing {name}: {so_far} so far")

        job_file_write(
            job=job,
            name=name,
            content_type=kind.content_type,
            write=lambda file: kind.write(study, file, written),
        )
        return {"export": kind.key}

    job_execute(job_id=job_id, work=work)


def export_job_status(*, job: Job) -> dict:
    """Where the job is, as JSON for the poller and the API: the runner's status, then once
    done the file (name, size in bytes, media type, SHA-256, when it expires), or why there
    is none (``problem``)."""
    status = job_status(job=job)
    file = None
    problem = status["error"]
    if status["state"] == Job.State.DONE:
        if job_file_path(job=job) is None:
            problem = EXPIRED
        else:
            expires_at = job_file_expires_at(job=job)
            file = {
                "name": job.file_name,
                "size": job.file_size,
                "content_type": job.file_type,
                "sha256": job.file_sha256,
                "expires_at": expires_at.isoformat() if expires_at else None,
            }
    return {**status, "export": job.name, "file": file, "problem": problem}


def export_job_file(*, job: Job):
    """The job's file, open for reading, with its download name and media type; None when
    it has none (running, failed, expired or replaced). The caller closes the file."""
    if job.state != Job.State.DONE:
        return None
    path = job_file_path(job=job)
    if path is None:
        return None
    try:
        file = open(path, "rb")  # noqa: SIM115 - the response closes it
    except FileNotFoundError:  # removed a moment ago
        return None
    return file, job.file_name, job.file_type


def _schedule(job: Job) -> None:
    from .tasks import export_study  # the task module imports this one

    job_schedule(
        export_study,
        args=[job.pk],
        on_unreachable=lambda: job_fail(job=job, error=UNREACHABLE),
    )
