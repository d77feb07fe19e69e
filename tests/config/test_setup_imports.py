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


# Settings that record which process imported them, one empty file per process id.
MARKED_SETTINGS = """
import os
from pathlib import Path
Path(os.environ["SETTINGS_IMPORTED_IN"], str(os.getpid())).touch()
from config.settings.local import *  # noqa: F403
"""


def processes_that_set_django_up(tmp_path: Path, command: list[str]) -> tuple[int, list[int]]:
    """Start ``command`` (runserver, with its autoreloader, on an address it refuses, so that
    the process that sets Django up reports it and exits): the first process's id, and the
    ids of the processes that imported the settings."""
    (tmp_path / "marked_settings.py").write_text(MARKED_SETTINGS)
    (tmp_path / "imported").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    env.update(
        DJANGO_SETTINGS_MODULE="marked_settings",
        DATABASE_URL="sqlite:///:memory:",
        PYTHONPATH=os.pathsep.join([str(ROOT), str(tmp_path)]),
        SETTINGS_IMPORTED_IN=str(tmp_path / "imported"),
    )
    process = subprocess.Popen(  # our own manage.py, in our own interpreter
        [sys.executable, *command, "runserver", "not-an-address"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 1 and "not a valid port number" in stderr, stderr[-3000:]
    return process.pid, sorted(int(p.name) for p in (tmp_path / "imported").iterdir())


def test_runserver_sets_django_up_only_in_the_server_not_in_its_reloader(tmp_path):
    """`make run`'s reloader process only starts the server (manage.py): Django is set up,
    and the address refused, once, in the server's own process."""
    first, imported = processes_that_set_django_up(tmp_path, ["manage.py"])
    assert len(imported) == 1 and imported != [first]


def test_django_admins_runserver_sets_django_up_in_its_reloader(tmp_path):
    """The check's power: Django's own command line sets Django up in the first process."""
    first, imported = processes_that_set_django_up(tmp_path, ["-m", "django"])
    assert imported == [first]
