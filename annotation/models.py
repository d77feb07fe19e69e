import uuid

from django.conf import settings
from django.db import models

from studies.models import Membership, Response, Study, TestCase


class Assignment(models.Model):
    """One test case given to one rater, with the rater's draft and per-case answers."""

    class Status(models.TextChoices):
        TODO = "todo", "Not started"
        DRAFT = "draft", "In progress"
        SUBMITTED = "submitted", "Submitted"
        # The rater chose not to rate this case (protocol 3: "raters may skip any item").
        # Not a missing rating: the case is offered to another rater where the design
        # allows, and skips are counted apart.
        SKIPPED = "skipped", "Skipped"

    class SkipReason(models.TextChoices):
        DISTRESSING = "distressing", "The content is distressing or offensive to me"
        EXPERTISE = "expertise", "It is outside my expertise"
        UNREADABLE = "unreadable", "It does not display or read properly"
        OTHER = "other", "Another reason"

    class Confidence(models.TextChoices):
        LOW = "low", "Low"
        MEDIUM = "medium", "Medium"
        HIGH = "high", "High"

    class Source(models.TextChoices):
        SCREEN = "screen", "Rating screen"
        WORKSHEET = "worksheet", "Imported worksheet"
        # Made outside Concord and imported by system name (never blinded by Concord).
        IMPORTED = "imported", "Imported from elsewhere"

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    rater = models.ForeignKey(Membership, on_delete=models.CASCADE, related_name="assignments")
    test_case = models.ForeignKey(TestCase, on_delete=models.CASCADE, related_name="assignments")
    position = models.PositiveIntegerField()
    # Balanced side design: the responses are shown in reverse label order on this screen.
    flipped = models.BooleanField(default=False)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.TODO)
    # The whole form as the rater left it; restored when the page is opened again.
    draft = models.JSONField(default=dict, blank=True)
    # Bumped on every save so that a save based on an older version is refused.
    version = models.PositiveIntegerField(default=0)
    # Answers to dimensions rated once per test case (e.g. a pairwise preference).
    case_scores = models.JSONField(default=dict, blank=True)
    confidence = models.CharField(max_length=10, choices=Confidence.choices, blank=True)
    notes = models.TextField(blank=True)
    # Where the submitted answers came from: the rating screen, or a worksheet filled in
    # offline (which records points only for counted dimensions and checklists).
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.SCREEN)
    active_seconds = models.PositiveIntegerField(default=0)
    # When a draft or a submission was last saved: a save credits at most the active time
    # that has passed since.
    last_saved_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    # A skip's optional reason (blank: none given) and free text.
    skip_reason = models.CharField(max_length=15, choices=SkipReason.choices, blank=True)
    skip_note = models.TextField(blank=True)
    skipped_at = models.DateTimeField(null=True, blank=True)
    # Not the rater's choice: a participant from a crowd platform timed out or was screened
    # out, and the case (marked skipped, so it holds no place among the case's k) went on
    # to the next participant (issue 29). A late submit is told the item moved on.
    released_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["rater", "test_case"], name="one_assignment_per_case"),
            models.UniqueConstraint(fields=["rater", "position"], name="unique_rater_position"),
        ]
        indexes = [
            # Started assignments only: "has rating begun?" (asked on every set-up page)
            # reads this index, empty until a rater saves a first draft.
            models.Index(
                fields=["test_case"], condition=~models.Q(status="todo"), name="assignment_started"
            ),
        ]

    def __str__(self):
        return f"{self.test_case} for {self.rater}"

    @property
    def rater_label(self) -> str:
        """How the rater's pages name this case: its place in their own queue.

        Never the test case id: an id (its wording, its range) could tell a gold item or
        an attention check from the sample, and the rater must not be able to.
        """
        return f"Case {self.position + 1}"

    @property
    def is_in_progress(self) -> bool:
        """Saved as a draft and not yet submitted. (Templates ask this rather than compare
        the status with "draft", a word the study's lifecycle owns too: rules/lifecycle.yml.)"""
        return self.status == self.Status.DRAFT


