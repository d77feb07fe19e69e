import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone


class Job(models.Model):
    """One run of a background job of a study, and how it ended.

    The row holds its state, its heartbeat while it runs (whether it is alive, see
    ``jobs.services``, which alone writes it), its last progress, its result or its error.
    """

    class Kind(models.TextChoices):
        CASE_IMPORT = "case_import", "Case import"
        ASSIGN = "assign", "Assign"
        ANALYSIS = "analysis", "Analysis"
        WORKSHEET_IMPORT = "worksheet_import", "Worksheet import"
        EXPORT = "export", "Export"

    class State(models.TextChoices):
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        STOPPED = "stopped", "Stopped"

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    # The study's primary key and, where the job works on one record of it (a case upload),
    # that record's UUID: plain values, so that the runner imports no app.
    study_id = models.BigIntegerField(db_index=True)
    subject = models.UUIDField(null=True, blank=True)
    # Which of its kind, where a study may run several at once (an analysis: "ranking").
    name = models.CharField(max_length=100, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    state = models.CharField(max_length=10, choices=State.choices, default=State.RUNNING)
    done = models.PositiveBigIntegerField(default=0)
    total = models.PositiveBigIntegerField(default=0)
    message = models.CharField(max_length=200, blank=True)
    # Meant for the user: why it failed or stopped.
    error = models.TextField(blank=True)
    result = models.JSONField(default=dict, blank=True)
    # A job whose result is a file (an export): the file's name in JOB_FILES_ROOT (the
    # job's UUID: it tells nothing), empty once removed; the name it downloads under, its
    # size, media type and SHA-256 (``jobs.files``).
    file_path = models.CharField(max_length=100, blank=True)
    file_name = models.CharField(max_length=200, blank=True)
    file_size = models.PositiveBigIntegerField(null=True, blank=True)
    file_type = models.CharField(max_length=100, blank=True)
    file_sha256 = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    # When its run was last heard from, by the database's clock (``jobs.services``).
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["study_id", "kind", "-created_at"])]
        constraints = [
            # Two presses at once start one job: the second finds the first.
            models.UniqueConstraint(
                fields=["kind", "study_id", "name"],
                condition=models.Q(state="running"),
                name="one_active_job_per_study_kind_and_name",
            )
        ]

    def __str__(self):
        return f"{self.get_kind_display()} job {self.uuid} of study {self.study_id}"

    @property
    def is_active(self) -> bool:
        return self.state == self.State.RUNNING


# A job's states as the API names them (its schema's JobStateEnum).
JOB_STATES = list(Job.State.values)
