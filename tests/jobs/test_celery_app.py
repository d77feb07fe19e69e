"""The apps' tasks are Celery shared tasks, bound to whichever app is loaded when they are
used; no process loads the project's app at start-up (tests/config/test_setup_imports.py),
so the job runner loads it before it uses a task. In a fresh process, a job's task resolves
to the project's app in every thread, the job threads of `make run` included."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A shared task used as the apps' are, then asked for its app from another thread.
SCRIPT = """
import json, sys, threading
import django
django.setup()
from celery import shared_task

@shared_task(name="jobs_test.which_app")
def which_app():
    return None

loaded_before = "config.celery" in sys.modules
{use}
seen = []
thread = threading.Thread(target=lambda: seen.append(which_app.app.main))
thread.start()
thread.join()
print(json.dumps({{"loaded_before": loaded_before, "app": seen[0]}}))
"""
THROUGH_THE_RUNNER = "from jobs.runner import job_schedule\njob_schedule(which_app)"


def run(use: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "JOBS_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DATABASE_URL="sqlite:///:memory:",
        JOBS_RUN="inline",
        PYTHONPATH=str(ROOT),
    )
    done = subprocess.run(  # our own script, in our own interpreter
        [sys.executable, "-c", SCRIPT.format(use=use)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_job_binds_the_shared_tasks_to_the_project_app():
    assert run(THROUGH_THE_RUNNER) == {"loaded_before": False, "app": "concord"}


def test_a_task_used_before_any_job_would_get_a_default_app():
    """The check's power: called directly, with nothing loading the project's app first."""
    assert run("which_app()") == {"loaded_before": False, "app": "default"}
