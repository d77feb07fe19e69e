"""Participants from a crowd platform (issue 29): the links they join through, and
themselves, bound to the vendor's ids."""

import uuid
from decimal import Decimal

from django.conf import settings
from django.db import models

from .membership import Membership
from .study import Study


class ParticipantLink(models.Model):
    """A link a crowd platform (Prolific, MTurk, ...) sends its participants to.

    The token in its URL is the permission to join as a new participant; the lead sees
    the full URL on the study's page whenever they need to paste it into the vendor.
    """

    class Preset(models.TextChoices):
        PROLIFIC = "prolific", "Prolific"
        MTURK = "mturk", "MTurk"
        CUSTOM = "custom", "Custom"

    class BonusRule(models.TextChoices):
        NONE = "none", "No bonus"
        PER_CASE = "per_case", "Per case completed"
        PER_HOUR = "per_hour", "Per hour of active time"

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="participant_links")
    token = models.CharField(max_length=64, unique=True)
    name = models.CharField(max_length=100)
    preset = models.CharField(max_length=10, choices=Preset.choices, default=Preset.PROLIFIC)
    # The names of the URL parameters the vendor fills in; the session one may be empty
    # for a custom vendor (see ``docs/admin.md``, "Session binding").
    participant_param = models.CharField(max_length=40)
    study_param = models.CharField(max_length=40, blank=True)
    session_param = models.CharField(max_length=40, blank=True)
    completion_code = models.CharField(max_length=100)
    completion_url = models.URLField(max_length=500, blank=True)
    screened_out_code = models.CharField(max_length=100, blank=True)
    screened_out_url = models.URLField(max_length=500, blank=True)
    max_participants = models.PositiveIntegerField()
    timeout_minutes = models.PositiveIntegerField(default=60)
    # Sample cases each participant is given when they join, and never more (blank: the
    # study's design plans them like any rater). See ``docs/admin.md``, "Batches".
    cases_per_participant = models.PositiveIntegerField(null=True, blank=True)
    bonus_rule = models.CharField(max_length=10, choices=BonusRule.choices, default="none")
    bonus_amount = models.DecimalField(max_digits=8, decimal_places=2, default=Decimal("0"))
    bonus_currency = models.CharField(max_length=3, default="GBP")
    # Other arms of the same comparison: a participant of one of them is refused here.
    linked_studies = models.ManyToManyField(Study, blank=True, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self):
        return self.name

    @property
    def is_open(self) -> bool:
        return self.closed_at is None


class Participant(models.Model):
    """A rater who came through a participant link, bound to the vendor's ids.

    The vendor ids are identity (admins only; cleared by identity erasure); everyone else
    knows the participant by their membership's pseudonym.
    """

    class Status(models.TextChoices):
        STARTED = "started", "Started"
        SCREENED_OUT = "screened_out", "Screened out"
        COMPLETED = "completed", "Completed"
        RETURNED = "returned", "Returned"
        TIMED_OUT = "timed_out", "Timed out"

    link = models.ForeignKey(ParticipantLink, on_delete=models.CASCADE, related_name="participants")
    # The link's study, kept here so that one external id is one participant per study.
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="+")
    membership = models.OneToOneField(
        Membership, on_delete=models.CASCADE, related_name="participant"
    )
    external_id = models.CharField(max_length=100)
    vendor_study_id = models.CharField(max_length=100, blank=True)
    vendor_session_id = models.CharField(max_length=100, blank=True)
    status = models.CharField(max_length=15, choices=Status.choices, default=Status.STARTED)
    # Why a participant was screened out: "consent" or "qualification".
    screened_reason = models.CharField(max_length=20, blank=True)
    joined_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            # Erased ids are "" and no longer bind anyone.
            models.UniqueConstraint(
                fields=["study", "external_id"],
                condition=~models.Q(external_id=""),
                name="one_participant_per_external_id",
            ),
        ]

    def __str__(self):
        return f"Participant {self.membership}"


# Raters who may be given new cases: everyone but participants who have finished (screened
# out, completed, returned or timed out) and participants of a link with a batch size, who
# get their batch when they join and nothing after. Read by the assignment design, the
# adaptive design and the hand-on of skipped and released cases (``annotation``).
TAKES_NEW_CASES = models.Q(participant__isnull=True) | models.Q(
    participant__status=Participant.Status.STARTED,
    participant__link__cases_per_participant__isnull=True,
)
