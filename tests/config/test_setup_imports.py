"""Django's start-up alone (``django.setup()``: what `make run`'s autoreloader and every
management command run before anything else) loads neither the statistics nor the apps'
services: the apps' ready() hooks register functions that import their module when first
called (benchmarks/memory.py, the warm start). Nor Celery: the job runner loads the
project's app on the first job (tests/jobs/test_celery_app.py)."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOT_AT_SETUP = (
    "numpy",
    "scipy",
    "openpyxl",
    "agreement.services",
    "agreement.selectors",
    "annotation.services",
    "annotation.selectors",
    "celery",
    "redis",
)
SETUP = f"""
import json, sys
import django
django.setup()
print(json.dumps(sorted(m for m in {NOT_AT_SETUP!r} if m in sys.modules)))
"""


def test_django_setup_loads_no_statistics_nor_services():
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    env.update(DJANGO_SETTINGS_MODULE="config.settings.local", PYTHONPATH=str(ROOT))
    env["DATABASE_URL"] = "sqlite:///:memory:"
    run = subprocess.run(  # our own script, in our own interpreter
        [sys.executable, "-c", SETUP],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(run.stdout.strip().splitlines()[-1]) == []
