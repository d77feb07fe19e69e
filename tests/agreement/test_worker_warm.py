"""A Celery worker loads the statistics (numpy, scipy) and runs them once as it starts, in
its main process before it forks its pool: no rater's recompute pays the import, and the
pool processes share the pages (benchmarks/worker.py measures both)."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A worker's start as Celery runs it: the task modules imported (the loader's
# ``init_worker``), then ``worker_init`` sent in the main process, before the fork.
WORKER_START = """
import json, sys
import django
django.setup()
from celery.signals import worker_init
from config.celery import app
app.loader.import_default_modules()
loaded = lambda: [m for m in ("scipy.stats", "scipy.optimize", "scipy.sparse") if m in sys.modules]
before = loaded()
worker_init.send(sender=None)
print(json.dumps([before, loaded()]))
"""


def test_a_worker_loads_the_statistics_as_it_starts_before_any_task():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    result = subprocess.run(  # our own interpreter, a fixed script
        [sys.executable, "-c", WORKER_START],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    before, after = json.loads(result.stdout.strip().splitlines()[-1])
    # The task modules alone leave scipy to the first computation that needs it.
    assert before == []
    assert after == ["scipy.stats", "scipy.optimize", "scipy.sparse"]
