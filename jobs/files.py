"""A job whose result is a file (a large export): the file on disk in ``JOB_FILES_ROOT``.

The file is never seen half-written: it is written under a temporary name and renamed once
complete (a rename within one directory is atomic). Its name on disk is the job's UUID,
which tells nothing about what it holds. This module only touches the disk; recording a
file on its job, replacing and expiring files are ``jobs.services``'s (a job's row is
written there only).
"""

import hashlib
import os
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import IO

from django.conf import settings
from django.utils import timezone

from .models import Job

PART = ".part"
READ_CHUNK = 1024 * 1024


def job_files_root() -> Path:
    return Path(settings.JOB_FILES_ROOT)


def job_file_expires_at(*, job: Job):
    if job.finished_at is None:
        return None
    return job.finished_at + timedelta(hours=settings.JOB_FILES_HOURS)


def job_file_expired(*, job: Job) -> bool:
    expires_at = job_file_expires_at(job=job)
    return expires_at is not None and expires_at <= timezone.now()


def file_store(*, stored: str, write: Callable[[IO[bytes]], None]) -> tuple[int, str]:
    """Write ``stored`` in the root with ``write(file)`` (a seekable binary file), under a
    temporary name renamed once complete; its size and SHA-256. Should ``write`` raise,
    nothing is left and the error goes on."""
    root = job_files_root()
    root.mkdir(parents=True, exist_ok=True)
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
    return size, digest.hexdigest()


def file_unlink(*, stored: str) -> None:
    (job_files_root() / stored).unlink(missing_ok=True)


def parts_expire() -> int:
    """Remove the temporary files left ``JOB_FILES_HOURS`` by runs that died while
    writing; how many."""
    removed = 0
    root = job_files_root()
    if root.is_dir():
        oldest = time.time() - settings.JOB_FILES_HOURS * 3600
        for part in root.glob(f"*{PART}"):
            try:
                if part.stat().st_mtime <= oldest:
                    part.unlink()
                    removed += 1
            except FileNotFoundError:  # removed meanwhile
                pass
    return removed
