"""Raters as research participants (protocol 3, 4.1): welfare settings, the strata's
warnings and limits, the profile questions, and the record of an identity's erasure."""

from django.conf import settings
from django.db import models

from .study import Study


class WelfareSettings(models.Model):
    """A study's care for its raters as research participants (protocol section 3).

    Exposure (a daily limit on active rating time), pay and the hourly equivalent it must
    meet, the recruitment text the report quotes, and how long identity data is kept after
    the study closes. Created on first use with the defaults below.
    """

    class PayBasis(models.TextChoices):
        NONE = "none", "Not recorded"
        HOUR = "hour", "Per hour"
        CASE = "case", "Per case"
        UNPAID = "unpaid", "Unpaid (volunteers)"

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="welfare")
    # Minutes of active rating time per rater per day (their own midnight), over the whole
    # study; a stratum may set its own, lower limit (harm probes). Empty: no limit.
    daily_minutes = models.PositiveSmallIntegerField(
        "daily limit of active minutes per rater", null=True, blank=True
    )
    pay_basis = models.CharField(max_length=10, choices=PayBasis.choices, default=PayBasis.NONE)
    pay_amount = models.DecimalField(max_digits=9, decimal_places=2, null=True, blank=True)
    # ISO 4217 code, e.g. "EUR".
    pay_currency = models.CharField(max_length=3, blank=True)
    minimum_hourly = models.DecimalField(
        "minimum hourly equivalent", max_digits=9, decimal_places=2, null=True, blank=True
    )
    # How raters were recruited, as the report's checklist states it.
    recruitment = models.TextField(blank=True)
    # Days after closing until the identity data of raters in no other open study is
    # erased. Empty: kept until an administrator erases it.
    retention_days = models.PositiveIntegerField(
        "identity data kept after closing (days)", null=True, blank=True
    )
    # The report's profile counts suppress any cell smaller than this.
    profile_min_cell = models.PositiveSmallIntegerField(
        "smallest profile count reported", default=5
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"Rater welfare of {self.study}"


class StratumSetting(models.Model):
    """What applies to every case of one stratum: a content warning and an exposure limit."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="stratum_settings")
    stratum = models.CharField(max_length=100)
    content_warning = models.TextField(blank=True)
    # Minutes of active time per rater per day on this stratum's cases; empty: only the
    # study's limit applies.
    daily_minutes = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["study", "stratum"]
        constraints = [
            models.UniqueConstraint(fields=["study", "stratum"], name="one_setting_per_stratum"),
        ]

    def __str__(self):
        return f"{self.stratum or '(no stratum)'} in {self.study}"


class ProfileQuestion(models.Model):
    """A rater characteristic the lead asks for at onboarding (protocol 4.1).

    Every answer is optional ("prefer not to say"); the answers are kept apart from
    identity and from ratings (``annotation.RaterProfile``).
    """

    class Kind(models.TextChoices):
        CHOICE = "choice", "One of a list"
        NUMBER = "number", "A number"
        TEXT = "text", "Short text"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="profile_questions")
    key = models.SlugField(max_length=50)
    label = models.CharField(max_length=200)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    # CHOICE: {"choices": ["English", ...]}; NUMBER: {"min": 0, "max": 60}.
    config = models.JSONField(default=dict, blank=True)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["study", "position"]
        constraints = [
            models.UniqueConstraint(fields=["study", "key"], name="unique_profile_question_key"),
        ]

    def __str__(self):
        return self.label


class IdentityErasure(models.Model):
    """The record that one person's identifying data was erased, and why.

    The account row stays (memberships, pseudonymous ratings and the audit trail point at
    it) with its name, e-mail, login and addresses removed; it can no longer sign in.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="erasures"
    )
    # A request from the person (by an administrator), or the end of a retention period.
    automatic = models.BooleanField(default=False)
    reason = models.TextField()
    erased_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    # What was erased, by kind and count, and the pseudonyms the person held.
    detail = models.JSONField(default=dict, blank=True)
    erased_at = models.DateTimeField()

    class Meta:
        ordering = ["-erased_at"]

    def __str__(self):
        return f"Erasure of {self.user_id} at {self.erased_at:%Y-%m-%d}"
