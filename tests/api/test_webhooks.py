"""The webhooks over the API: the study lead registers, reads deliveries, replays, removes."""

import json

import pytest

from studies.models import StudyEvent, Webhook, WebhookDelivery
from studies.webhooks import webhook_signature_valid
from tests.factories import UserFactory, make_study
from tests.studies.webhook_receiver import Answer, receiver_running


@pytest.fixture
def receiver(settings):
    yield from receiver_running(settings)


@pytest.fixture
def study(lead_user):
    return make_study(lead=lead_user, slug="api-hooks", cases=2, raters=[UserFactory()])


def test_a_pipeline_registers_a_webhook_and_follows_its_deliveries(
    study, lead_user, api_as, receiver
):
    api = api_as(lead_user)
    response = api(
        "POST",
        "studies/api-hooks/webhooks/",
        {"url": receiver.url(), "events": ["study.closed"], "milestone_every": 50},
    )
    assert response.status_code == 201, response.json()
    created = response.json()
    secret, hook = created["secret"], created["webhook"]
    assert hook["events"] == ["study.closed"] and hook["milestone_every"] == 50
    listed = api("GET", "studies/api-hooks/webhooks/").json()
    assert listed["count"] == 1 and listed["results"][0]["id"] == hook["id"]
    # The secret is shown once: never in a read.
    assert secret not in json.dumps(listed)
    one = api("GET", f"studies/api-hooks/webhooks/{hook['id']}/").json()
    assert secret not in json.dumps(one) and one["url"] == receiver.url()

    receiver.answers = [Answer(500, b"later"), Answer(200)]
    assert (
        api("POST", "studies/api-hooks/status/", {"action": "close", "confirm": True}).status_code
        == 200
    )
    received = receiver.received[-1]
    assert webhook_signature_valid(
        secret=secret, header=received.headers["Concord-Signature"], body=received.body
    )
    deliveries = api("GET", f"studies/api-hooks/webhooks/{hook['id']}/deliveries/").json()
    [delivery] = deliveries["results"]
    assert delivery["event"] == "study.closed" and delivery["status"] == "delivered"
    assert [a["status_code"] for a in delivery["attempts"]] == [500, 200]
    assert delivery["attempts"][0]["error"] == "HTTP 500: later"

    replayed = api(
        "POST",
        f"studies/api-hooks/webhooks/{hook['id']}/deliveries/{delivery['id']}/replay/",
    )
    assert replayed.status_code == 202
    replay = replayed.json()
    assert replay["event_id"] == delivery["event_id"] and replay["replay_of"] == delivery["id"]
    assert replay["status"] == "delivered"
    assert json.loads(receiver.received[-1].body)["id"] == delivery["event_id"]

    assert api("DELETE", f"studies/api-hooks/webhooks/{hook['id']}/").status_code == 204
    assert api("GET", f"studies/api-hooks/webhooks/{hook['id']}/").status_code == 404
    kinds = set(study.events.values_list("kind", flat=True))
    assert {
        StudyEvent.Kind.WEBHOOK_ADDED,
        StudyEvent.Kind.WEBHOOK_REPLAYED,
        StudyEvent.Kind.WEBHOOK_REMOVED,
    } <= kinds


@pytest.mark.parametrize(
    "body, problem",
    [
        ({"url": "ftp://example.org/", "events": ["study.closed"]}, "url: Use an http"),
        ({"url": "http://10.1.1.1/", "events": ["study.closed"]}, "not a public address"),
        ({"url": "https://example.org/", "events": []}, "events: choose"),
        ({"url": "https://example.org/", "events": ["nope"]}, "events: choose"),
        ({"url": "https://example.org/", "events": "study.closed"}, "events: choose"),
        (
            {"url": "https://example.org/", "events": ["study.closed"], "milestone_every": "x"},
            "milestone_every",
        ),
        (
            {"url": "https://example.org/", "events": ["study.closed"], "secret": "mine"},
            "secret: not a field",
        ),
        ({"events": ["study.closed"]}, "url: Give the URL"),
        ({"url": ["https://example.org/"], "events": ["study.closed"]}, "url: Give the URL"),
    ],
)
def test_bad_input_is_a_400_that_writes_nothing(study, lead_user, api_as, body, problem):
    response = api_as(lead_user)("POST", "studies/api-hooks/webhooks/", body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert any(problem in line for line in error["problems"]), error
    assert not Webhook.objects.exists()
    assert not study.events.filter(kind=StudyEvent.Kind.WEBHOOK_ADDED).exists()


def test_another_studys_webhook_is_not_found(study, lead_user, api_as):
    other_lead = UserFactory()
    other = make_study(lead=other_lead, slug="other-hooks", cases=1)
    hook = Webhook.objects.create(
        study=other, url="https://example.org/", events=["study.closed"], secret="whsec_x"
    )
    delivery = WebhookDelivery.objects.create(webhook=hook, event="study.closed")
    api = api_as(lead_user)
    # Under the lead's own study, another study's webhook does not exist.
    assert api("GET", f"studies/api-hooks/webhooks/{hook.uuid}/").status_code == 404
    path = f"studies/api-hooks/webhooks/{hook.uuid}/deliveries/{delivery.uuid}/replay/"
    assert api("POST", path).status_code == 404
    assert WebhookDelivery.objects.count() == 1
