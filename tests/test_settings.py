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
            ("DJANGO_", "DATABASE_", "REDIS_", "CELERY_", "JOBS_", "SECRET_KEY", "ALLOWED_HOSTS")
        )
    }
    env.update(extra)
    return env


# Migrates a fresh SQLite database and loads the demo, in processes of their own: minutes
# on a busy machine.
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_embedded_default_migrates_and_loads_the_demo_twice_without_change(tmp_path):
    # No environment at all: SQLite and in-process tasks, as `make run` uses.
    database = tmp_path / "demo.sqlite3"
    env = clean_env(
        DJANGO_SETTINGS_MODULE="config.settings.local", DATABASE_URL=f"sqlite:///{database}"
    )
    # As `make run` does: one process migrates and loads both demo studies.
    first = run_manage("prepare_demo", env=env)
    assert first.returncode == 0, first.stderr
    assert "Loaded the demo study" in first.stdout
    assert "Loaded the pairwise demo study" in first.stdout
    counts = "from studies.models import *; from annotation.models import *; s = Study.objects.filter(slug='reference-demo'); print(s.count(), TestCase.objects.filter(study__in=s).count(), Assignment.objects.filter(test_case__study__in=s).count(), Adjudication.objects.filter(status='done').count())"
    before = run_manage("shell", "-v", "0", "-c", counts, env=env).stdout.strip()
    second = run_manage("prepare_demo", env=env)
    assert second.returncode == 0
    assert "The demo study is already loaded; nothing changed." in second.stdout
    assert "The pairwise demo study is already loaded; nothing changed." in second.stdout
    after = run_manage("shell", "-v", "0", "-c", counts, env=env).stdout.strip()
    assert before == after
    studies, cases, assignments, adjudicated = map(int, after.split())
    assert (studies, assignments) == (1, cases * 3) and cases >= 6
    assert adjudicated == 1  # the demo shows one decided adjudication
    # Once rater1 has rated, a further run no longer calls them fresh.
    assert "rater1 (a rater with nothing rated yet" in second.stdout
    rate_one = "from annotation.models import Assignment as A; A.objects.filter(pk=A.objects.filter(rater__user__username='rater1', rater__study__slug='reference-demo').first().pk).update(status='submitted')"
    run_manage("shell", "-v", "0", "-c", rate_one, env=env)
    third = run_manage("load_demo", env=env)
    assert f"rater1 (a rater who has submitted 1 of {cases} cases)" in third.stdout


def test_local_settings_default_to_sqlite_and_jobs_in_threads():
    env = clean_env(DJANGO_SETTINGS_MODULE="config.settings.local")
    probe = (
        "from django.conf import settings as s; print(s.DATABASES['default']['ENGINE'], s.JOBS_RUN)"
    )
    result = run_manage("shell", "-v", "0", "-c", probe, env=env)
    assert result.stdout.split() == ["django.db.backends.sqlite3", "thread"]


PROPER_KEY = "k3y-" + "a1b2c3d4e5f6g7h8i9j0" * 3
HOST = {"ALLOWED_HOSTS": "concord.example.org"}


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        (HOST, "SECRET_KEY"),
        ({"SECRET_KEY": PROPER_KEY}, "ALLOWED_HOSTS"),
        # What the README used to ask for, and what check --deploy flags (security.W009).
        ({**HOST, "SECRET_KEY": "k3y-a1b2c3d4e5f6g7h8i9j0a1b2c3d4e5f6"}, "at least 50"),
        ({**HOST, "SECRET_KEY": "ab" * 30}, "5 or more of them different"),
        ({**HOST, "SECRET_KEY": "django-insecure-" + PROPER_KEY}, "django-insecure-"),
    ],
)
def test_production_refuses_to_start_without_secrets(variables, message):
    env = clean_env(DJANGO_SETTINGS_MODULE="config.settings.production", **variables)
    result = run_manage("check", env=env)
    assert result.returncode != 0
    assert message in result.stderr


@pytest.mark.parametrize("preload", [None, "true"])
def test_production_passes_the_deploy_checks_when_configured(preload):
    # With only what the README asks for in .env: a proper key and the hosts.
    env = clean_env(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        SECRET_KEY=PROPER_KEY,
        ALLOWED_HOSTS="concord.example.org",
        **({"SECURE_HSTS_PRELOAD": preload} if preload else {}),
    )
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout
    assert "WARNING" not in result.stdout + result.stderr


def test_the_shortest_key_production_accepts_passes_the_deploy_checks():
    # Exactly as long and as varied as Django requires: the two rules agree.
    env = clean_env(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        SECRET_KEY="abcde" * 10,
        ALLOWED_HOSTS="concord.example.org",
        SECURE_HSTS_PRELOAD="true",
    )
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgres://u:p@db.example.org:5432/concord", ["60", "True"]),
        # Behind a transaction pooler the URL asks for a connection per request.
        ("postgres://u:p@db.example.org:5432/concord?conn_max_age=0", ["0", "True"]),
    ],
)
def test_production_keeps_database_connections_between_requests(url, expected):
    env = clean_env(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        SECRET_KEY=PROPER_KEY,
        ALLOWED_HOSTS="concord.example.org",
        DATABASE_URL=url,
    )
    probe = (
        "from django.conf import settings as s; d = s.DATABASES['default']; "
        "print(d['CONN_MAX_AGE'], d['CONN_HEALTH_CHECKS'])"
    )
    result = run_manage("shell", "-v", "0", "-c", probe, env=env)
    assert result.stdout.split() == expected, result.stderr