class Rating(models.Model):
    """One rater's submitted score of one blinded response."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="ratings")
    # The label from the blinding key, and the label the rater saw on screen (they differ
    # when the screen was flipped in a balanced side design).
    label = models.CharField(max_length=1)
    shown_label = models.CharField(max_length=1)
    response = models.ForeignKey(Response, on_delete=models.PROTECT, related_name="ratings")
    scores = models.JSONField()
    # The response's total as ``studies.rubric.response_total`` gave it when submitted:
    # null when a part was not given. Readers ask that rule of ``scores`` instead, so that
    # a rating stored before issue 39 (a blank part counted 0 here) reads the same way.
    total = models.PositiveIntegerField(null=True, blank=True)
    submitted_at = models.DateTimeField()

    class Meta:
        ordering = ["label"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "label"], name="one_rating_per_label"),
        ]

    def __str__(self):
        return f"Response {self.label} of {self.assignment}"


class RatingRevision(models.Model):
    """A submitted answer to a case, kept when a later submit replaced it."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="revisions")
    # What had been submitted: {"responses": {label: scores}, "totals": {label: total},
    # "case": {...}, "confidence": "...", "notes": "..."}.
    submitted = models.JSONField()
    submitted_at = models.DateTimeField()
    replaced_at = models.DateTimeField()

    class Meta:
        ordering = ["assignment", "replaced_at"]

    def __str__(self):
        return f"Revision of {self.assignment} replaced at {self.replaced_at:%Y-%m-%d %H:%M}"


class OnboardingSettings(models.Model):
    """How a study prepares its raters and what happens to a withdrawing rater's data.

    Kept here rather than on Study because the rating side owns these steps; a study
    without a row uses the defaults below.
    """

    class WithdrawalData(models.TextChoices):
        RATER_CHOOSES = "rater_chooses", "The rater chooses to keep or delete their ratings"
        KEEP = "keep", "Ratings already submitted are kept"
        DELETE = "delete", "Ratings already submitted are deleted"

    study = models.OneToOneField(
        Study, on_delete=models.CASCADE, related_name="onboarding_settings"
    )
    practice_enabled = models.BooleanField(
        default=True, help_text="Offer a practice run on one test case; its scores are not kept."
    )
    practice_case = models.ForeignKey(
        TestCase,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Empty: the study's first test case (TC-001 in the reference instructions).",
    )
    pass_percent = models.PositiveSmallIntegerField(
        "qualification pass mark (%)",
        default=80,
        help_text="Share of scores within tolerance of the key needed to pass.",
    )
    tolerance = models.PositiveSmallIntegerField(
        "tolerance (points)",
        default=1,
        help_text="A score within this many points of the key counts as agreeing.",
    )
    max_attempts = models.PositiveSmallIntegerField("qualification attempts allowed", default=2)
    # Protocol 4.2's last training step, whose pass rule is attendance: when on, a rater who
    # passed the qualification test rates the main phase only once the lead has recorded
    # them at a calibration call. Off by default, so that studies without one are unchanged.
    calibration_call_required = models.BooleanField(
        "calibration call required",
        default=False,
        help_text=(
            "Raters start the main phase only once the lead has recorded their attendance "
            "at a calibration call (the pilot is not held back)."
        ),
    )
    withdrawal_data = models.CharField(
        "on withdrawal",
        max_length=20,
        choices=WithdrawalData.choices,
        default=WithdrawalData.RATER_CHOOSES,
        help_text="Must match what the consent text tells raters.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "onboarding settings"

    def __str__(self):
        return f"Onboarding of {self.study}"


class TrainingItem(models.Model):
    """A worked example (training) or a test item (qualification) written by a coordinator."""

    class Kind(models.TextChoices):
        TRAINING = "training", "Training example"
        QUALIFICATION = "qualification", "Qualification item"

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="training_items")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    position = models.PositiveIntegerField(default=0)
    title = models.CharField(max_length=200)
    prompt = models.TextField()
    # The texts shown as Response A, Response B, ... in this order.
    responses = models.JSONField(default=list)
    # The coordinator's answers in the shape of a submitted rating ({"responses": {label:
    # scores}, "case": scores}); empty until entered. Items without a key are not shown.
    key = models.JSONField(default=dict, blank=True)
    explanation = models.TextField(
        blank=True, help_text="Shown to the rater after they answer (training examples)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["kind", "position", "created_at"]

    def __str__(self):
        return self.title


class QualificationAttempt(models.Model):
    """One go at a study's qualification test; scored once every item is answered."""

    rater = models.ForeignKey(
        Membership, on_delete=models.CASCADE, related_name="qualification_attempts"
    )
    number = models.PositiveSmallIntegerField()
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    percent = models.DecimalField(max_digits=5, decimal_places=1, null=True, blank=True)
    passed = models.BooleanField(null=True)
    # The rule in force (pass mark, tolerance) and the comparison per item and dimension.
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["rater", "number"]
        constraints = [
            models.UniqueConstraint(fields=["rater", "number"], name="unique_attempt_number"),
        ]

    def __str__(self):
        return f"Qualification attempt {self.number} of {self.rater}"


class TrainingAnswer(models.Model):
    """A rater's answer to a training example, or to a qualification item in an attempt."""

    item = models.ForeignKey(TrainingItem, on_delete=models.CASCADE, related_name="answers")
    rater = models.ForeignKey(Membership, on_delete=models.CASCADE, related_name="training_answers")
    attempt = models.ForeignKey(
        QualificationAttempt,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="answers",
    )
    answer = models.JSONField()
    submitted_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["item", "rater"],
                condition=models.Q(attempt__isnull=True),
                name="one_training_answer_per_item",
            ),
            models.UniqueConstraint(fields=["item", "attempt"], name="one_answer_per_attempt"),
        ]

    def __str__(self):
        return f"{self.rater} on {self.item}"


