"""Under pytest-xdist each test process has its own PostgreSQL and Redis databases."""

import os

import pytest
from django.conf import settings
from django.db import connection

from tests.conftest import redis_url_for_worker


def test_a_worker_moves_the_redis_index_by_its_number_and_keeps_the_rest():
    assert redis_url_for_worker("redis://:pw@cache:6380/7?timeout=1", 2) == (
        "redis://:pw@cache:6380/9?timeout=1"
    )
    assert redis_url_for_worker("redis://127.0.0.1:6379", 1) == "redis://127.0.0.1:6379/1"


def test_a_worker_past_the_last_redis_database_is_refused():
    with pytest.raises(pytest.UsageError, match="past the last one"):
        redis_url_for_worker("redis://127.0.0.1:6379/14", 2)


def test_this_process_its_children_and_its_database_agree(request, db):
    worker = getattr(request.config, "workerinput", {}).get("workerid")
    if worker is None:
        pytest.skip("not under pytest-xdist")
    # The processes a test starts (Celery workers, manage.py) read the environment.
    assert os.environ["REDIS_URL"] == settings.REDIS_URL
    if "CELERY_BROKER_URL" not in os.environ:  # the broker follows REDIS_URL
        assert settings.CELERY_BROKER_URL == settings.REDIS_URL
    assert connection.settings_dict["NAME"].endswith(f"_{worker}")
