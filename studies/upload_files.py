"""Where uploaded test-case files are kept: a directory of their own, never served."""

from django.conf import settings
from django.core.files.storage import FileSystemStorage


def case_upload_storage() -> FileSystemStorage:
    # A callable, so that the migration does not record the directory, and tests may move it.
    return FileSystemStorage(location=settings.CASE_UPLOAD_ROOT)


def case_upload_name(upload, filename: str) -> str:
    """The stored name: the upload's uuid only (the coordinator's file name is a field)."""
    return f"{upload.study_id}/{upload.uuid}"