class ConsentRecord(models.Model):
    """A rater's consent to one version of a study's information sheet, with their disclosure."""

    rater = models.ForeignKey(Membership, on_delete=models.CASCADE, related_name="consents")
    version = models.PositiveIntegerField()
    # What the rater saw, as it read then: the coordinator may edit the texts later.
    consent_text = models.TextField(blank=True)
    disclosure_question = models.TextField(blank=True)
    prior_knowledge = models.BooleanField(null=True)
    disclosure = models.TextField(blank=True)
    agreed_at = models.DateTimeField()

    class Meta:
        ordering = ["rater", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["rater", "version"], name="one_consent_per_version"),
        ]

    def __str__(self):
        return f"Consent of {self.rater} to version {self.version}"


class StudyFeedback(models.Model):
    """The end-of-study form: rubric clarity per dimension, patterns and notes."""

    class Clarity(models.TextChoices):
        CLEAR = "clear", "Clear"
        MOSTLY = "mostly", "Mostly clear"
        UNCLEAR = "unclear", "Unclear"

    rater = models.OneToOneField(Membership, on_delete=models.CASCADE, related_name="feedback")
    # {dimension key: {"clarity": "clear" | "mostly" | "unclear" | "", "comment": "..."}}
    dimensions = models.JSONField(default=dict)
    suggestions = models.TextField(blank=True)
    patterns = models.TextField(blank=True)
    notes = models.TextField(blank=True)
    submitted_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        verbose_name_plural = "study feedback"

    def __str__(self):
        return f"Feedback of {self.rater}"


class Withdrawal(models.Model):
    """A rater leaving a study, and what was done with their data."""

    class Data(models.TextChoices):
        KEEP = "keep", "Keep my submitted ratings in the study"
        DELETE = "delete", "Delete my ratings"

    rater = models.OneToOneField(Membership, on_delete=models.CASCADE, related_name="withdrawal")
    data = models.CharField(max_length=10, choices=Data.choices)
    # Whether the rater chose, or the study's consent text decided for them.
    chosen_by_rater = models.BooleanField()
    reason = models.TextField(blank=True)
    consent_version = models.PositiveIntegerField(null=True, blank=True)
    ratings_deleted = models.PositiveIntegerField(default=0)
    withdrawn_at = models.DateTimeField()

    def __str__(self):
        return f"Withdrawal of {self.rater}"


