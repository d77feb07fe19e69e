"""The scaled-out shape's settings (docs/deployment.md): work routed to the recompute and
jobs queues when the settings name them, each queue's workers with their own heartbeat, and
Django's reads fit for PgBouncer in transaction mode."""

import importlib
import os
import uuid

import pytest
import redis

from config.celery import app, route_task, task_queues
from config.worker_health import CONSUMED_KEY, consumed_key, worker_consumed, worker_state
from tests.processes import manage

from .conftest import PROPER_KEY

RECOMPUTES = ["agreement.tasks.recompute_study", "agreement.tasks.sweep_stale_studies"]
JOBS = [
    "agreement.tasks.compute_analysis",
    "annotation.tasks.assign_study",
    "annotation.tasks.import_worksheet",
    "studies.tasks.import_case_upload",
    "studies.tasks.purge_identities",
    "concord.heartbeat",
]


@pytest.fixture
def queues(settings):
    """Queues of the test's own, and no heartbeat yet."""
    tag = uuid.uuid4().hex[:8]
    settings.CELERY_TASK_DEFAULT_QUEUE = f"concord-split-{tag}"
    settings.RECOMPUTE_QUEUE = f"concord-split-{tag}-recompute"
    settings.JOBS_QUEUE = f"concord-split-{tag}-jobs"
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    names = task_queues()
    keys = [consumed_key(name) for name in names]
    client.delete(*keys)
    yield client, settings
    client.delete(*names, *keys)


def test_every_task_has_a_route_to_a_named_queue(settings):
    settings.RECOMPUTE_QUEUE, settings.JOBS_QUEUE = "recompute", "jobs"
    for module in ("agreement.tasks", "annotation.tasks", "studies.tasks"):
        importlib.import_module(module)  # what the worker's autodiscovery imports
    registered = {name for name in app.tasks if not name.startswith("celery.")}
    assert set(RECOMPUTES + JOBS) <= registered
    for name in registered:
        expected = "recompute" if name in RECOMPUTES else "jobs"
        assert route_task(name, [], {}, {}) == {"queue": expected}, name


def test_with_no_queue_named_everything_goes_to_the_default_queue(settings):
    settings.RECOMPUTE_QUEUE = settings.JOBS_QUEUE = ""
    for name in RECOMPUTES + JOBS:
        assert route_task(name, [], {}, {}) is None
    assert task_queues() == [settings.CELERY_TASK_DEFAULT_QUEUE]


def test_beat_keeps_each_queue_s_heartbeat_fresh(settings):
    tasks = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert {"agreement.tasks.sweep_stale_studies", "concord.heartbeat"} <= tasks


def test_a_live_worker_on_one_queue_does_not_hide_a_dead_one_on_the_other(queues):
    client, settings = queues
    worker_consumed(settings.RECOMPUTE_QUEUE)  # the recompute worker consumes
    assert worker_state() == ("ok", "ok")
    client.rpush(settings.JOBS_QUEUE, "a job nobody takes")
    assert worker_state() == ("ok", "stalled")
    worker_consumed(settings.JOBS_QUEUE)  # a jobs worker began it
    assert worker_state() == ("ok", "ok")


def test_the_default_queue_keeps_its_heartbeat_key(queues):
    _, settings = queues
    assert consumed_key(None) == consumed_key(settings.CELERY_TASK_DEFAULT_QUEUE) == CONSUMED_KEY
    assert consumed_key(settings.JOBS_QUEUE) != CONSUMED_KEY


@pytest.mark.parametrize(("mode", "expected"), [("transaction", "True"), (None, "False")])
def test_behind_a_transaction_pooler_rows_are_read_with_client_side_cursors(mode, expected):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_P"))}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        SECRET_KEY=PROPER_KEY,
        ALLOWED_HOSTS="concord.example.org",
    )
    if mode:
        env["DATABASE_POOL_MODE"] = mode
    probe = (
        "from django.conf import settings as s; "
        "print(s.DATABASES['default'].get('DISABLE_SERVER_SIDE_CURSORS', False))"
    )
    result = manage("shell", "-v", "0", "-c", probe, env=env)
    assert result.stdout.split() == [expected], result.stderr
