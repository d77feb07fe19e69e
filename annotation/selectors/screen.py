"""Reads for the rating screen: the responses in the order the rater sees them, and where
the case stands in the rater's order. Nothing here joins the system of a response."""

from dataclasses import dataclass
from typing import TypeVar

from django.db.models import Count, Max, Min, Q

from annotation.models import Assignment
from studies.blinding import LABELS
from studies.models import BlindedLabel

from .progress import HANDLED, Progress


def blinded_responses(*, assignment: Assignment) -> list[tuple[str, str, str]]:
    """(shown label, key label, text) for each response, in the order shown to the rater.

    Screens are lettered by position, so the first response shown is always "Response A";
    on a flipped screen (balanced side design) it is the key's last label.
    """
    rows = BlindedLabel.objects.filter(test_case_id=assignment.test_case_id)
    rows = list(rows.select_related("response").order_by("label"))
    return [(shown, row.label, row.response.text) for shown, row in _on_screen(assignment, rows)]


def screen_labels(*, assignment: Assignment) -> list[tuple[str, str, int]]:
    """(shown label, key label, response id) for each response, as ``blinded_responses``
    orders them, without the texts: what a rating write needs."""
    rows = BlindedLabel.objects.filter(test_case_id=assignment.test_case_id).order_by("label")
    rows = list(rows.values_list("label", "response_id"))
    return [
        (shown, label, response_id) for shown, (label, response_id) in _on_screen(assignment, rows)
    ]


# A case's row as a caller reads it: a ``BlindedLabel`` or some of its values.
Row = TypeVar("Row")


def _on_screen(assignment: Assignment, rows: list[Row]) -> list[tuple[str, Row]]:
    """(shown label, row) for a case's rows in key-label order: the first on screen is "A";
    a flipped screen shows them in reverse."""
    ordered = list(reversed(rows)) if assignment.flipped else rows
    return list(zip(LABELS, ordered, strict=False))


@dataclass(frozen=True)
class CasePosition:
    number: int  # the case's place in the rater's order, from 1
    previous: Assignment | None
    next: Assignment | None
    progress: Progress  # the rater's cases submitted and assigned


def case_position(*, assignment: Assignment) -> CasePosition:
    """Where the case stands in the rater's order, and the rater's progress: two queries,
    however many cases the rater has."""
    cases = assignment.rater.assignments
    here = assignment.position
    counts = cases.aggregate(
        total=Count("id"),
        done=Count("id", filter=Q(status__in=HANDLED)),
        skipped=Count("id", filter=Q(status=Assignment.Status.SKIPPED)),
        before=Count("id", filter=Q(position__lt=here)),
        previous=Max("position", filter=Q(position__lt=here)),
        next=Min("position", filter=Q(position__gt=here)),
    )
    wanted = [counts[side] for side in ("previous", "next") if counts[side] is not None]
    near = {
        a.position: a for a in cases.filter(position__in=wanted).only("uuid", "position", "rater")
    }
    return CasePosition(
        number=counts["before"] + 1,
        previous=near.get(counts["previous"]),
        next=near.get(counts["next"]),
        progress=Progress(done=counts["done"], total=counts["total"], skipped=counts["skipped"]),
    )
