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
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A commit does not wait for its WAL record to reach the disk: the suite commits
    # hundreds of thousands of times, and a test database need not survive a crash.
    DATABASES["default"].setdefault("OPTIONS", {})["options"] = "-c synchronous_commit=off"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
JOBS_RUN = env("JOBS_RUN", default="inline")
# Many tests read the OpenAPI schema; its throttle's own test sets its rate.
API_THROTTLE_RATES = {**API_THROTTLE_RATES, "schema": "10000/min"}  # noqa: F405
# Every run from scratch, so that each test sees every figure fresh; the tallies' tests
# turn the incremental update on.
AGREEMENT_FULL_SECONDS = env.int("AGREEMENT_FULL_SECONDS", default=0)
# Each test run keeps its uploaded files in a directory of its own.
CASE_UPLOAD_ROOT = Path(tempfile.mkdtemp(prefix="concord-case-uploads-"))
JOB_FILES_ROOT = Path(tempfile.mkdtemp(prefix="concord-job-files-"))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