class Adjudication(models.Model):
    """A case whose ratings an adjudicator resolves, and the resolution (protocol 11).

    One per case. ``triggers`` says which dimensions need a decision and why:
    ``{dimension key: [trigger, ...]}``, each trigger one of ``Trigger``. The resolved
    answers have the shape of a rater's (``{"responses": {key label: {dimension key:
    stored answer}}, "case": {dimension key: stored answer}}``), each cleaned and scored by
    its rubric kind; labels are key labels, never systems. Agreement statistics never read
    them: they enter the analysis as the item's label.
    """

    class Status(models.TextChoices):
        WAITING = "waiting", "Waiting"
        DONE = "done", "Resolved"
        UNRESOLVABLE = "unresolvable", "Cannot be resolved"

    class Trigger(models.TextChoices):
        VALUES = "values", "A rating in named values"
        DISAGREEMENT = "disagreement", "Disagreement"
        TARGET_MISSED = "target_missed", "Every disagreement (agreement target missed)"
        MANUAL = "manual", "Sent by hand"

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    test_case = models.OneToOneField(
        TestCase, on_delete=models.CASCADE, related_name="adjudication"
    )
    triggers = models.JSONField(default=dict)
    # Why a lead sent it by hand (``Trigger.MANUAL``).
    sent_reason = models.TextField(blank=True)
    sent_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=15, choices=Status.choices, default=Status.WAITING)
    adjudicator = models.ForeignKey(
        Membership, null=True, blank=True, on_delete=models.PROTECT, related_name="adjudications"
    )
    answers = models.JSONField(default=dict, blank=True)
    # The adjudicator's reason for the decision (or for "cannot be resolved").
    reason = models.TextField(blank=True)
    # The adjudication screen's autosave, as the rating screen's: the form as left, and a
    # version bumped on every save so that a save based on an older one is refused.
    draft = models.JSONField(default=dict, blank=True)
    version = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at"]

    def __str__(self):
        return f"Adjudication of {self.test_case}"


class CalibrationCall(models.Model):
    """A calibration call held with the raters (protocol 4.2): the disagreements on the
    qualification and pilot items discussed, and who attended (the step's pass rule)."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="calibration_calls")
    held_at = models.DateTimeField()
    note = models.TextField(blank=True)
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-held_at", "-created_at"]

    def __str__(self):
        return f"Calibration call of {self.study} on {self.held_at:%Y-%m-%d}"


class CalibrationAttendance(models.Model):
    """One rater recorded as present at a calibration call."""

    call = models.ForeignKey(CalibrationCall, on_delete=models.CASCADE, related_name="attendance")
    rater = models.ForeignKey(
        Membership, on_delete=models.CASCADE, related_name="calibration_attendance"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["call", "rater"], name="one_attendance_per_call"),
        ]

    def __str__(self):
        return f"{self.rater} at {self.call}"


class ExposureDay(models.Model):
    """A rater's active rating time on one day (their own calendar) in one stratum.

    Read against the daily exposure limits (``studies.WelfareSettings.daily_minutes`` and
    ``studies.StratumSetting.daily_minutes``); credited with each save's active time.
    """

    rater = models.ForeignKey(Membership, on_delete=models.CASCADE, related_name="exposure_days")
    day = models.DateField()
    stratum = models.CharField(max_length=100, blank=True)
    seconds = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["rater", "day", "stratum"]
        constraints = [
            models.UniqueConstraint(
                fields=["rater", "day", "stratum"], name="one_exposure_row_per_day_stratum"
            ),
        ]

    def __str__(self):
        return f"{self.rater} on {self.day}: {self.seconds} s"


class RaterProfile(models.Model):
    """A rater's answers to the study's profile questions, under their own consent.

    Kept apart from identity and from ratings: no rating export joins it, and coordinators
    see only suppressed aggregate counts. ``answers`` maps a question key to the answer,
    or to None for "prefer not to say".
    """

    rater = models.OneToOneField(Membership, on_delete=models.CASCADE, related_name="profile")
    # Consent to the profile itself, separate from the study's; False: declined.
    consented = models.BooleanField()
    answers = models.JSONField(default=dict, blank=True)
    # The rater agreed that an export may carry their profile beside their pseudonym.
    share_with_pseudonym = models.BooleanField(default=False)
    answered_at = models.DateTimeField()
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"Profile of {self.rater}"


class CommentRead(models.Model):
    """A coordinator's "read" mark on one free-text comment of the comments digest.

    ``key`` names the comment by its source and row, e.g. ``note:<assignment uuid>``.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="comment_reads")
    reader = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="comment_reads"
    )
    key = models.CharField(max_length=100)
    read_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "reader", "key"], name="one_read_mark_per_comment"
            ),
        ]

    def __str__(self):
        return f"{self.key} read by {self.reader_id}"
