"""A web process starts without the heavy libraries: numpy (and with it every statistic),
scipy, openpyxl, pandas, statsmodels and drf-spectacular's schema generator are imported by
the code that uses them, on the first request that needs them (benchmarks/memory.py
measures what that saves); Celery, the Redis client and the Markdown parser on the first
job, the first question to the broker or the cache, and the first text rendered
(benchmarks/warm_start.py: `make run`'s start)."""

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = (
    "numpy",
    "scipy",
    "openpyxl",
    "pandas",
    "statsmodels",
    "drf_spectacular.generators",
    "celery",
    "redis",
    "markdown_it",
)

# What gunicorn loads (the WSGI application: settings, apps, middleware), then the URL
# configuration with every view module it includes, and the system checks runserver runs.
STARTUP = f"""
import json, sys
from config.wsgi import application
from django.core.management import call_command
from django.urls import get_resolver
get_resolver().url_patterns
call_command("check")
print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))
"""


def heavy_modules_at_startup(tmp_path: Path, settings: str = "config.settings.production"):
    """The heavy modules a fresh production web process has loaded once started."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    env.update(
        DJANGO_SETTINGS_MODULE=settings,
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="localhost",
        PYTHONPATH=os.pathsep.join([str(ROOT), str(tmp_path)]),
    )
    run = subprocess.run(  # our own script, in our own interpreter
        [sys.executable, "-c", STARTUP],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_the_web_process_starts_without_heavy_libraries(tmp_path):
    assert heavy_modules_at_startup(tmp_path) == []


@pytest.mark.parametrize(
    ("planted", "found"),
    [
        ("numpy", ["numpy"]),
        # A statistic, or the ratings' matrices, at the top of a module the URLs import.
        ("agreement.stats", ["numpy"]),
        ("agreement.selectors.ratings", ["numpy"]),
        # scipy is built on numpy; openpyxl imports it when it finds it.
        ("scipy.stats", ["numpy", "scipy"]),
        ("openpyxl", ["numpy", "openpyxl"]),
        ("drf_spectacular.views", ["drf_spectacular.generators"]),
        ("config.celery", ["celery"]),
        ("redis.exceptions", ["redis"]),
    ],
)
def test_an_import_planted_in_the_url_configuration_is_found(tmp_path, planted, found):
    """The check's power: a URL configuration that imports a heavy module at the top."""
    (tmp_path / "planted_urls.py").write_text(
        f"import {planted}\nfrom config.urls import *  # noqa: F403\n"
    )
    (tmp_path / "planted_settings.py").write_text(
        "from config.settings.production import *  # noqa: F403\nROOT_URLCONF = 'planted_urls'\n"
    )
    assert heavy_modules_at_startup(tmp_path, settings="planted_settings") == found
