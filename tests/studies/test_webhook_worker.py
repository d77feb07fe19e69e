"""A real Celery worker delivers webhooks: after commit, with a retry after its wait, and
counts rating milestones in its own process."""

import json
import time
from datetime import datetime

import pytest

from studies.models import Webhook, WebhookDelivery
from studies.services import study_close
from studies.services.webhooks import webhook_add
from tests.agreement.test_worker import queue, start_worker, stop_worker  # noqa: F401
from tests.payloads import payload_for, submit

from ..factories import UserFactory, make_study
from .webhook_receiver import Answer, receiver_running

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def receiver(settings):
    yield from receiver_running(settings)


@pytest.fixture
def webhook_worker(queue, monkeypatch):  # noqa: F811 (the fixture imported above)
    # The worker reads its settings from the environment: the local receiver, a short wait.
    monkeypatch.setenv("WEBHOOK_ALLOW_PRIVATE_ADDRESSES", "true")
    monkeypatch.setenv("WEBHOOK_RETRY_SECONDS", "1")
    process = start_worker(queue)
    yield process
    print(stop_worker(process)[-4000:])


def wait_for(condition, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError("not within the time allowed")


def test_the_worker_delivers_retries_and_counts_milestones(webhook_worker, receiver):
    study = make_study(slug="worker-hooks", cases=2, raters=[UserFactory()])
    receiver.answers = [Answer(500, b"not yet"), Answer(200)]
    webhook_add(
        study=study,
        actor=study.lead,
        url=receiver.url(),
        events=["study.closed", "rating.milestone"],
        milestone_every=1,
    )
    assignment = study.memberships.get(role="rater").assignments.order_by("position").first()
    submit(assignment, payload_for(1))  # committed: the worker counts one rating
    # Its first attempt made (and failed) before the closing is sent: the order is known.
    milestones = WebhookDelivery.objects.filter(event=Webhook.Event.RATING_MILESTONE)
    wait_for(lambda: any(delivery.attempts for delivery in milestones.all()))
    study_close(study=study, actor=study.lead)

    def delivered(event):
        return WebhookDelivery.objects.filter(event=event, status="delivered").first()

    milestone = wait_for(lambda: delivered(Webhook.Event.RATING_MILESTONE))
    closed = wait_for(lambda: delivered(Webhook.Event.STUDY_CLOSED))
    assert milestone.payload["data"] == {"milestone": 1, "submitted": 1, "every": 1}
    # The milestone met the receiver's 500 and was tried again after its wait (1 s here).
    first, second = milestone.attempts
    assert (first["status_code"], second["status_code"]) == (500, 200)
    waited = datetime.fromisoformat(second["at"]) - datetime.fromisoformat(first["at"])
    assert waited.total_seconds() >= 1
    assert [a["status_code"] for a in closed.attempts] == [200]
    events = [json.loads(r.body)["event"] for r in receiver.received]
    assert sorted(events) == ["rating.milestone", "rating.milestone", "study.closed"]
