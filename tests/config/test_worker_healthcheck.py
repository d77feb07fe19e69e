"""The worker's container health check: unhealthy when work is queued and no worker began a
task for longer than the sweep interval, as /healthz/ready reports it."""

import os
import subprocess
import sys
import uuid

import pytest
import redis
from django.conf import settings

from config.worker_health import CONSUMED_KEY
from tests.processes import ROOT

pytestmark = pytest.mark.integration


@pytest.fixture
def queue():
    """A queue of the test's own in the test's Redis, and no heartbeat yet."""
    name = f"concord-healthcheck-{uuid.uuid4().hex[:8]}"
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    client.delete(CONSUMED_KEY)
    yield client, name
    client.delete(CONSUMED_KEY, name)


def check(queue_name: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "CELERY_QUEUE": queue_name,
    }
    return subprocess.run(  # our own script
        [sys.executable, "scripts/worker_healthcheck.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_queued_work_no_worker_began_is_unhealthy_and_a_heartbeat_makes_it_healthy(queue):
    client, name = queue
    assert check(name).returncode == 0  # nothing queued
    client.rpush(name, "{}")
    stalled = check(name)
    assert stalled.returncode == 1 and "worker stalled" in stalled.stdout
    client.set(CONSUMED_KEY, 1, ex=60)  # a worker began a task just now
    assert check(name).returncode == 0
