import os

import pytest

from tests.processes import manage


def run_manage(*args, env, timeout=120):
    return manage(*args, env=env, timeout=timeout)


def clean_env(**extra):
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(
            ("DJANGO_", "DATABASE_", "REDIS_", "CELERY_", "SECRET_KEY", "ALLOWED_HOSTS")
        )
    }
    env.update(extra)
    return env


def test_embedded_default_migrates_and_loads_the_demo_twice_without_change(tmp_path):
    # No environment at all: SQLite and in-process tasks, as `make run` uses.
    database = tmp_path / "demo.sqlite3"
    env = clean_env(
        DJANGO_SETTINGS_MODULE="config.settings.local", DATABASE_URL=f"sqlite:///{database}"
    )
    assert run_manage("migrate", "--no-input", env=env).returncode == 0
    first = run_manage("load_demo", env=env)
    assert first.returncode == 0, first.stderr
    assert "Loaded the demo study" in first.stdout
    counts = "from studies.models import *; from annotation.models import *; print(Study.objects.count(), TestCase.objects.count(), Assignment.objects.count())"
    before = run_manage("shell", "-v", "0", "-c", counts, env=env).stdout.strip()
    second = run_manage("load_demo", env=env)
    assert second.returncode == 0
    assert "nothing changed" in second.stdout
    after = run_manage("shell", "-v", "0", "-c", counts, env=env).stdout.strip()
    assert before == after
    studies, cases, assignments = map(int, after.split())
    assert (studies, assignments) == (1, cases * 3) and cases >= 6


def test_local_settings_default_to_sqlite_and_in_process_tasks():
    env = clean_env(DJANGO_SETTINGS_MODULE="config.settings.local")
    probe = "from django.conf import settings as s; print(s.DATABASES['default']['ENGINE'], s.CELERY_TASK_ALWAYS_EAGER)"
    result = run_manage("shell", "-v", "0", "-c", probe, env=env)
    assert result.stdout.split() == ["django.db.backends.sqlite3", "True"]


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"ALLOWED_HOSTS": "concord.example.org"}, "SECRET_KEY"),
        ({"SECRET_KEY": "x" * 50}, "ALLOWED_HOSTS"),
    ],
)
def test_production_refuses_to_start_without_secrets(variables, message):
    env = clean_env(DJANGO_SETTINGS_MODULE="config.settings.production", **variables)
    result = run_manage("check", env=env)
    assert result.returncode != 0
    assert message in result.stderr


def test_production_passes_the_deploy_checks_when_configured():
    env = clean_env(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        SECRET_KEY="k3y-" + "a1b2c3d4e5f6g7h8i9j0" * 3,
        ALLOWED_HOSTS="concord.example.org",
        SECURE_HSTS_PRELOAD="true",
    )
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
