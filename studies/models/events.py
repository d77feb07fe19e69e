"""The study's audit trail."""

from django.conf import settings
from django.db import models

from .membership import Membership
from .study import Study


class StudyEvent(models.Model):
    """The study's audit trail: lifecycle changes, unblinding, rater decisions, imports.

    Written only by ``studies.events.study_event_record``.
    """

    class Kind(models.TextChoices):
        # Set-up and lifecycle
        CREATED = "created", "Study created"
        SETTINGS_CHANGED = "settings_changed", "Settings changed"
        CASES_IMPORTED = "cases_imported", "Test cases imported"
        CASES_REMOVED = "cases_removed", "Test cases removed"
        RUBRIC_CHANGED = "rubric_changed", "Rubric changed"
        PILOT_STARTED = "pilot_started", "Pilot started"
        OPENED = "opened", "Study opened"
        CLOSED = "closed", "Study closed"
        REOPENED = "reopened", "Study reopened"
        UNBLINDED = "unblinded", "Study unblinded"
        ADMIN_CHANGED = "admin_changed", "Changed in the admin"
        # People
        INVITATION_CREATED = "invitation_created", "Invitation created"
        INVITATION_USED = "invitation_used", "Invitation used"
        INVITATION_REVOKED = "invitation_revoked", "Invitation revoked"
        RATER_ADDED = "rater_added", "Rater added"
        RATERS_ASSIGNED = "raters_assigned", "Test cases assigned to raters"
        # A rater's own steps
        RATER_CONSENTED = "rater_consented", "Rater consented"
        QUALIFICATION_PASSED = "qualification_passed", "Qualification test passed"
        QUALIFICATION_FAILED = "qualification_failed", "Qualification test failed"
        CALIBRATION_CALL_RECORDED = "calibration_call_recorded", "Calibration call recorded"
        RATER_FEEDBACK = "rater_feedback", "Rater sent feedback"
        RATER_WITHDREW = "rater_withdrew", "Rater withdrew"
        WORKSHEET_IMPORTED = "worksheet_imported", "Worksheet imported"
        # Administrators' decisions about a rater
        RATER_PAUSED = "rater_paused", "Paused"
        RATER_SENT_TO_RETRAINING = "rater_sent_to_retraining", "Sent to retraining"
        RATER_EXCLUDED = "rater_excluded", "Excluded from the analysis"
        RATER_REINSTATED = "rater_reinstated", "Reinstated"
        RATER_FLAG_DISMISSED = "rater_flag_dismissed", "Flag dismissed"
        # Quality control set-up: gold items and attention checks
        QUALITY_SETTINGS_CHANGED = "quality_settings_changed", "Quality-control settings changed"
        EXPECTED_ANSWERS_SET = "expected_answers_set", "Expected answers set"
        EXPECTED_ANSWERS_IMPORTED = "expected_answers_imported", "Gold file imported"
        CASE_KEY_SHOWN = "case_key_shown", "Case's key shown by system: out of the sample for good"
        ATTENTION_CHECK_ADDED = "attention_check_added", "Attention check added"
        # LLM judges (never raters)
        JUDGE_OUTPUTS_IMPORTED = "judge_outputs_imported", "Judge outputs imported"
        JUDGE_TEMPLATE_SAVED = "judge_template_saved", "Judge prompt template saved"
        # Adjudication (protocol 5.3, 7.3, 11): the rules, cases sent, the switch, and an
        # adjudicator's decision on a case, each change
        ADJUDICATION_RULES_SET = "adjudication_rules_set", "Adjudication rules set"
        ADJUDICATION_SENT = "adjudication_sent", "Case sent to adjudication"
        ADJUDICATION_SWITCHED = (
            "adjudication_switched",
            "Adjudication switched to every disagreement",
        )
        ADJUDICATION_RESOLVED = "adjudication_resolved", "Adjudication resolved"
        ADJUDICATION_UNRESOLVABLE = "adjudication_unresolvable", "Adjudication: cannot be resolved"
        ADJUDICATION_MADE_GOLD = "adjudication_made_gold", "Adjudicated case made a gold item"
        # Rater welfare (protocol 3).
        WELFARE_SETTINGS_CHANGED = "welfare_settings_changed", "Rater welfare settings changed"
        CONTENT_WARNINGS_SET = "content_warnings_set", "Content warnings set"
        PROFILE_QUESTIONS_SET = "profile_questions_set", "Rater profile questions set"
        CASE_SKIPPED = "case_skipped", "Case skipped by a rater"
        IDENTITY_ERASED = "identity_erased", "Rater identity erased"
        # Pipelines (issue 26): ratings made outside Concord, webhooks for study events,
        # and an account made for a rater through the API.
        RATINGS_IMPORTED = "ratings_imported", "Ratings imported from elsewhere"
        WEBHOOK_ADDED = "webhook_added", "Webhook added"
        WEBHOOK_REMOVED = "webhook_removed", "Webhook removed"
        WEBHOOK_REPLAYED = "webhook_replayed", "Webhook delivery replayed"
        RATER_ACCOUNT_CREATED = "rater_account_created", "Rater account created"
        # Participants from a crowd platform (issue 29). The trail names them by
        # pseudonym only: their vendor ids are identity.
        PARTICIPANT_LINK_SAVED = "participant_link_saved", "Participant link saved"
        PARTICIPANT_LINK_CLOSED = "participant_link_closed", "Participant link closed"
        PARTICIPANT_JOINED = "participant_joined", "Participant joined through a link"
        PARTICIPANT_REFUSED = "participant_refused", "Participant link visit refused"
        PARTICIPANT_SCREENED_OUT = "participant_screened_out", "Participant screened out"
        PARTICIPANT_COMPLETED = "participant_completed", "Participant completed"
        PARTICIPANT_TIMED_OUT = "participant_timed_out", "Participant timed out"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="events")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    kind = models.CharField(max_length=40, choices=Kind.choices)
    membership = models.ForeignKey(
        Membership, null=True, blank=True, on_delete=models.SET_NULL, related_name="events"
    )
    reason = models.TextField(blank=True)
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.kind} in {self.study}"
