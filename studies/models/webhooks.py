"""Webhooks the study lead registered, and each delivery to them."""

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

from .study import Study


class Webhook(models.Model):
    """A URL the study lead registered to hear of the study's events (``studies.webhooks``).

    The secret signs every delivery (HMAC-SHA256); it is kept as it is, since signing needs
    it, and shown once, when the webhook is added. Written only by ``studies.services.webhooks``.
    """

    class Event(models.TextChoices):
        RATING_MILESTONE = "rating.milestone", "Rating milestone"
        AGREEMENT_RECOMPUTED = "agreement.recomputed", "Agreement recomputed"
        STUDY_CLOSED = "study.closed", "Study closed"
        ANALYSIS_READY = "analysis.ready", "Analysis ready"
        # The monitored primary question's state changed (issue 30): symmetric, as shown.
        MONITOR_CHANGED = "monitor.changed", "Primary question's monitor changed"

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField(max_length=2000)
    events = models.JSONField(default=list)
    # A "rating.milestone" delivery each time the study's submitted ratings reach a multiple
    # of this number; ``last_milestone`` is the highest announced, so each is sent once.
    milestone_every = models.PositiveIntegerField(default=100)
    last_milestone = models.PositiveIntegerField(default=0)
    secret = models.CharField(max_length=100, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self):
        return self.url


def _new_uuid():
    return uuid.uuid4()


class WebhookDelivery(models.Model):
    """One event sent (or to be sent) to one webhook, with every attempt made.

    ``event_id`` names the event: a replay is a new delivery with the same ``event_id``, so
    a receiver that deduplicates on it acts once. Written only by ``studies.services.webhooks``.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        SENDING = "sending", "Sending"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Failed"

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=40, choices=Webhook.Event.choices)
    event_id = models.UUIDField(default=_new_uuid, db_index=True)
    payload = models.JSONField(default=dict)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    # Each attempt: {"at", "status_code", "error", "ms"} (at most ``MAX_ATTEMPTS``).
    attempts = models.JSONField(default=list)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    replay_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replays"
    )
    created_at = models.DateTimeField(default=timezone.now)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name_plural = "webhook deliveries"

    def __str__(self):
        return f"{self.event} to {self.webhook}"
