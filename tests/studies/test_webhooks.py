"""Webhooks: what the lead registers, what is sent for each event, signed, retried, replayed,
and the narrow way out (public addresses only, no redirects, bounded answers)."""

import json

import pytest
from django.utils import timezone

from studies.models import Study, StudyEvent, Webhook, WebhookDelivery
from studies.services import study_close
from studies.services.webhooks import (
    MAX_WEBHOOKS_PER_STUDY,
    WebhookError,
    retry_wait,
    webhook_add,
    webhook_delivery_attempt,
    webhook_delivery_replay,
    webhook_event_announce,
    webhook_remove,
)
from studies.webhooks import webhook_signature, webhook_signature_valid

from ..factories import UserFactory, make_study
from ..payloads import payload_for, submit
from .webhook_receiver import Answer, Receiver, receiver_running


@pytest.fixture
def receiver(settings):
    yield from receiver_running(settings)


@pytest.fixture
def study(db):
    return make_study(slug="hooked", cases=3, raters=[UserFactory(), UserFactory()])


def add(study, url, events=("study.closed",), every=100):
    return webhook_add(
        study=study, actor=study.lead, url=url, events=list(events), milestone_every=every
    )


def bodies(receiver):
    return [json.loads(r.body) for r in receiver.received]


# Registering ------------------------------------------------------------------------------


def test_the_lead_adds_a_webhook_and_gets_its_secret_once(study, receiver):
    webhook, secret = add(study, receiver.url())
    assert secret.startswith("whsec_") and len(secret) > 40
    assert webhook.secret == secret
    event = study.events.get(kind=StudyEvent.Kind.WEBHOOK_ADDED)
    # The history names the host, never the path (which may hold the receiver's token).
    assert event.detail["host"] == "127.0.0.1" and "/hook" not in json.dumps(event.detail)


def test_only_the_lead_adds_or_removes_one(study, receiver):
    coordinator = UserFactory(is_staff=True)
    with pytest.raises(WebhookError):
        webhook_add(study=study, actor=coordinator, url=receiver.url(), events=["study.closed"])
    webhook, _ = add(study, receiver.url())
    with pytest.raises(WebhookError):
        webhook_remove(webhook=webhook, actor=coordinator)
    webhook_remove(webhook=webhook, actor=study.lead)
    assert not Webhook.objects.exists()
    assert study.events.filter(kind=StudyEvent.Kind.WEBHOOK_REMOVED).count() == 1


@pytest.mark.parametrize(
    "url, says",
    [
        ("ftp://example.org/hook", "http:// or https://"),
        ("javascript:alert(1)", "http:// or https://"),
        ("https:///nohost", "no host"),
        ("https://user:pw@example.org/", "no user name"),
        ("http://10.0.0.5/hook", "not a public address"),
        ("http://169.254.169.254/latest/meta-data", "not a public address"),
        ("http://[::1]:8000/", "not a public address"),
        ("http://localhost:8000/", "not a public address"),
        # 127.0.0.1 and 10.0.0.1 as a resolver also reads them: decimal, hex, octal, short.
        ("http://2130706433/", "127.0.0.1 is not a public address"),
        ("http://0x7f000001/", "127.0.0.1 is not a public address"),
        ("http://0177.0.0.1/", "127.0.0.1 is not a public address"),
        ("http://127.1/", "127.0.0.1 is not a public address"),
        ("http://10.1/hook", "10.0.0.1 is not a public address"),
        # The same with the DNS root's trailing dot, and the names under localhost.
        ("http://127.0.0.1./", "127.0.0.1 is not a public address"),
        ("http://169.254.169.254./latest/meta-data", "169.254.169.254 is not a public"),
        ("http://0x7f000001./", "127.0.0.1 is not a public address"),
        ("http://localhost.:8000/", "localhost is not a public address"),
        ("http://api.localhost/", "localhost is not a public address"),
        ("https://example.org/" + "a" * 2000, "longer than"),
    ],
)
def test_a_bad_url_is_refused_and_nothing_is_written(study, url, says):
    with pytest.raises(WebhookError) as refused:
        add(study, url)
    assert says in " ".join(refused.value.problems)
    assert not Webhook.objects.exists()
    assert not study.events.filter(kind=StudyEvent.Kind.WEBHOOK_ADDED).exists()


