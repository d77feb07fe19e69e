import uuid
from decimal import Decimal

from django.conf import settings
from django.db import models
from django.utils import timezone

from . import rubric as rubric_scoring
from .blinding import new_secret
from .upload_files import case_upload_name, case_upload_storage


class Rubric(models.Model):
    """A list of dimensions; a study's rubric is frozen once the study opens."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    preset = models.CharField(max_length=50, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.name

    def scoring_dimensions(self):
        return [d.scoring() for d in self.dimensions.all()]

    @property
    def max_total(self) -> int:
        return sum(d.max_points for d in self.scoring_dimensions())


class Dimension(models.Model):
    # The kinds of dimension are the classes in ``studies.rubric.KINDS``.
    KIND_CHOICES = [(kind, kind_class.label) for kind, kind_class in rubric_scoring.KINDS.items()]
    LEVEL_CHOICES = [(level, level.title()) for level in rubric_scoring.LEVELS]

    rubric = models.ForeignKey(Rubric, on_delete=models.CASCADE, related_name="dimensions")
    key = models.SlugField(max_length=50)
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=20, choices=KIND_CHOICES)
    position = models.PositiveSmallIntegerField()
    config = models.JSONField(default=dict)
    level = models.CharField(
        "level of measurement", max_length=10, choices=LEVEL_CHOICES, default="ordinal"
    )

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["rubric", "key"], name="unique_dimension_key"),
        ]

    def __str__(self):
        return self.name

    def scoring(self):
        return rubric_scoring.dimension_from_config(
            key=self.key, name=self.name, kind=self.kind, config=self.config
        )

    @property
    def max_points(self) -> int:
        return self.scoring().max_points


class StudyQuerySet(models.QuerySet):
    def started(self):
        """Studies past their draft: the lifecycle's ``is_draft``, asked in the database."""
        return self.exclude(status=Study.Status.DRAFT)


