"""The embedded default: SQLite and in-process tasks, so `make run` needs nothing else."""

from .base import *  # noqa: F403
from .base import LOGGING, env

DEBUG = env.bool("DEBUG", default=True)
SECRET_KEY = env("SECRET_KEY", default="local-development-only-not-secret")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])
JOBS_RUN = env("JOBS_RUN", default="thread")
# One line per recompute is noise when working locally; AGREEMENT_LOG_LEVEL=INFO shows it.
LOGGING["loggers"] = {"agreement": {"level": env("AGREEMENT_LOG_LEVEL", default="WARNING")}}