@pytest.mark.parametrize("events", [[], ["study.opened"], ["study.closed", "study.closed"], "x"])
def test_events_must_be_known_and_named_once(study, events):
    with pytest.raises(WebhookError):
        webhook_add(study=study, actor=study.lead, url="https://example.org/", events=events)


@pytest.mark.parametrize("every", [0, -1, 1_000_001, True, "10"])
def test_the_milestone_step_is_bounded(study, every):
    with pytest.raises(WebhookError):
        add(study, "https://example.org/", every=every)


def test_a_study_has_a_bounded_number_of_webhooks(study):
    for n in range(MAX_WEBHOOKS_PER_STUDY):
        add(study, f"https://example.org/{n}")
    with pytest.raises(WebhookError, match="at most"):
        add(study, "https://example.org/one-more")


# Delivering -------------------------------------------------------------------------------


def test_closing_the_study_is_delivered_signed(study, receiver):
    webhook, secret = add(study, receiver.url())
    study_close(study=study, actor=study.lead)
    [received] = receiver.received
    body = json.loads(received.body)
    assert body["event"] == "study.closed" and body["study"] == "hooked"
    study.refresh_from_db()
    assert body["data"] == {"closed_at": study.closed_at.isoformat()}
    # The receiver checks the signature over the timestamp and the body, with the secret.
    header = received.headers["Concord-Signature"]
    assert webhook_signature_valid(secret=secret, header=header, body=received.body)
    assert not webhook_signature_valid(secret="whsec_other", header=header, body=received.body)
    assert not webhook_signature_valid(secret=secret, header=header, body=received.body + b" ")
    assert received.headers["Concord-Event-Id"] == body["id"]
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == WebhookDelivery.Status.DELIVERED
    assert str(delivery.event_id) == body["id"] and delivery.delivered_at is not None
    [attempt] = delivery.attempts
    assert attempt["status_code"] == 200 and attempt["error"] == ""


def test_the_signature_is_hmac_sha256_over_timestamp_and_body():
    # Checked by hand against Python's hmac, the receiver's side of docs/coordinator.md.
    import hashlib
    import hmac

    body = b'{"event":"study.closed"}'
    expected = hmac.new(b"whsec_k", b"1700000000." + body, hashlib.sha256).hexdigest()
    assert webhook_signature(secret="whsec_k", timestamp=1700000000, body=body) == (
        f"t=1700000000,v1={expected}"
    )


def test_a_webhook_hears_only_the_events_it_asked_for(study, receiver):
    add(study, receiver.url(), events=["analysis.ready"])
    study_close(study=study, actor=study.lead)
    assert receiver.received == [] and not WebhookDelivery.objects.exists()


def test_a_failed_attempt_is_retried_with_a_growing_wait_and_each_recorded(study, receiver):
    receiver.answers = [Answer(500, b"down"), Answer(503, b"busy"), Answer(200)]
    add(study, receiver.url())
    before = timezone.now()
    study_close(study=study, actor=study.lead)
    # The tests run tasks inline: the retries came at once instead of after their waits.
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == WebhookDelivery.Status.DELIVERED
    assert [a["status_code"] for a in delivery.attempts] == [500, 503, 200]
    assert delivery.attempts[0]["error"] == "HTTP 500: down"
    assert all(a["at"] >= before.isoformat() for a in delivery.attempts)
    # Every attempt carries the same event id and body.
    assert len({r.body for r in receiver.received}) == 1
    assert len({r.headers["Concord-Event-Id"] for r in receiver.received}) == 1


def test_the_wait_doubles_up_to_its_cap(settings):
    settings.WEBHOOK_RETRY_SECONDS = 30
    settings.WEBHOOK_RETRY_MAX_SECONDS = 3600
    assert [retry_wait(n) for n in range(1, 10)] == [
        30, 60, 120, 240, 480, 960, 1920, 3600, 3600,
    ]  # fmt: skip


def test_after_the_last_attempt_the_delivery_has_failed(study, receiver, settings):
    settings.WEBHOOK_MAX_ATTEMPTS = 4
    receiver.answers = [Answer(500)]
    add(study, receiver.url())
    study_close(study=study, actor=study.lead)
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == WebhookDelivery.Status.FAILED
    assert len(delivery.attempts) == 4 and len(receiver.received) == 4
    assert delivery.next_attempt_at is None
    # A task delivered twice finds it ended, and sends nothing.
    webhook_delivery_attempt(delivery_id=delivery.pk)
    assert len(receiver.received) == 4


