"""Running the project as a separate process does: ``manage.py`` against the test database."""

import json
import os
import subprocess
import sys
from pathlib import Path

from django.db import connection

ROOT = Path(__file__).resolve().parents[1]


def subprocess_database_url() -> str:
    """The URL of the database this test runs against, for a process of its own."""
    db = connection.settings_dict
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = db.get("HOST") or "127.0.0.1"
    return f"postgres://{user}{password}@{host}:{db.get('PORT') or 5432}/{db['NAME']}"


def manage(*args: str, env: dict | None = None, timeout: float = 120):
    """Run ``manage.py`` with ``args``; by default with the test settings and database."""
    if env is None:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": subprocess_database_url(),
        }
    return subprocess.run(  # our own manage.py with arguments the test chose
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def sqlite_script_outcome(script: str, *, tmp_path: Path, **settings: str) -> dict:
    """Run ``script`` in a fresh interpreter on the embedded default (a migrated SQLite file
    in ``tmp_path``, in-process tasks, ``settings`` as environment); its last printed line,
    parsed as JSON."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "DATABASE_", "CELERY_", "JOBS_"))
    }
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DATABASE_URL=f"sqlite:///{tmp_path / 'concord.sqlite3'}",
        **settings,
    )
    migrated = manage("migrate", "--no-input", env=env)
    assert migrated.returncode == 0, migrated.stderr
    run = subprocess.run(  # our own script, in our own interpreter
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])
