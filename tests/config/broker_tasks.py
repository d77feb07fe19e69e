"""Tasks only the broker tests give a worker (``celery worker --include``): they touch files,
so a test sees what a worker consumed without a database."""

import time
from pathlib import Path

from config.celery import app


@app.task(name="tests.broker.mark")
def mark(path: str) -> None:
    """Record that this task ran."""
    Path(path).touch()


@app.task(name="tests.broker.hold")
def hold(path: str, seconds: float) -> None:
    """Record that this task began, then keep its message unacknowledged for ``seconds``."""
    Path(path).touch()
    time.sleep(seconds)
