"""The lead's Webhooks page and the admin's replay action."""

import json

import pytest
from django.urls import reverse

from studies.models import Membership, StudyEvent, Webhook, WebhookDelivery
from studies.services import membership_add, study_close
from studies.services.webhooks import webhook_add

from ..factories import UserFactory, make_study
from .webhook_receiver import Answer, receiver_running


@pytest.fixture
def receiver(settings):
    yield from receiver_running(settings)


@pytest.fixture
def study(db):
    return make_study(slug="paged-hooks", cases=2, raters=[UserFactory()])


def test_the_lead_adds_a_webhook_on_the_page_and_sees_its_secret_once(client, study, receiver):
    client.force_login(study.lead)
    url = reverse("studies:webhooks", args=[study.slug])
    added = client.post(
        url, {"url": receiver.url(), "events": ["study.closed"], "milestone_every": "10"}
    )
    assert added.status_code == 200 and "no-store" in added["Cache-Control"]
    webhook = Webhook.objects.get()
    assert webhook.secret in added.text
    again = client.get(url)
    assert receiver.url() in again.text and webhook.secret not in again.text
    # The settings page links to it, for the lead.
    assert url in client.get(reverse("studies:edit", args=[study.slug])).text


def test_a_refused_webhook_says_why_and_adds_nothing(client, study):
    client.force_login(study.lead)
    page = client.post(
        reverse("studies:webhooks", args=[study.slug]),
        {"url": "http://192.168.1.10/hook", "events": ["study.closed"], "milestone_every": "5"},
    )
    assert page.status_code == 400 and "not a public address" in page.text
    assert not Webhook.objects.exists()


def test_a_coordinator_cannot_see_the_leads_webhooks(client, study):
    coordinator = UserFactory()
    membership_add(study=study, user=coordinator, role=Membership.Role.COORDINATOR)
    webhook_add(
        study=study, actor=study.lead, url="https://example.org/t0k3n", events=["study.closed"]
    )
    client.force_login(coordinator)
    assert client.get(reverse("studies:webhooks", args=[study.slug])).status_code == 403
    settings_page = client.get(reverse("studies:edit", args=[study.slug])).text
    assert reverse("studies:webhooks", args=[study.slug]) not in settings_page
    # The history names the host only, never the URL's path.
    assert "t0k3n" not in json.dumps(list(study.events.values_list("detail", flat=True)))


def test_deliveries_are_listed_with_their_attempts_and_replayed(client, study, receiver):
    receiver.answers = [Answer(500, b"oops"), Answer(200)]
    webhook, _ = webhook_add(
        study=study, actor=study.lead, url=receiver.url(), events=["study.closed"]
    )
    study_close(study=study, actor=study.lead)
    delivery = WebhookDelivery.objects.get()
    client.force_login(study.lead)
    page = client.get(reverse("studies:webhook", args=[study.slug, webhook.uuid])).text
    assert "HTTP 500: oops" in page and str(delivery.event_id) in page
    replay = client.post(
        reverse("studies:webhook_replay", args=[study.slug, webhook.uuid, delivery.uuid])
    )
    assert replay.status_code == 302
    assert WebhookDelivery.objects.filter(event_id=delivery.event_id).count() == 2
    client.post(reverse("studies:webhook_remove", args=[study.slug, webhook.uuid]))
    assert not Webhook.objects.exists() and not WebhookDelivery.objects.exists()


def test_the_admin_replays_a_delivery_through_the_service(client, study, receiver):
    webhook_add(study=study, actor=study.lead, url=receiver.url(), events=["study.closed"])
    study_close(study=study, actor=study.lead)
    delivery = WebhookDelivery.objects.get()
    admin = UserFactory(is_staff=True, is_superuser=True)
    client.force_login(admin)
    change = client.get(reverse("admin:studies_webhookdelivery_change", args=[delivery.pk]))
    assert change.status_code == 200 and 'name="payload"' not in change.text
    secret = Webhook.objects.get().secret
    assert secret not in client.get(reverse("admin:studies_webhook_changelist")).text
    client.post(
        reverse("admin:studies_webhookdelivery_changelist"),
        {"action": "replay", "_selected_action": [delivery.pk]},
    )
    replay = WebhookDelivery.objects.exclude(pk=delivery.pk).get()
    assert replay.event_id == delivery.event_id and replay.status == "delivered"
    event = study.events.get(kind=StudyEvent.Kind.WEBHOOK_REPLAYED)
    assert event.actor == admin
    assert len(receiver.received) == 2