def test_a_pending_retry_is_recorded_when_the_worker_waits(study, receiver, settings):
    # With a worker, a failed attempt leaves the delivery pending until its next attempt.
    from unittest import mock

    receiver.answers = [Answer(500)]
    add(study, receiver.url())
    with mock.patch("studies.services.webhooks._send_schedule") as later:
        study_close(study=study, actor=study.lead)
        delivery = WebhookDelivery.objects.get()
        webhook_delivery_attempt(delivery_id=delivery.pk)
    delivery.refresh_from_db()
    assert delivery.status == WebhookDelivery.Status.PENDING
    wait = (delivery.next_attempt_at - timezone.now()).total_seconds()
    assert 0 < wait <= settings.WEBHOOK_RETRY_SECONDS
    assert later.call_args.kwargs == {"countdown": settings.WEBHOOK_RETRY_SECONDS}


def test_a_replay_sends_the_same_event_again_and_is_recorded(study, receiver):
    add(study, receiver.url())
    study_close(study=study, actor=study.lead)
    first = WebhookDelivery.objects.get()
    replay = webhook_delivery_replay(delivery=first, actor=study.lead)
    replay.refresh_from_db()
    assert replay.status == WebhookDelivery.Status.DELIVERED
    assert replay.event_id == first.event_id and replay.replay_of == first
    assert replay.uuid != first.uuid
    one, two = receiver.received
    assert one.body == two.body  # the receiver deduplicates on the id in it
    assert one.headers["Concord-Delivery"] != two.headers["Concord-Delivery"]
    assert study.events.filter(kind=StudyEvent.Kind.WEBHOOK_REPLAYED).count() == 1
    with pytest.raises(WebhookError):
        webhook_delivery_replay(delivery=first, actor=UserFactory())


def test_a_removed_webhook_is_sent_nothing_more(study, receiver):
    webhook, _ = add(study, receiver.url())
    webhook_remove(webhook=webhook, actor=study.lead)
    study_close(study=study, actor=study.lead)
    assert receiver.received == []


# The narrow way out -----------------------------------------------------------------------


def test_a_private_address_is_refused_at_delivery_time(study, receiver, settings):
    add(study, receiver.url())
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    study_close(study=study, actor=study.lead)
    assert receiver.received == []
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == WebhookDelivery.Status.FAILED
    assert "not a public address" in delivery.attempts[0]["error"]


def test_a_host_resolving_to_a_private_address_is_refused(study, receiver, settings):
    # A public-looking name whose DNS answer is private is refused after resolving.
    from unittest import mock

    url = receiver.url().replace("127.0.0.1", "hooks.example.org")
    add(study, url)
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = False
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    answer = [(2, 1, 6, "", ("10.1.2.3", 80))]
    with mock.patch("studies.webhook_transport.socket.getaddrinfo", return_value=answer):
        study_close(study=study, actor=study.lead)
    assert receiver.received == []
    error = WebhookDelivery.objects.get().attempts[0]["error"]
    assert "resolves to 10.1.2.3, which is not a public address" in error


def test_a_redirect_is_not_followed(study, receiver, settings):
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    receiver.answers = [Answer(302, b"", headers={"Location": "http://127.0.0.1:1/inside"})]
    add(study, receiver.url())
    study_close(study=study, actor=study.lead)
    assert len(receiver.received) == 1
    attempt = WebhookDelivery.objects.get().attempts[0]
    assert attempt["status_code"] == 302 and "not followed" in attempt["error"]


def test_a_large_answer_is_read_only_in_part(study, receiver, settings):
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    receiver.answers = [Answer(500, b"x" * 3_000_000)]
    add(study, receiver.url())
    study_close(study=study, actor=study.lead)
    error = WebhookDelivery.objects.get().attempts[0]["error"]
    assert error.startswith("HTTP 500: xxx") and len(error) <= 500


def test_a_receiver_that_does_not_answer_in_time_is_an_error(study, receiver, settings):
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    settings.WEBHOOK_TIMEOUT_SECONDS = 0.2
    receiver.answers = [Answer(200, delay=1.0)]
    add(study, receiver.url())
    study_close(study=study, actor=study.lead)
    delivery = WebhookDelivery.objects.get()
    assert delivery.status == WebhookDelivery.Status.FAILED
    assert "timed out" in delivery.attempts[0]["error"].lower()


