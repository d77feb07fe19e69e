"""Quality control as planned in the protocol: gold items' expected answers, the
adjudication rules and the quality-control settings."""

from decimal import Decimal

from django.conf import settings
from django.db import models

from .cases import TestCase
from .study import Study


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
