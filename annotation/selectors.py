"""Reads for raters. Nothing here joins the system of a response."""

from dataclasses import dataclass

from django.db.models import Count, Q

from studies.blinding import LABELS
from studies.models import BlindedLabel, Membership

from .models import Assignment


@dataclass(frozen=True)
class Progress:
    done: int
    total: int

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0


def rater_memberships(*, user) -> list[tuple[Membership, Progress]]:
    memberships = (
        Membership.objects.filter(user=user, role=Membership.Role.RATER)
        .select_related("study")
        .annotate(
            total=Count("assignments"),
            done=Count("assignments", filter=Q(assignments__status=Assignment.Status.SUBMITTED)),
        )
        .order_by("study__name")
    )
    return [(m, Progress(done=m.done, total=m.total)) for m in memberships]


def rater_progress(*, rater: Membership) -> Progress:
    counts = rater.assignments.aggregate(
        total=Count("id"), done=Count("id", filter=Q(status=Assignment.Status.SUBMITTED))
    )
    return Progress(done=counts["done"], total=counts["total"])


def rater_assignments(*, rater: Membership):
    return rater.assignments.select_related("test_case").order_by("position")


def next_unrated(*, rater: Membership, after: Assignment | None = None) -> Assignment | None:
    """The next case not yet submitted in the rater's own order, wrapping around."""
    pending = rater.assignments.exclude(status=Assignment.Status.SUBMITTED).order_by("position")
    if after is not None:
        later = pending.filter(position__gt=after.position).first()
        if later is not None:
            return later
    return pending.first()


def blinded_responses(*, assignment: Assignment) -> list[tuple[str, str, str]]:
    """(shown label, key label, text) for each response, in the order shown to the rater.

    Screens are lettered by position, so the first response shown is always "Response A";
    on a flipped screen (balanced side design) it is the key's last label.
    """
    rows = BlindedLabel.objects.filter(test_case=assignment.test_case).select_related("response")
    rows = list(rows.order_by("label"))
    if assignment.flipped:
        rows.reverse()
    return [(shown, row.label, row.response.text) for shown, row in zip(LABELS, rows, strict=False)]
