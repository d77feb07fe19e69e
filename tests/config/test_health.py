"""/healthz: 200 when the database and the broker answer, 503 naming what is down."""

import json
import os
import subprocess
import sys

import pytest
from django.urls import reverse

from tests.processes import ROOT, manage, subprocess_database_url

from ..factories import UserFactory

CLOSED_PORT = "127.0.0.1:1"


def test_healthy_needs_no_sign_in(client, db):
    response = client.get(reverse("healthz"))
    assert response.status_code == 200
    assert response.json() == {"database": "ok", "broker": "ok"}
    assert "no-cache" in response["Cache-Control"]


def test_signed_in_users_see_the_same(client, db):
    client.force_login(UserFactory())
    assert client.get(reverse("healthz")).json() == {"database": "ok", "broker": "ok"}


def test_only_reads(client, db):
    assert client.post(reverse("healthz")).status_code == 405


def probe_healthz(**variables):
    """GET /healthz in a process of its own, with ``variables`` in its environment."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": subprocess_database_url(),
        **variables,
    }
    probe = (
        "from django.test import Client; r = Client().get('/healthz'); "
        "print(r.status_code, r.content.decode())"
    )
    result = manage("shell", "-v", "0", "-c", probe, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    status, body = result.stdout.strip().splitlines()[-1].split(" ", 1)
    return int(status), json.loads(body)


@pytest.mark.django_db
def test_broker_down_is_503_naming_the_broker():
    status, body = probe_healthz(REDIS_URL=f"redis://{CLOSED_PORT}/0")
    assert (status, body) == (503, {"database": "ok", "broker": "down"})


@pytest.mark.django_db
def test_database_down_is_503_naming_the_database():
    status, body = probe_healthz(DATABASE_URL=f"postgres://postgres:postgres@{CLOSED_PORT}/none")
    assert (status, body) == (503, {"database": "down", "broker": "ok"})


def test_the_container_health_check_passes_and_fails_with_the_app(live_server):
    def check(url):
        env = {**os.environ, "HEALTHCHECK_URL": url, "ALLOWED_HOSTS": "localhost,testserver"}
        return subprocess.run(  # our own script
            [sys.executable, "scripts/healthcheck.py"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip

    healthy = check(f"{live_server.url}/healthz")
    assert healthy.returncode == 0, healthy.stderr
    assert json.loads(healthy.stdout) == {"database": "ok", "broker": "ok"}
    assert check(f"http://{CLOSED_PORT}/healthz").returncode == 1
