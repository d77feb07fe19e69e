"""Test cases, the systems under test and their responses, the blinded labels (the
unblinding key), the identity mentions found in the texts, and the uploaded case files."""

import uuid

from django.conf import settings
from django.db import models

from ..upload_files import case_upload_name, case_upload_storage
from .study import Study


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

    def quality_items(self):
        """The gold items and attention checks (not the cases left out of the sample)."""
        return self.filter(purpose__in=(TestCase.Purpose.GOLD, TestCase.Purpose.ATTENTION))


class TestCase(models.Model):
    class Purpose(models.TextChoices):
        SAMPLE = "sample", "Sample"
        GOLD = "gold", "Gold item"
        ATTENTION = "attention", "Attention check"
        # A quality item taken back: its key was shown by system, so it never counts as a
        # sample case again (issue 38), nor as a quality item until made one again.
        LEFT_OUT = "left_out", "Left out of the sample (key shown)"

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
    # When the case's key was first shown by system (it became a gold item or attention
    # check, whose expected answers are entered and read per system): from then on it is
    # never a sample case, whatever happens to it (issue 38).
    key_shown_at = models.DateTimeField(null=True, blank=True)

    objects = TestCaseQuerySet.as_manager()

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["study", "case_id"], name="unique_case_id"),
            # A sample case's key was never shown; every other case's was.
            models.CheckConstraint(
                condition=models.Q(purpose="sample", key_shown_at__isnull=True)
                | (~models.Q(purpose="sample") & models.Q(key_shown_at__isnull=False)),
                name="sample_case_key_never_shown",
            ),
        ]
        indexes = [
            # A page of a study's cases in their order (the case list, results, overview)
            # reads 50 entries of this index instead of sorting every case of the study.
            models.Index(fields=["study", "position"], name="testcase_study_position"),
        ]

    def __str__(self):
        return self.case_id

    @property
    def is_left_out(self) -> bool:
        return self.purpose == self.Purpose.LEFT_OUT


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
