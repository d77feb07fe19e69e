"""Settings for the test suite: the real services (PostgreSQL, Redis) by default."""

import tempfile
from pathlib import Path

from .base import *  # noqa: F403
from .base import env

SECRET_KEY = "test-only-not-secret"  # noqa: S105
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "testserver"]
DATABASES = {
    "default": env.db("DATABASE_URL", default="postgres://postgres:postgres@127.0.0.1:5432/concord")
}
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=True)
# Tests read the result right after a change: run in-process recomputes at once.
AGREEMENT_IN_PROCESS = env("AGREEMENT_IN_PROCESS", default="inline")
CASE_IMPORT_IN_PROCESS = env("CASE_IMPORT_IN_PROCESS", default="inline")
ASSIGN_IN_PROCESS = env("ASSIGN_IN_PROCESS", default="inline")
# Each test run keeps its uploaded files in a directory of its own.
CASE_UPLOAD_ROOT = Path(tempfile.mkdtemp(prefix="concord-case-uploads-"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
