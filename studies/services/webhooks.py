"""Webhooks: the lead adds and removes them; study events become deliveries; the worker
sends each, retrying with a growing wait; a delivery can be replayed.

Any app announces an event with ``webhook_event_announce`` (one line where it happens).
Inside a transaction the deliveries are written with it and sent once it commits, so a
rolled-back change announces nothing. Rating milestones are counted on the worker, not on
the rating's request: the announcement only asks for a count once the rating commits.

Locks (``studies.locks``' order): adding or removing holds the study row; a milestone holds
its webhook row, an attempt its delivery row, each alone and never across a request.
"""

import logging
import time
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from jobs.runner import job_schedule, jobs_run_mode
from studies.errors import StudySetupError
from studies.events import study_event_record
from studies.models import Study, StudyEvent, Webhook, WebhookDelivery
from studies.webhook_transport import post, url_problem
from studies.webhooks import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    EVENT_ID_HEADER,
    MILESTONE_EVERY_MAX,
    SIGNATURE_HEADER,
    submitted_count,
    webhook_body,
    webhook_payload,
    webhook_secret_new,
    webhook_signature,
)

from .guards import locked_study

logger = logging.getLogger(__name__)

MAX_WEBHOOKS_PER_STUDY = 10
# An attempt still marked as sending after this long died with its worker: it may be retried.
SENDING_STALE = timedelta(minutes=10)
Event = Webhook.Event
Status = WebhookDelivery.Status


class WebhookError(StudySetupError):
    """A webhook cannot be added, removed or replayed; the message says why."""


def _refuse_unless_lead(study: Study, actor) -> None:
    if getattr(actor, "pk", None) != study.lead_id:
        raise WebhookError("Only the study lead manages the study's webhooks.")


def webhook_input_problems(*, url, events, milestone_every) -> list[str]:
    """What is wrong with a webhook's fields, each as a line; empty when nothing is."""
    problems = []
    problem = url_problem(url)
    if problem:
        problems.append(f"url: {problem}")
    if (
        not isinstance(events, list)
        or not events
        or not all(isinstance(e, str) and e in Event.values for e in events)
    ):
        problems.append(f"events: choose one or more of {', '.join(Event.values)}.")
    elif len(set(events)) != len(events):
        problems.append("events: name each event once.")
    if (
        not isinstance(milestone_every, int)
        or isinstance(milestone_every, bool)
        or not 1 <= milestone_every <= MILESTONE_EVERY_MAX
    ):
        problems.append(f"milestone_every: a whole number from 1 to {MILESTONE_EVERY_MAX:,}.")
    return problems


@transaction.atomic
def webhook_add(
    *, study: Study, actor: User, url: str, events: list[str], milestone_every: int = 100
) -> tuple[Webhook, str]:
    """Register ``url`` for the study's ``events``; returns the webhook and its secret, which
    is shown this once."""
    study = locked_study(study)  # one add at a time: the count below stays true
    _refuse_unless_lead(study, actor)
    problems = webhook_input_problems(url=url, events=events, milestone_every=milestone_every)
    if problems:
        raise WebhookError("The webhook has problems; nothing was added.", problems=problems)
    if study.webhooks.count() >= MAX_WEBHOOKS_PER_STUDY:
        raise WebhookError(
            f"A study has at most {MAX_WEBHOOKS_PER_STUDY} webhooks; remove one first."
        )
    secret = webhook_secret_new()
    # Milestones already passed are not announced to a webhook added later.
    passed = submitted_count(study_id=study.pk) // milestone_every * milestone_every
    webhook = Webhook.objects.create(
        study=study,
        url=url.strip(),
        events=[e for e in Event.values if e in events],
        milestone_every=milestone_every,
        last_milestone=passed,
        secret=secret,
        created_by=actor,
    )
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.WEBHOOK_ADDED,
        webhook=str(webhook.uuid),
        # The host only: a URL's path or query may hold a receiver's own token.
        host=url_host(webhook.url),
        events=webhook.events,
    )
    return webhook, secret


def url_host(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).hostname or ""


@transaction.atomic
def webhook_remove(*, webhook: Webhook, actor: User) -> None:
    """Remove the webhook with its deliveries; nothing more is sent to it."""
    study = locked_study(webhook.study)
    _refuse_unless_lead(study, actor)
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.WEBHOOK_REMOVED,
        webhook=str(webhook.uuid),
        host=url_host(webhook.url),
        deliveries=webhook.deliveries.count(),
    )
    Webhook.objects.filter(pk=webhook.pk).delete()