class Study(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        PILOT = "pilot", "Pilot"
        OPEN = "open", "Open"
        CLOSED = "closed", "Closed"
        UNBLINDED = "unblinded", "Unblinded"

    slug = models.SlugField(max_length=80, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    instructions = models.TextField(blank=True)
    consent_text = models.TextField(blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    blinding_seed = models.PositiveIntegerField(default=42)
    # Mixed into the blinding with the seed; revealed only at unblinding (see blinding.py).
    blinding_secret = models.CharField(max_length=64, default=new_secret, editable=False)
    consent_version = models.PositiveIntegerField(default=1)
    disclosure_question = models.TextField(
        blank=True,
        default=(
            "Do you have prior knowledge of this research (for example, you worked on an "
            "earlier iteration)? If so, describe it."
        ),
    )
    raters_per_item = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Empty: every rater rates every test case."
    )
    # The adaptive design: with ``raters_per_item`` as k_min, a case whose ratings disagree
    # gets one more rater at a time up to this many (annotation.services.adaptive).
    raters_per_item_max = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Empty: every case gets raters_per_item raters."
    )
    side_mode = models.CharField(
        max_length=10,
        choices=[
            ("fixed", "A/B side fixed per test case"),
            ("balanced", "Balanced per rater: half of each rater's screens show the other order"),
        ],
        default="fixed",
    )
    # Pairwise studies: the rater writes their reasoning before the preference can be chosen
    # (enforced on the screen and by annotation.services), as a judge prompt asks of judges.
    explanation_first = models.BooleanField(default=False)
    case_layout = models.CharField(
        max_length=10,
        choices=[
            ("standard", "Prompt and responses"),
            ("next_step", "Question, numbered partial reasoning steps, candidate next steps"),
        ],
        default="standard",
    )
    # Ratings collected elsewhere (an imported worksheet) may leave confidence and totals
    # blank; they are exported as imported, with a blank confidence.
    imported_optional = models.BooleanField(default=False)
    success_alpha = models.DecimalField(max_digits=4, decimal_places=3, default=Decimal("0.700"))
    success_min_dimensions = models.PositiveSmallIntegerField(default=3)
    protocol_fingerprint = models.CharField(max_length=64, blank=True)
    opened_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    unblinded_at = models.DateTimeField(null=True, blank=True)
    rubric = models.ForeignKey(Rubric, on_delete=models.PROTECT, related_name="studies")
    lead = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="led_studies"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = StudyQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "studies"
        ordering = ["-created_at"]

    def __str__(self):
        return self.name

    # The lifecycle's predicates: every module asks these instead of comparing statuses
    # (tests/test_architecture_lifecycle.py fails on a comparison anywhere else).
    @property
    def adaptive_raters(self) -> tuple[int, int] | None:
        """(k_min, k_max) in the adaptive design, None in a fixed one."""
        low, high = self.raters_per_item, self.raters_per_item_max
        return (low, high) if low and high and high > low else None

    @property
    def is_draft(self) -> bool:
        """Being set up: no rater has started, nothing is frozen."""
        return self.status == self.Status.DRAFT

    @property
    def is_pilot(self) -> bool:
        """Raters try the rubric and the interface; their ratings are pilot data."""
        return self.status == self.Status.PILOT

    @property
    def is_open(self) -> bool:
        """Open for the main phase's ratings."""
        return self.status == self.Status.OPEN

    @property
    def is_unblinded(self) -> bool:
        """The study lead revealed which system wrote each response (a one-way step)."""
        return self.status == self.Status.UNBLINDED

    @property
    def accepts_ratings(self) -> bool:
        return self.is_pilot or self.is_open

    @property
    def is_frozen(self) -> bool:
        """The protocol (rubric, cases, blinding, instructions, criterion) can no longer change."""
        return self.status in (self.Status.OPEN, self.Status.CLOSED, self.Status.UNBLINDED)

    @property
    def is_closed(self) -> bool:
        """Rating is over (closed, or closed and unblinded): no one joins, nothing is assigned."""
        return self.status in (self.Status.CLOSED, self.Status.UNBLINDED)

    @property
    def awaits_unblinding(self) -> bool:
        """Closed and not yet unblinded: the one status the study lead may unblind from."""
        return self.status == self.Status.CLOSED

    def phase_at(self, moment) -> str:
        """ "pilot" or "main": the phase a rating submitted at ``moment`` belongs to.

        Ratings submitted before the study opened are pilot data. A study never opened has
        only the phase it is in: pilot while in draft or pilot, main otherwise.
        """
        if self.opened_at is None:
            return self.current_phase
        return "pilot" if moment is not None and moment < self.opened_at else "main"

    @property
    def current_phase(self) -> str:
        """The phase whose data the analysis reads now."""
        return "pilot" if self.is_draft or self.is_pilot else "main"


class Membership(models.Model):
    """A person's role in one study; raters appear to coordinators under their pseudonym."""

    class Role(models.TextChoices):
        COORDINATOR = "coordinator", "Coordinator"
        RATER = "rater", "Rater"
        # Resolves disagreements between raters (protocol 4.1, 11); pseudonymous (A-01, ...)
        # and never adjudicates a case they rated.
        ADJUDICATOR = "adjudicator", "Adjudicator"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        PAUSED = "paused", "Paused"
        WITHDRAWN = "withdrawn", "Withdrawn"
        EXCLUDED = "excluded", "Excluded"

    role = models.CharField(max_length=20, choices=Role.choices)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    pseudonym = models.CharField(max_length=20, blank=True)
    # A rater whose ratings were made outside Concord and imported by system: the name the
    # imported file gave them. Such a rater has no usable account; identity erasure clears it.
    external_name = models.CharField(max_length=200, blank=True)
    # The IANA time zone the rater's browser reported (e.g. "Europe/Berlin"): a daily
    # exposure limit resets at their midnight, and its message speaks their local time.
    time_zone = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "user"], name="one_membership_per_study"),
            models.UniqueConstraint(
                fields=["study", "pseudonym"],
                condition=~models.Q(pseudonym=""),
                name="unique_pseudonym_per_study",
            ),
        ]

    def __str__(self):
        return self.pseudonym or f"{self.get_role_display()} in {self.study_id}"


