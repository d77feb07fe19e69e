import uuid

from django.db import models

from studies.models import Membership, Response, TestCase


class Assignment(models.Model):
    """One test case given to one rater, with the rater's draft and per-case answers."""

    class Status(models.TextChoices):
        TODO = "todo", "Not started"
        DRAFT = "draft", "In progress"
        SUBMITTED = "submitted", "Submitted"

    class Confidence(models.TextChoices):
        LOW = "low", "Low"
        MEDIUM = "medium", "Medium"
        HIGH = "high", "High"

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
    active_seconds = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["rater", "test_case"], name="one_assignment_per_case"),
            models.UniqueConstraint(fields=["rater", "position"], name="unique_rater_position"),
        ]

    def __str__(self):
        return f"{self.test_case} for {self.rater}"


class Rating(models.Model):
    """One rater's submitted score of one blinded response."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="ratings")
    # The label from the blinding key, and the label the rater saw on screen (they differ
    # when the screen was flipped in a balanced side design).
    label = models.CharField(max_length=1)
    shown_label = models.CharField(max_length=1)
    response = models.ForeignKey(Response, on_delete=models.PROTECT, related_name="ratings")
    scores = models.JSONField()
    total = models.PositiveIntegerField()
    submitted_at = models.DateTimeField()

    class Meta:
        ordering = ["label"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "label"], name="one_rating_per_label"),
        ]

    def __str__(self):
        return f"Response {self.label} of {self.assignment}"
