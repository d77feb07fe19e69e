"""Health checks: /healthz/live answers whenever the process does; /healthz/ready (and its
alias /healthz) is 200 when the database answers and 503 when not, the broker and the workers
only reported."""

import json
import os
import subprocess
import sys
import uuid
from unittest import mock

import pytest
import redis
from django.db import OperationalError, connections
from django.urls import reverse

from config.worker_health import CONSUMED_KEY, consumed_key, worker_consumed
from tests.processes import ROOT, manage, subprocess_database_url

from ..factories import UserFactory

CLOSED_PORT = "127.0.0.1:1"
QUEUE = f"concord-health-{uuid.uuid4().hex[:8]}"
READY = {"database": "ok", "broker": "ok", "worker": "ok", "queues": {QUEUE: "ok"}}


@pytest.fixture(autouse=True)
def queue(settings):
    """A queue of the test's own, and no worker heartbeat yet: what other tests queued or
    consumed does not count here."""
    settings.CELERY_TASK_DEFAULT_QUEUE = QUEUE
    settings.RECOMPUTE_QUEUE = settings.JOBS_QUEUE = ""
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    client.delete(CONSUMED_KEY)
    yield client, settings.CELERY_TASK_DEFAULT_QUEUE
    client.delete(CONSUMED_KEY, settings.CELERY_TASK_DEFAULT_QUEUE)


@pytest.fixture
def database_down(db):
    """Every query fails as with the database unreachable (until the test ends, before the
    test database is rolled back)."""
    failure = OperationalError("connection refused (simulated)")
    with mock.patch.object(connections["default"], "cursor", side_effect=failure):
        yield


@pytest.fixture
def broker_down(settings):
    settings.CELERY_BROKER_URL = f"redis://{CLOSED_PORT}/0"


def test_live_needs_no_sign_in_and_is_never_cached(client, db):
    response = client.get(reverse("healthz_live"))
    assert (response.status_code, response.json()) == (200, {"status": "ok"})
    assert "no-cache" in response["Cache-Control"]


def test_live_asks_no_service(client, db, database_down, broker_down):
    response = client.get(reverse("healthz_live"))
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


@pytest.mark.parametrize("name", ["healthz_ready", "healthz"])
def test_ready_needs_no_sign_in_and_is_never_cached(client, db, name):
    response = client.get(reverse(name))
    assert (response.status_code, response.json()) == (200, READY)
    assert "no-cache" in response["Cache-Control"]


def test_signed_in_users_see_the_same(client, db):
    client.force_login(UserFactory())
    assert client.get(reverse("healthz_ready")).json() == READY


@pytest.mark.parametrize("name", ["healthz_live", "healthz_ready", "healthz"])
def test_only_reads(client, db, name):
    assert client.post(reverse(name)).status_code == 405


@pytest.mark.parametrize("name", ["healthz_ready", "healthz"])
def test_database_down_is_not_ready(client, db, database_down, name):
    response = client.get(reverse(name))
    assert (response.status_code, response.json()) == (
        503,
        READY | {"database": "down"},
    )


def test_broker_down_is_reported_but_still_ready(client, db, broker_down):
    response = client.get(reverse("healthz_ready"))
    assert (response.status_code, response.json()) == (
        200,
        {"database": "ok", "broker": "down", "worker": "unknown", "queues": {QUEUE: "unknown"}},
    )


def test_queued_work_that_no_worker_began_is_a_stalled_worker_but_still_ready(client, db, queue):
    redis_client, name = queue
    redis_client.rpush(name, "{}")  # a message no worker took
    response = client.get(reverse("healthz_ready"))
    stalled = {"worker": "stalled", "queues": {QUEUE: "stalled"}}
    assert (response.status_code, response.json()) == (200, READY | stalled)


def test_each_worker_queue_is_reported_on_its_own(client, db, queue, settings):
    """The scaled-out shape (docs/deployment.md): the recompute and jobs queues each with
    their workers; a dead jobs worker shows on its queue, not hidden by the live other."""
    redis_client, _ = queue
    settings.RECOMPUTE_QUEUE, settings.JOBS_QUEUE = f"{QUEUE}-recompute", f"{QUEUE}-jobs"
    keys = [consumed_key(settings.RECOMPUTE_QUEUE), consumed_key(settings.JOBS_QUEUE)]
    try:
        redis_client.rpush(settings.RECOMPUTE_QUEUE, "{}")
        redis_client.rpush(settings.JOBS_QUEUE, "{}")
        worker_consumed(settings.RECOMPUTE_QUEUE)  # the recompute worker consumes
        response = client.get(reverse("healthz_ready"))
        assert (response.status_code, response.json()) == (
            200,
            {
                "database": "ok",
                "broker": "ok",
                "worker": "stalled",
                "queues": {
                    QUEUE: "ok",
                    settings.RECOMPUTE_QUEUE: "ok",
                    settings.JOBS_QUEUE: "stalled",
                },
            },
        )
    finally:
        redis_client.delete(settings.RECOMPUTE_QUEUE, settings.JOBS_QUEUE, *keys)


def test_queued_work_is_fine_while_a_worker_began_a_task_within_the_sweep_interval(
    client, db, queue, settings
):
    redis_client, name = queue
    redis_client.rpush(name, "{}")
    worker_consumed()
    assert client.get(reverse("healthz_ready")).json() == READY
    # The heartbeat lives one sweep interval, on Redis's clock.
    assert 0 < redis_client.ttl(CONSUMED_KEY) <= settings.AGREEMENT_SWEEP_SECONDS


def test_an_idle_worker_with_nothing_queued_is_fine(client, db, queue):
    redis_client, _ = queue
    assert not redis_client.exists(CONSUMED_KEY)
    assert client.get(reverse("healthz_ready")).json() == READY


def probe(path, **variables):
    """GET ``path`` in a process of its own, with ``variables`` in its environment."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": subprocess_database_url(),
        "CELERY_QUEUE": f"concord-health-{uuid.uuid4().hex[:8]}",
        **variables,
    }
    script = (
        f"from django.test import Client; r = Client().get({path!r}); "
        "print(r.status_code, r.content.decode())"
    )
    result = manage("shell", "-v", "0", "-c", script, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    status, body = result.stdout.strip().splitlines()[-1].split(" ", 1)
    return int(status), json.loads(body)


@pytest.mark.django_db
def test_a_really_unreachable_database_is_not_ready_but_live():
    unreachable = {"DATABASE_URL": f"postgres://postgres:postgres@{CLOSED_PORT}/none"}
    status, answer = probe("/healthz/ready", **unreachable)
    assert (status, answer) == (
        503,
        {"database": "down", "broker": "ok", "worker": "ok", "queues": answer["queues"]},
    )
    assert list(answer["queues"].values()) == ["ok"]
    assert probe("/healthz/live", **unreachable) == (200, {"status": "ok"})


def test_the_container_health_check_passes_and_fails_with_the_app(live_server):
    def check(url):
        env = {**os.environ, "HEALTHCHECK_URL": url, "ALLOWED_HOSTS": "localhost,testserver"}
        return subprocess.run(  # our own script
            [sys.executable, "scripts/healthcheck.py"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip

    healthy = check(f"{live_server.url}/healthz/live")
    assert healthy.returncode == 0, healthy.stderr
    assert json.loads(healthy.stdout) == {"status": "ok"}
    assert check(f"http://{CLOSED_PORT}/healthz/live").returncode == 1
