"""Running the project as a separate process does: ``manage.py`` against the test database."""

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
    return subprocess.run(  # noqa: S603 - our own manage.py with arguments the test chose
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