@transaction.atomic
def webhook_delivery_replay(*, delivery: WebhookDelivery, actor: User) -> WebhookDelivery:
    """Send a delivery's event again, as a new delivery with the same event id (a receiver
    that deduplicates on it acts once); its attempts start afresh."""
    webhook = delivery.webhook
    study = webhook.study
    if getattr(actor, "pk", None) != study.lead_id and not getattr(actor, "is_staff", False):
        raise WebhookError("Only the study lead or an administrator replays a delivery.")
    replay = WebhookDelivery.objects.create(
        webhook=webhook,
        event=delivery.event,
        event_id=delivery.event_id,
        payload=delivery.payload,
        replay_of=delivery,
        next_attempt_at=timezone.now(),
    )
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.WEBHOOK_REPLAYED,
        webhook=str(webhook.uuid),
        delivery=str(delivery.uuid),
        replay=str(replay.uuid),
        event=delivery.event,
    )
    _send_schedule(replay.pk)
    return replay


# Announcing events -------------------------------------------------------------------------


def webhook_event_announce(*, study_id: int, event: str, **detail) -> None:
    """Announce a study event to the webhooks that asked for it.

    ``detail`` is read through the event's whitelist (``studies.webhooks.PAYLOAD_FIELDS``);
    anything else is left out. A milestone needs no detail: the count is taken after commit.
    """
    if event not in Event.values:
        raise ValueError(f"Not a webhook event: {event!r}.")
    if event == Event.RATING_MILESTONE:
        _milestone_check_on_commit(study_id)
        return
    webhooks = [w for w in _webhooks_of(study_id) if event in w.events]
    if not webhooks:
        return
    slug = Study.objects.values_list("slug", flat=True).get(pk=study_id)
    _deliveries_create(webhooks, event=event, slug=slug, detail=detail)


def _webhooks_of(study_id: int) -> list[Webhook]:
    # A study has at most MAX_WEBHOOKS_PER_STUDY: their events are filtered here, which
    # works the same on PostgreSQL and SQLite.
    return list(Webhook.objects.filter(study_id=study_id))


def _deliveries_create(webhooks, *, event: str, slug: str, detail: dict) -> None:
    now = timezone.now()
    created = []
    for webhook in webhooks:
        delivery = WebhookDelivery(
            webhook=webhook, event=event, created_at=now, next_attempt_at=now
        )
        delivery.payload = webhook_payload(
            event=event, study_slug=slug, event_id=delivery.event_id, created_at=now, detail=detail
        )
        created.append(delivery)
    WebhookDelivery.objects.bulk_create(created)
    for delivery in created:
        _send_schedule(delivery.pk)


def _milestone_key(study_id: int) -> str:
    return f"webhooks:milestone-check:{study_id}"


class _MilestoneCheck:
    """The after-commit call that asks for a study's milestone count, marked once it ran."""

    def __init__(self, study_id: int):
        self.webhook_study_id = study_id
        self.ran = False
        # Django names a robust callback that failed by its __qualname__, which an instance
        # lacks: without it, the error log itself raised, and a committed submit got a 500.
        self.__qualname__ = f"{type(self).__qualname__}(study {study_id})"

    def __call__(self) -> None:
        self.ran = True
        _milestone_check_schedule(self.webhook_study_id)


def _milestone_check_on_commit(study_id: int) -> None:
    # An import of a thousand ratings announces a thousand times; one check after commit
    # covers them all. A callback still registered runs when this transaction commits: one
    # of a savepoint rolled back has been dropped, and a released savepoint cannot roll back.
    # (One that ran already is still listed only where a test ran it before any commit.)
    connection = transaction.get_connection()
    if connection.in_atomic_block:
        for _, callback, *_ in connection.run_on_commit:
            if getattr(callback, "webhook_study_id", None) == study_id and not callback.ran:
                return
    transaction.on_commit(_MilestoneCheck(study_id), robust=True)


def _milestone_check_schedule(study_id: int) -> None:
    """Once a rating has committed: ask the worker to count, unless a count is already asked
    for and has not begun (it will see this rating: it clears the mark before counting)."""
    if not any(Event.RATING_MILESTONE in w.events for w in _webhooks_of(study_id)):
        return
    try:
        if not cache.add(_milestone_key(study_id), 1, timeout=5 * 60):
            return
    except Exception:  # the cache is down: count anyway
        logger.warning("Webhook milestone check of study %s: the cache is down", study_id)
    from studies.tasks import webhook_milestones_check

    def unreachable() -> None:
        cache.delete(_milestone_key(study_id))

    job_schedule(webhook_milestones_check, args=[study_id], on_unreachable=unreachable)


def webhook_milestones_announce(*, study_id: int) -> list[int]:
    """Announce the highest milestone each webhook has newly reached; returns the milestones
    announced. Idempotent: a webhook's ``last_milestone`` says what was announced."""
    try:
        cache.delete(_milestone_key(study_id))  # a rating after this asks for a count again
    except Exception:
        logger.warning("Webhook milestone check of study %s: the cache is down", study_id)
    webhooks = [w for w in _webhooks_of(study_id) if Event.RATING_MILESTONE in w.events]
    if not webhooks:
        return []
    submitted = submitted_count(study_id=study_id)
    slug = Study.objects.values_list("slug", flat=True).get(pk=study_id)
    announced = []
    for webhook in webhooks:
        with transaction.atomic():
            locked = Webhook.objects.select_for_update().filter(pk=webhook.pk).first()
            if locked is None:
                continue  # removed meanwhile
            milestone = submitted // locked.milestone_every * locked.milestone_every
            if milestone <= locked.last_milestone:
                continue
            locked.last_milestone = milestone
            locked.save(update_fields=["last_milestone"])
            detail = {"milestone": milestone, "submitted": submitted}
            _deliveries_create([locked], event=Event.RATING_MILESTONE, slug=slug, detail={
                **detail, "every": locked.milestone_every})  # fmt: skip
            announced.append(milestone)
    return announced


