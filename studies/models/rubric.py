"""A rubric and its dimensions; what each kind of dimension means is in ``studies.rubric``."""

import uuid

from django.db import models

from .. import rubric as rubric_scoring


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
    # A submitted rating must answer a required dimension (issue 39); a draft need not.
    required = models.BooleanField(
        default=True, help_text="Off: raters may leave this dimension unanswered."
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
            key=self.key, name=self.name, kind=self.kind, config=self.config,
            required=self.required,
        )  # fmt: skip

    @property
    def max_points(self) -> int:
        return self.scoring().max_points
