"""The study and its lifecycle's predicates (every module asks these, never the status)."""

from decimal import Decimal

from django.conf import settings
from django.db import models

from ..blinding import new_secret
from .rubric import Rubric


class StudyQuerySet(models.QuerySet):
    def started(self):
        """Studies past their draft: the lifecycle's ``is_draft``, asked in the database."""
        return self.exclude(status=Study.Status.DRAFT)

    def blinded(self):
        """Studies whose key is still hidden: the lifecycle's not ``is_unblinded``."""
        return self.exclude(status=Study.Status.UNBLINDED)


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
    # Raters and adjudicators join only by an invitation bound to a person (an e-mail
    # address, an existing account, an account an administrator made, a participant link's
    # vendor id), never by an open link (issue 38).
    bound_invitations_only = models.BooleanField(default=False)
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
    def life_stages(self) -> list[tuple[str, str]]:
        """The statuses in the order a study goes through them, each with where the study
        stands: "done", "current" or "next" (the study pages' navigation shows them)."""
        order = list(self.Status)
        here = order.index(self.Status(self.status))
        return [
            (stage.label, "done" if n < here else "current" if n == here else "next")
            for n, stage in enumerate(order)
        ]

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
