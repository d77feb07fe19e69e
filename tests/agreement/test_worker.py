"""A real Celery worker, Redis and PostgreSQL: submissions through the views produce fresh results."""

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import redis
from django.conf import settings as django_settings
from django.db import connection
from django.urls import reverse

from agreement import services
from agreement.models import StudyAgreement
from annotation.services import rating_submit
from config.celery import app as celery_app

from ..factories import UserFactory, full_marks_payload, make_study

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]


def database_url() -> str:
    db = connection.settings_dict
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{user}{password}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


@pytest.fixture
def worker(settings):
    """Start a worker on a queue of its own, against the test database; route tasks to it."""
    queue = f"concord-test-{uuid.uuid4().hex[:8]}"
    client = redis.Redis.from_url(django_settings.REDIS_URL)
    for key in client.scan_iter("concord:agreement:*"):
        client.delete(key)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": database_url(),
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "CELERY_QUEUE": queue,
        "AGREEMENT_BOOTSTRAP_RESAMPLES": "2000",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-P", "solo", "-Q", queue,
         "--without-gossip", "--without-mingle", "--without-heartbeat", "--loglevel=INFO"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.AGREEMENT_BOOTSTRAP_RESAMPLES = 2000
    previous = (celery_app.conf.task_always_eager, celery_app.conf.task_default_queue)
    celery_app.conf.task_always_eager = False
    celery_app.conf.task_default_queue = queue
    try:
        yield process
    finally:
        celery_app.conf.task_always_eager, celery_app.conf.task_default_queue = previous
        process.terminate()
        try:
            output, _ = process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
        client.delete(queue)
        print(output[-4000:])


def wait_until_fresh(study, *, timeout=60.0) -> StudyAgreement:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        agreement = StudyAgreement.objects.filter(study=study).first()
        if agreement and agreement.computed and not agreement.is_stale:
            return agreement
        time.sleep(0.2)
    raise AssertionError(f"no fresh result within {timeout} s: {agreement and vars(agreement)}")


def test_ratings_submitted_through_the_views_produce_a_fresh_result(worker, client):
    rater = UserFactory()
    study = make_study(slug="worker-views", cases=3, raters=[rater, UserFactory()], consented=True)
    client.force_login(rater)
    for assignment in study.memberships.get(user=rater).assignments.all():
        response = client.post(
            reverse("annotation:rate", args=[assignment.uuid]),
            {"payload": json.dumps(full_marks_payload()), "version": "0"},
        )
        assert response.status_code == 302
    agreement = wait_until_fresh(study)
    assert agreement.requested == 3
    assert agreement.n_ratings == 6
    assert agreement.result["raters"] == ["R-01"]


def test_a_burst_of_one_hundred_submissions_is_coalesced(worker):
    raters = [UserFactory() for _ in range(5)]
    study = make_study(slug="worker-burst", cases=20, raters=raters)
    assignments = [a for m in study.memberships.all() for a in m.assignments.all()]
    assert len(assignments) == 100
    for assignment in assignments:
        rating_submit(assignment=assignment, payload=full_marks_payload(), expected_version=0)
    agreement = wait_until_fresh(study)
    assert agreement.requested == 100
    assert agreement.n_ratings == 200
    # At most one running and one pending per study: a handful of runs, not 100.
    assert 1 <= agreement.runs <= 10


def test_nothing_is_lost_when_the_broker_is_down_at_submit_time(worker, settings, client):
    rater = UserFactory()
    study = make_study(slug="worker-outage", cases=2, raters=[rater], consented=True)
    working_url = settings.REDIS_URL
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # a closed port
    client.force_login(rater)
    for assignment in study.memberships.get(user=rater).assignments.all():
        response = client.post(
            reverse("annotation:rate", args=[assignment.uuid]),
            {"payload": json.dumps(full_marks_payload()), "version": "0"},
        )
        assert response.status_code == 302
    agreement = StudyAgreement.objects.get(study=study)
    assert agreement.is_stale and agreement.computed == 0
    assert study.test_cases.filter(assignments__ratings__isnull=False).distinct().count() == 2
    # The broker is back: the periodic sweep enqueues the study and the worker catches up.
    settings.REDIS_URL = working_url
    assert services.agreement_sweep() == [study.pk]
    agreement = wait_until_fresh(study)
    assert agreement.n_ratings == 4
