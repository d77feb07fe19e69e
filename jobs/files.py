"""A job whose result is a file (a large export): written into ``JOB_FILES_ROOT``, recorded
on the job (download name, size, media type, SHA-256), and removed once a newer file of the
same study, kind and name replaces it or ``JOB_FILES_HOURS`` after the job ended.

The file is never seen half-written: it is written under a temporary name and renamed once
complete (a rename within one directory is atomic), and recorded on the job only after. Its
name on disk is the job's UUID, which tells nothing about what it holds; the name it is
downloaded under is the caller's. Expired files are removed by beat's hourly task, and, for
the shapes without beat (the embedded default), whenever a file job starts or a file is
asked for.
"""

import hashlib
import logging
import os
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import IO

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from .models import Job

logger = logging.getLogger(__name__)

PART = ".part"
READ_CHUNK = 1024 * 1024


def job_files_root() -> Path:
    return Path(settings.JOB_FILES_ROOT)


def job_file_path(*, job: Job) -> Path | None:
    """Where the job's file is, or None when it has none (any more): never written, replaced,
    expired (removed now if it had, see the module docstring)."""
    if not job.file_path:
        return None
    if job_file_expired(job=job):
        _remove(Job.objects.filter(pk=job.pk))
        job.file_path = ""
        return None
    return job_files_root() / job.file_path


def job_file_expires_at(*, job: Job):
    if job.finished_at is None:
        return None
    return job.finished_at + timedelta(hours=settings.JOB_FILES_HOURS)


def job_file_expired(*, job: Job) -> bool:
    expires_at = job_file_expires_at(job=job)
    return expires_at is not None and expires_at <= timezone.now()


def job_file_write(
    *, job: Job, name: str, content_type: str, write: Callable[[IO[bytes]], None]
) -> dict:
    """Write the job's file with ``write(file)`` (a seekable binary file), then record it on
    the job and remove the file of every earlier job of its study, kind and name.

    Returns what was recorded (for the job's result). Should ``write`` raise, nothing is
    kept and the error goes on.
    """
    root = job_files_root()
    root.mkdir(parents=True, exist_ok=True)
    stored = str(job.uuid)
    final = root / stored
    part = root / f"{stored}{PART}"
    try:
        with open(part, "wb") as file:
            write(file)
            file.flush()
            os.fsync(file.fileno())
        # The checksum is read back rather than kept while writing: a zip writer (the Excel
        # worksheet) seeks back to fill in its headers.
        digest = hashlib.sha256()
        with open(part, "rb") as file:
            while chunk := file.read(READ_CHUNK):
                digest.update(chunk)
        size = part.stat().st_size
        os.replace(part, final)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    recorded = {
        "file_path": stored,
        "file_name": name[:200],
        "file_size": size,
        "file_type": content_type[:100],
        "file_sha256": digest.hexdigest(),
    }
    from .services import job_file_record  # the services import this module

    job_file_record(job=job, recorded=recorded)
    replaced = Job.objects.filter(
        kind=job.kind, study_id=job.study_id, name=job.name, created_at__lte=job.created_at
    ).exclude(pk=job.pk)
    _remove(replaced)
    return {key: value for key, value in recorded.items() if key != "file_path"}


def job_files_remove(*, jobs) -> int:
    """Remove the files of these jobs (a queryset), and say so on them; how many."""
    return _remove(jobs)


def _remove(jobs) -> int:
    from .services import job_file_forget  # the services import this module

    removed = 0
    root = job_files_root()
    for pk, stored in jobs.exclude(file_path="").values_list("pk", "file_path"):
        # The row first: a download that reads it after finds no file, rather than a file
        # that is gone under it (an open file stays readable until it is closed).
        if job_file_forget(job_id=pk, stored=stored):
            (root / stored).unlink(missing_ok=True)
            removed += 1
    return removed


def job_files_expire() -> int:
    """Remove every job file past its expiry, and any temporary file left as long by a run
    that died while writing; how many files were removed."""
    hours = settings.JOB_FILES_HOURS
    cutoff = timezone.now() - timedelta(hours=hours)
    removed = _remove(Job.objects.filter(Q(finished_at__lte=cutoff)))
    root = job_files_root()
    if root.is_dir():
        oldest = time.time() - hours * 3600
        for part in root.glob(f"*{PART}"):
            try:
                if part.stat().st_mtime <= oldest:
                    part.unlink()
                    removed += 1
            except FileNotFoundError:  # removed meanwhile
                pass
    return removed
