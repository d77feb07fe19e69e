"""What the exports read of a study's assignments and ratings: plain rows read a chunk at a
time, the key labels of each case and, once unblinded, their systems.

Blinding: before the study is unblinded nothing here reads a response's system
(``_systems`` returns None)."""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC
from typing import Any

from django.db.models import Count

from studies.bulk_rows import batches
from studies.models import BlindedLabel, Membership, Study, TestCase

from .models import Assignment, Rating, RatingRevision

CHUNK = 500


def _labels_by_case(study: Study) -> dict[int, list[str]]:
    labels: dict[int, list[str]] = {}
    rows = BlindedLabel.objects.filter(test_case__study=study).order_by("test_case_id", "label")
    for test_case_id, label in rows.values_list("test_case_id", "label").iterator():
        labels.setdefault(test_case_id, []).append(label)
    return labels


def _systems(study: Study) -> dict[tuple[int, str], str] | None:
    """(test case pk, key label) -> system name; None while the study is blinded."""
    if not study.is_unblinded:
        return None
    rows = BlindedLabel.objects.filter(test_case__study=study).values_list(
        "test_case_id", "label", "response__system__name"
    )
    systems = {(case, label): name for case, label, name in rows.order_by("test_case_id", "label")}
    # A case-level answer (a preference) concerns the pair: its systems in key order.
    pairs: dict[int, list[str]] = {}
    for (case, _), name in systems.items():
        pairs.setdefault(case, []).append(name)
    systems.update({(case, ""): " vs ".join(names) for case, names in pairs.items()})
    return systems


@dataclass(slots=True)
class _Rated:
    """What the exports read of one assignment, and of its ratings (``_RatingRow``).
    Plain slotted classes, not frozen ones: a frozen dataclass sets each field through
    ``object.__setattr__``, and a large study's export makes 100,000s of these."""

    pk: int
    test_case_id: int
    case_id: str
    stratum: str
    purpose: str
    rater: str  # the pseudonym
    rater_status: str
    status: str
    flipped: bool
    case_scores: dict
    notes: str
    confidence: str  # as stored: low, medium, high or ""
    active_seconds: int
    version: int
    source: str
    ratings: list
    # The submitted answer's number: 1 for the first submission, 2 after one revision.
    submission: int = 0

    @property
    def confidence_shown(self) -> str:
        return _CONFIDENCE.get(self.confidence, self.confidence)


@dataclass(slots=True)
class _RatingRow:
    label: str
    shown_label: str
    scores: dict
    total: int
    submitted_at: Any


_RATED_FIELDS = (
    "pk", "test_case_id", "test_case__case_id", "test_case__stratum", "test_case__purpose",
    "rater__pseudonym", "rater__status", "status", "flipped", "case_scores", "notes",
    "confidence", "active_seconds", "version", "source",
)  # fmt: skip
_CONFIDENCE = dict(Assignment.Confidence.choices)


def label_keyed(assignments, *, study: Study):
    """The assignments an export may list by key label: before unblinding, none imported by
    system. Their ratings came by system name, so beside them a rating by label gives the
    key to whoever imported the file (issue 38); they are exported once the study is
    unblinded, and counted meanwhile in the report, the page and the data dictionary."""
    if study.is_unblinded:
        return assignments
    return assignments.exclude(source=Assignment.Source.IMPORTED)


def _assignments(
    study: Study,
    *,
    rater: str | None = None,
    submitted_only: bool = False,
    sample_only: bool = False,
) -> Iterator[_Rated]:
    """The raters' assignments in rater and case order, with their ratings: plain rows
    read a chunk at a time (no model instances: a large study's export reads 100,000s)."""
    assignments = label_keyed(
        Assignment.objects.filter(test_case__study=study, rater__role=Membership.Role.RATER),
        study=study,
    ).order_by("rater__pseudonym", "test_case__position")
    if sample_only:
        assignments = assignments.filter(test_case__purpose=TestCase.Purpose.SAMPLE)
    if rater:
        assignments = assignments.filter(rater__pseudonym=rater)
    if submitted_only:
        assignments = assignments.filter(status=Assignment.Status.SUBMITTED)
    for chunk in batches(assignments.values_list(*_RATED_FIELDS).iterator(chunk_size=CHUNK), CHUNK):
        yield from _with_ratings(chunk)


def _with_ratings(chunk: list[tuple]) -> Iterator[_Rated]:
    ratings: dict[int, list[_RatingRow]] = {}
    rows = (
        Rating.objects.filter(assignment_id__in=[row[0] for row in chunk])
        .order_by("assignment_id", "label")
        .values_list("assignment_id", "label", "shown_label", "scores", "total", "submitted_at")
    )
    for assignment_id, *fields in rows:
        ratings.setdefault(assignment_id, []).append(_RatingRow(*fields))
    replaced = dict(
        RatingRevision.objects.filter(assignment_id__in=[row[0] for row in chunk])
        .order_by()
        .values("assignment_id")
        .annotate(n=Count("pk"))
        .values_list("assignment_id", "n")
    )
    for row in chunk:
        submitted = row[7] == Assignment.Status.SUBMITTED
        yield _Rated(
            *row,
            ratings=ratings.get(row[0], []),
            submission=replaced.get(row[0], 0) + 1 if submitted else 0,
        )


def _timestamp(value) -> str:
    if value is None:
        return ""
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