def test_https_checks_the_receivers_certificate(study, settings, tmp_path):
    settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    server = Receiver(tls_dir=tmp_path)
    try:
        add(study, server.url())
        study_close(study=study, actor=study.lead)
    finally:
        server.close()
    assert server.received == []
    error = WebhookDelivery.objects.get().attempts[0]["error"]
    assert "CERTIFICATE_VERIFY_FAILED" in error


def test_an_unknown_event_is_a_programming_error(study):
    with pytest.raises(ValueError):
        webhook_event_announce(study_id=study.pk, event="study.renamed")


# The events -------------------------------------------------------------------------------


def test_rating_milestones_are_sent_once_each(study, receiver, django_capture_on_commit_callbacks):
    add(study, receiver.url(), events=["rating.milestone"], every=2)
    assignments = [
        a for rater in study.memberships.filter(role="rater") for a in rater.assignments.all()
    ]
    for n, assignment in enumerate(assignments[:5]):
        with django_capture_on_commit_callbacks(execute=True):
            submit(assignment, payload_for(n))
    # Resubmitting a case adds no rating: no milestone.
    with django_capture_on_commit_callbacks(execute=True):
        submit(assignments[0], payload_for(9))
    milestones = [b["data"] for b in bodies(receiver) if b["event"] == "rating.milestone"]
    assert milestones == [
        {"milestone": 2, "submitted": 2, "every": 2},
        {"milestone": 4, "submitted": 4, "every": 2},
    ]


def test_a_webhook_added_later_hears_only_later_milestones(
    study, receiver, django_capture_on_commit_callbacks
):
    assignments = list(study.memberships.filter(role="rater").first().assignments.all())
    for n, assignment in enumerate(assignments[:3]):
        submit(assignment, payload_for(n))
    webhook, _ = add(study, receiver.url(), events=["rating.milestone"], every=2)
    assert webhook.last_milestone == 2
    with django_capture_on_commit_callbacks(execute=True):
        submit(assignments[0], payload_for(7))  # a revision: still three
    assert receiver.received == []


def test_agreement_recomputed_is_announced(study, receiver, django_capture_on_commit_callbacks):
    add(study, receiver.url(), events=["agreement.recomputed"])
    assignment = study.memberships.filter(role="rater").first().assignments.first()
    with django_capture_on_commit_callbacks(execute=True):
        submit(assignment, payload_for(1))
    [body] = bodies(receiver)
    assert body["event"] == "agreement.recomputed"
    assert set(body["data"]) == {"run", "computed_at"} and body["data"]["run"] >= 1


def test_analysis_ready_is_announced(study, receiver):
    from agreement.analysis.jobs import analysis_job_start, ranking_analysis

    add(study, receiver.url(), events=["analysis.ready"])
    analysis_job_start(analysis=ranking_analysis(study=study), requested_by=study.lead)
    [body] = bodies(receiver)
    assert body["event"] == "analysis.ready" and body["data"] == {"analysis": "ranking"}


def test_the_study_stays_closed_when_its_webhook_fails(study, receiver, settings):
    settings.WEBHOOK_MAX_ATTEMPTS = 1
    receiver.answers = [Answer(500)]
    add(study, receiver.url())
    study_close(study=study, actor=study.lead)
    study.refresh_from_db()
    assert study.is_closed
    assert Study.objects.get(pk=study.pk).closed_at is not None


def test_a_rating_costs_one_query_of_the_webhooks_when_the_study_has_none(
    study, django_capture_on_commit_callbacks
):
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    first, second = study.memberships.filter(role="rater").first().assignments.all()[:2]
    # Two ratings in one transaction, as an import writes them.
    with django_capture_on_commit_callbacks(execute=False) as callbacks, transaction.atomic():
        submit(first, payload_for(1))
        submit(second, payload_for(2))
    webhook_callbacks = [c for c in callbacks if hasattr(c, "webhook_study_id")]
    assert len(webhook_callbacks) == 1  # one per transaction, however many ratings
    with CaptureQueriesContext(connection) as queries:
        webhook_callbacks[0]()
    assert len(queries) == 1 and "studies_webhook" in queries[0]["sql"]