class System(models.Model):
    """A system under test; its name is never shown to raters."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="systems")
    name = models.CharField(max_length=100)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["study", "name"], name="unique_system_name"),
        ]

    def __str__(self):
        return self.name


class TestCaseQuerySet(models.QuerySet):
    def in_sample(self):
        """The cases the study's questions are about: not gold items, not attention checks.

        Agreement, analysis and the results read the sample through this; quality control
        reads the other purposes.
        """
        return self.filter(purpose=TestCase.Purpose.SAMPLE)


class TestCase(models.Model):
    class Purpose(models.TextChoices):
        SAMPLE = "sample", "Sample"
        GOLD = "gold", "Gold item"
        ATTENTION = "attention", "Attention check"

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="test_cases")
    case_id = models.CharField("test case id", max_length=50)
    position = models.PositiveIntegerField()
    prompt = models.TextField()
    context = models.TextField(blank=True)
    stratum = models.CharField(max_length=100, blank=True)
    # Shown to the rater before the responses, with the choice to skip (protocol 3); the
    # stratum's warning (``StratumSetting``) applies as well.
    content_warning = models.TextField(blank=True)
    # Never shown to raters: a gold item or attention check must look like any other case.
    purpose = models.CharField(max_length=10, choices=Purpose, default=Purpose.SAMPLE)

    objects = TestCaseQuerySet.as_manager()

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["study", "case_id"], name="unique_case_id"),
        ]
        indexes = [
            # A page of a study's cases in their order (the case list, results, overview)
            # reads 50 entries of this index instead of sorting every case of the study.
            models.Index(fields=["study", "position"], name="testcase_study_position"),
        ]

    def __str__(self):
        return self.case_id


class ExpectedAnswer(models.Model):
    """The expected answers of a gold item or attention check, and the explanation.

    ``answers`` is ``{"responses": {key label: {dimension key: expected}}, "case": {dimension
    key: expected}}``, each expected answer in the shape its rubric kind reads
    (``expected_in`` / ``expected_met`` in ``studies.rubric``); a dimension left out has no
    expectation. Never shown to raters, except the explanation after a miss when the study
    gives feedback on gold items.
    """

    test_case = models.OneToOneField(TestCase, on_delete=models.CASCADE, related_name="expected")
    answers = models.JSONField(default=dict)
    explanation = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"Expected answers of {self.test_case}"


class AdjudicationRule(models.Model):
    """When a dimension's ratings of a case go to adjudication (protocol 5.3, 7.3).

    Set before the study opens and frozen with the protocol (the rules as planned are in
    the protocol document). A dimension without a row is never adjudicated automatically;
    a lead can still send a case by hand. The one change allowed once the study is open is
    7.3's action: "every disagreement" after the dimension misses its agreement target,
    recorded with its reason as a deviation from the protocol (``switched_*``).
    """

    class Trigger(models.TextChoices):
        NEVER = "never", "Never"
        # Any rating among ``values`` (e.g. any "Yes" on a harm question).
        VALUES = "values", "Any rating in named values"
        # Not unanimous (categories, preferences), or a spread over ``tolerance`` points.
        DISAGREEMENT = "disagreement", "Any disagreement"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="adjudication_rules")
    dimension_key = models.SlugField(max_length=50)
    trigger = models.CharField(max_length=20, choices=Trigger.choices, default=Trigger.NEVER)
    # VALUES: the answers that trigger, in the kind's stored value (a category's code, ...).
    values = models.JSONField(default=list, blank=True)
    # DISAGREEMENT on scales and points: the largest spread (max - min) that still agrees.
    tolerance = models.PositiveSmallIntegerField(default=0)
    # 7.3's action, taken while the study runs: every disagreement, whatever ``trigger``.
    switched_at = models.DateTimeField(null=True, blank=True)
    switched_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    switched_reason = models.TextField(blank=True)

    class Meta:
        ordering = ["study", "dimension_key"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "dimension_key"], name="one_adjudication_rule_per_dimension"
            ),
        ]

    def __str__(self):
        return f"Adjudication of {self.dimension_key} in {self.study_id}: {self.trigger}"


class QualitySettings(models.Model):
    """A study's quality-control rules (protocol section 8); frozen with the protocol.

    A study without a row uses the defaults, the protocol template's.
    """

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="quality_settings")
    gold_percent = models.PositiveSmallIntegerField(
        "gold items (% of each rater's screens)", default=10
    )
    gold_pass_percent = models.PositiveSmallIntegerField("gold accuracy needed (%)", default=70)
    gold_minimum = models.PositiveSmallIntegerField(
        "gold items answered before the rule applies", default=5
    )
    gold_feedback = models.BooleanField(
        "explain a missed gold item to the rater",
        default=False,
        help_text="Off by default: the protocol keeps gold items unannounced.",
    )
    attention_every = models.PositiveSmallIntegerField(
        "one attention check per this many items", default=50
    )
    attention_misses = models.PositiveSmallIntegerField(
        "missed attention checks that flag a rater", default=2
    )
    min_median_seconds = models.PositiveSmallIntegerField(
        "median seconds per item under which a rater is flagged", default=20
    )
    position_share_percent = models.PositiveSmallIntegerField(
        "position bias: share of first-shown choices that flags (%)", default=70
    )
    position_alpha = models.DecimalField(
        "position bias: significance level",
        max_digits=4,
        decimal_places=3,
        default=Decimal("0.050"),
    )
    straight_line_items = models.PositiveSmallIntegerField(
        "no variation on a dimension across this many items flags", default=10
    )

    class Meta:
        verbose_name_plural = "quality settings"

    def __str__(self):
        return f"Quality control of {self.study}"


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


class Response(models.Model):
    """One system's answer to a test case."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    test_case = models.ForeignKey(TestCase, on_delete=models.CASCADE, related_name="responses")
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="responses")
    text = models.TextField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["test_case", "system"], name="one_response_per_system"),
        ]

    def __str__(self):
        return f"Response to {self.test_case}"


