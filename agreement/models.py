import uuid
from decimal import Decimal

from django.db import models

from studies.models import Study, TestCase


class StudyAgreement(models.Model):
    """The latest agreement statistics of a study, and how fresh they are.

    ``requested`` is bumped by every announced change of the analysis inputs (a rating
    submitted, revised, imported or withdrawn; a rater excluded or reinstated; a level of
    measurement, the success criterion, the phase or the test cases changed); ``computed``
    is the value of ``requested`` the stored result reflects. A run only writes its result
    if it is newer than the stored one, so a slow, stale run can never overwrite a fresher
    result.
    """

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="agreement")
    requested = models.PositiveBigIntegerField(default=0)
    computed = models.PositiveBigIntegerField(default=0)
    result = models.JSONField(default=dict, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    n_ratings = models.PositiveIntegerField(default=0)
    runs = models.PositiveIntegerField(default=0)
    last_requested_at = models.DateTimeField(null=True, blank=True)
    # What the stored result was computed from (``selectors.analysis_inputs``): phase,
    # dimensions and their levels, success criterion, test cases, excluded raters and the
    # ratings. A result whose inputs differ from the study's current ones is stale, even if
    # no recompute was requested.
    inputs = models.JSONField(default=dict, blank=True)

    def __str__(self):
        return f"Agreement for {self.study}"

    @property
    def is_stale(self) -> bool:
        """A recompute was requested and has not finished; see also ``selectors``."""
        return self.requested > self.computed


class JudgeTemplate(models.Model):
    """A judge prompt template of a study, with placeholders (see ``judges.PLACEHOLDERS``)."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="judge_templates")
    name = models.CharField(max_length=100)
    text = models.TextField()
    # Whether the judge may answer a tie ("[[C]]"); the text must then say so.
    allow_tie = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["study", "name"], name="unique_judge_template_name"),
        ]

    def __str__(self):
        return self.name


class Judge(models.Model):
    """An LLM judge whose outputs were imported; never a rater (see ``judges``)."""

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="judges")
    name = models.CharField(max_length=100)
    created_at = models.DateTimeField(auto_now_add=True)
    # The rule its outputs are read by: whether the template of its prompts allowed a tie
    # (set by the latest import, which reads all its outputs again by it).
    allow_tie = models.BooleanField(default=False)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["study", "name"], name="unique_judge_name"),
        ]

    def __str__(self):
        return self.name


class JudgeOutput(models.Model):
    """One imported judge output for a test case in one order (AB or BA).

    ``verdict`` is what the judge chose as shown ("A" = the first candidate of that order,
    "tie" where its template allows one), or blank when the output could not be parsed;
    ``problem`` then says why.
    """

    class Order(models.TextChoices):
        AB = "AB", "A/B (key order)"
        BA = "BA", "B/A (swapped)"

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="outputs")
    test_case = models.ForeignKey(TestCase, on_delete=models.CASCADE, related_name="judge_outputs")
    order = models.CharField(max_length=2, choices=Order.choices)
    raw_text = models.TextField()
    verdict = models.CharField(max_length=3, blank=True)
    problem = models.CharField(max_length=200, blank=True)
    imported_at = models.DateTimeField()

    class Meta:
        ordering = ["test_case__position", "order"]
        constraints = [
            models.UniqueConstraint(
                fields=["judge", "test_case", "order"], name="one_judge_output_per_order"
            ),
        ]

    def __str__(self):
        return f"{self.judge} on {self.test_case} ({self.order})"


class AnalysisPlan(models.Model):
    """What the coordinator decided about the analysis: the strata's real shares, which
    weight the overall estimate when the sample's shares differ from them (protocol 5.1),
    the measure of the primary question (protocol section 1), and how each question's
    ratings are aggregated per item, with the minimum of valid ratings (protocol 9)."""

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="analysis_plan")
    # {stratum: share}, shares summing to 1; {} = the sample's own shares (unweighted).
    stratum_shares = models.JSONField(default=dict, blank=True)
    # The measure of the primary question: "total" or a dimension's key (see
    # ``agreement.services.plan.primary_measure_choices``); "" = none named (no primary question).
    primary_measure = models.CharField(max_length=64, blank=True)
    # {dimension key: rule} for the dimensions whose rule is not their default (see
    # ``agreement.analysis.roles.RULES`` and ``DimensionRole.rules``).
    aggregation = models.JSONField(default=dict, blank=True)
    # Items with fewer valid ratings are excluded and counted; None = the default,
    # ``roles.default_min_ratings`` (2, or fewer if the design plans fewer raters).
    min_ratings = models.PositiveSmallIntegerField(null=True, blank=True)
    # Monitored collection of the primary question (``services.monitor``): the anytime-valid
    # test's two-sided alpha, the expected effect |p1 - 0.5| that sets its mixture, and the
    # futility margin's half-width around 0.5. Frozen with the protocol when it opens.
    monitoring = models.BooleanField(default=False)
    monitoring_alpha = models.DecimalField(max_digits=4, decimal_places=3, default=Decimal("0.050"))
    monitoring_effect = models.DecimalField(
        max_digits=4, decimal_places=3, default=Decimal("0.080")
    )
    monitoring_margin = models.DecimalField(
        max_digits=4, decimal_places=3, default=Decimal("0.050")
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"Analysis plan of {self.study}"


class PrimaryMonitor(models.Model):
    """The anytime-valid monitor of a study's primary question, as the worker last evaluated
    it (``services.monitor``). Only what is symmetric in the two systems is kept: the state,
    the non-tied comparisons and the mixture ratio against 0.5 with its threshold, never the
    wins, the estimate or the interval. ``version`` is the recompute request it reflects; a
    run only writes a newer one, so a stale run never overwrites a fresher state."""

    class State(models.TextChoices):
        NOT_DECIDED = "not_decided", "Not yet decided"
        DECIDED = "decided", "Decided"
        WITHIN_MARGIN = "within_margin", "No difference larger than the margin"
        UNAVAILABLE = "unavailable", "Not evaluated (the primary question is not a win rate)"

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="primary_monitor")
    version = models.PositiveBigIntegerField(default=0)
    state = models.CharField(max_length=20, choices=State.choices, default=State.NOT_DECIDED)
    n = models.PositiveIntegerField(default=0)
    statistic = models.FloatField(default=1.0)
    threshold = models.FloatField(default=20.0)
    evaluated_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"Monitor of {self.study}"


class AgreementTallies(models.Model):
    """A study's per-dimension tallies of alpha (``stats.coincidence``), kept up to date
    case by case between from-scratch runs; see ``services.tallies``.

    ``built_for`` is the analysis inputs but the ratings that the tallies were built under
    (empty: invalid, the next run rebuilds them from scratch); ``version`` grows with every
    write, so a from-scratch rebuild never replaces tallies updated after it read its data.
    """

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="tallies")
    built_for = models.JSONField(default=dict, blank=True)
    version = models.PositiveBigIntegerField(default=0)
    # {dimension key: Tally.to_json()} for the tallied dimensions.
    totals = models.JSONField(default=dict, blank=True)
    n_ratings = models.PositiveIntegerField(default=0)
    # The ratings part of the analysis inputs ([count, last, last id]) as the tallies
    # know it; None when a rating was deleted (the latest may have gone: counted again).
    inputs_ratings = models.JSONField(null=True, blank=True)
    built_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"Tallies of {self.study}"


class CaseTally(models.Model):
    """One test case's part of its study's tallies: its units' value counts
    ({dimension key: {label or "": {value: count}}}) and its counted ratings."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="case_tallies")
    test_case = models.OneToOneField(TestCase, on_delete=models.CASCADE, related_name="tally")
    counts = models.JSONField(default=dict, blank=True)
    n_ratings = models.PositiveIntegerField(default=0)
    # Its submitted ratings, counted or not (excluded raters, other phase): the inputs'.
    n_inputs = models.PositiveIntegerField(default=0)

    def __str__(self):
        return f"Tally of {self.test_case}"


class TouchedCase(models.Model):
    """A test case whose ratings changed since the tallies last read it (written in the
    rating's own transaction, consumed by the next run)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="touched_cases")
    test_case_id = models.BigIntegerField()

    def __str__(self):
        return f"Case {self.test_case_id} touched"