# Sending -----------------------------------------------------------------------------------


def _send_schedule(delivery_id: int, countdown: float | None = None) -> None:
    from studies.tasks import webhook_deliver

    job_schedule(webhook_deliver, args=[delivery_id], countdown=countdown)


def retry_wait(attempts: int) -> int:
    """Seconds before the next attempt after ``attempts`` failed ones: doubling, capped."""
    wait = settings.WEBHOOK_RETRY_SECONDS * 2 ** (attempts - 1)
    return min(wait, settings.WEBHOOK_RETRY_MAX_SECONDS)


def _claim(delivery_id: int) -> WebhookDelivery | None:
    """Mark the delivery as being sent, or None when it is not to be sent now (done, failed,
    removed, or being sent by a live attempt: a message delivered twice)."""
    with transaction.atomic():
        delivery = (
            WebhookDelivery.objects.select_for_update(of=("self",))
            .select_related("webhook")
            .filter(pk=delivery_id)
            .first()
        )
        if delivery is None or delivery.status in (Status.DELIVERED, Status.FAILED):
            return None
        now = timezone.now()
        began = delivery.next_attempt_at or now
        if delivery.status == Status.SENDING and began > now - SENDING_STALE:
            return None
        delivery.status = Status.SENDING
        delivery.next_attempt_at = now  # while sending: when the attempt began
        delivery.save(update_fields=["status", "next_attempt_at"])
        return delivery


def webhook_delivery_attempt(*, delivery_id: int) -> WebhookDelivery | None:
    """Make one attempt at a delivery and record it; on failure schedule the next attempt,
    until ``WEBHOOK_MAX_ATTEMPTS``. The request is made outside any transaction."""
    delivery = _claim(delivery_id)
    if delivery is None:
        return None
    body = webhook_body(delivery.payload)
    timestamp = int(time.time())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "Concord-Webhooks/1",
        EVENT_HEADER: delivery.event,
        EVENT_ID_HEADER: str(delivery.event_id),
        DELIVERY_HEADER: str(delivery.uuid),
        SIGNATURE_HEADER: webhook_signature(
            secret=delivery.webhook.secret, timestamp=timestamp, body=body
        ),
    }
    outcome = post(delivery.webhook.url, body=body, headers=headers)
    retry_in = None
    with transaction.atomic():
        delivery = WebhookDelivery.objects.select_for_update().filter(pk=delivery_id).first()
        if delivery is None or delivery.status != Status.SENDING:
            return delivery  # removed with its webhook meanwhile
        now = timezone.now()
        delivery.attempts = [
            *delivery.attempts,
            {
                "at": now.isoformat(),
                "status_code": outcome.status_code,
                "error": outcome.error,
                "ms": outcome.ms,
            },
        ]
        if outcome.delivered:
            delivery.status = Status.DELIVERED
            delivery.delivered_at = now
            delivery.next_attempt_at = None
        elif len(delivery.attempts) >= settings.WEBHOOK_MAX_ATTEMPTS:
            delivery.status = Status.FAILED
            delivery.next_attempt_at = None
        else:
            retry_in = retry_wait(len(delivery.attempts))
            delivery.status = Status.PENDING
            delivery.next_attempt_at = now + timedelta(seconds=retry_in)
        delivery.save(update_fields=["attempts", "status", "delivered_at", "next_attempt_at"])
    # Without a worker (JOBS_RUN "thread", the embedded default) a retry would sleep in a
    # thread the process waits for when it exits: the delivery stays pending, for a replay.
    if retry_in is not None and jobs_run_mode() != "thread":
        _send_schedule(delivery.pk, countdown=retry_in)
    return delivery


def webhook_deliveries_sweep() -> list[int]:
    """Send again what is due and was never sent (the broker was down when it was queued,
    or its worker died mid-attempt); returns the deliveries scheduled."""
    now = timezone.now()
    due = WebhookDelivery.objects.filter(
        status=Status.PENDING, next_attempt_at__lte=now - timedelta(minutes=5)
    ) | WebhookDelivery.objects.filter(
        status=Status.SENDING, next_attempt_at__lte=now - SENDING_STALE
    )
    ids = list(due.values_list("pk", flat=True)[:1000])
    for delivery_id in ids:
        _send_schedule(delivery_id)
    return ids