class IdentityMention(models.Model):
    """A passage of a response that may say which system or model wrote it.

    Found by ``studies.importing.identity_check`` when the response is written (the case import) and
    stored, so the pages that show the blinding check read a few rows instead of scanning
    every text of the study again. Rows of one response keep the scanner's order (pk).
    """

    response = models.ForeignKey(
        Response, on_delete=models.CASCADE, related_name="identity_mentions"
    )
    reason = models.CharField(max_length=100)
    matched = models.TextField()
    snippet = models.TextField()

    def __str__(self):
        return f"{self.reason} ({self.matched})"


class BlindedLabel(models.Model):
    """The unblinding key: which response is shown under which label.

    Kept in its own table so that rater-facing code reads labels and text only through
    the selectors in ``studies.selectors`` and never joins the system.
    """

    test_case = models.ForeignKey(TestCase, on_delete=models.CASCADE, related_name="labels")
    label = models.CharField(max_length=1)
    response = models.OneToOneField(Response, on_delete=models.CASCADE, related_name="blinded")

    class Meta:
        ordering = ["label"]
        constraints = [
            models.UniqueConstraint(fields=["test_case", "label"], name="unique_label_per_case"),
        ]

    def __str__(self):
        return f"{self.test_case} {self.label}"


class Invitation(models.Model):
    """A single-use, expiring invitation to join a study in a role.

    Either a link that adds whoever opens it, or, when a coordinator names an existing
    account, a personal invitation that only that account sees and can accept or decline.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="invitations")
    role = models.CharField(max_length=20, choices=Membership.Role.choices)
    # Only a hash of the token is stored; the link itself is shown once, when created.
    token_hash = models.CharField(max_length=64, unique=True)
    note = models.CharField(max_length=200, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # A personal invitation: the username the coordinator typed, and the account it named
    # if there is one that may join (empty otherwise, so nobody can accept it; the
    # coordinator is told the same either way).
    invitee_name = models.CharField(max_length=150, blank=True)
    invitee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="study_invitations",
    )
    declined_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"Invitation to {self.study} as {self.role}"

    @property
    def is_personal(self) -> bool:
        return bool(self.invitee_name)


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


class CaseUpload(models.Model):
    """A test-case file as uploaded, kept between its preview and its import.

    The file is validated again when it is imported, so a preview can never import what
    has changed since (for example ids added by another import in between). Imported files
    are kept, with their SHA-256, as a record of exactly what was imported.
    """

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="case_uploads")
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    filename = models.CharField(max_length=255)
    size = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)
    # A file, not a column: a large upload is streamed to disk and read back as a stream.
    file = models.FileField(storage=case_upload_storage, upload_to=case_upload_name, max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    imported_at = models.DateTimeField(null=True, blank=True)
    # The checked file's number of cases (the import's progress counts towards it). Its
    # import runs as a job of the runner (``jobs``, the upload's UUID as its subject).
    cases = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return self.filename


class ApiToken(models.Model):
    """A personal key to the HTTP API; it acts as its user, with that user's study roles.

    Only the SHA-256 of the secret is stored: the secret is shown once, when created.
    Written only by ``studies.services.tokens``.
    """

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    # The first characters of the secret, so a person can tell their tokens apart.
    prefix = models.CharField(max_length=12)
    secret_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


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
