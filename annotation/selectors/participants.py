"""Reads about crowd participants: the payments file of a link, and a rater's participant
record. The vendor ids are identity: only the payments file (administrators) shows them."""

from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal

from django.db.models import Count, Max, Q, Sum

from annotation.models import Assignment
from studies.models import Membership, Participant, ParticipantLink

CENT = Decimal("0.01")


def participant_of(*, rater: Membership | None) -> Participant | None:
    """The rater's participant record (they came through a link), or None."""
    if rater is None:
        return None
    try:
        # No query when the rater was read with it (``studies.access`` selects it).
        return rater.participant
    except Participant.DoesNotExist:
        return None


def bonus_for(*, link: ParticipantLink, cases: int, active_seconds: int) -> Decimal:
    """The link's bonus rule: an amount per case completed, or per hour of active time
    (pro rata by the second), rounded half up to the cent."""
    if link.bonus_rule == ParticipantLink.BonusRule.PER_CASE:
        bonus = link.bonus_amount * cases
    elif link.bonus_rule == ParticipantLink.BonusRule.PER_HOUR:
        bonus = link.bonus_amount * Decimal(active_seconds) / Decimal(3600)
    else:
        bonus = Decimal(0)
    return bonus.quantize(CENT, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class PaymentRow:
    external_id: str  # "" once erased
    status: str
    active_seconds: int
    cases_completed: int
    bonus: Decimal


def _seconds_in_study(participant: Participant, *, last: list[datetime | None]) -> int:
    """From joining to the participant's last save, submit or skip: what the active time
    paid for may not exceed."""
    times = [t for t in last if t is not None]
    if not times:
        return 0
    return max(0, int((max(times) - participant.joined_at).total_seconds()))


def payment_rows(*, link: ParticipantLink) -> list[PaymentRow]:
    """One row per participant of the link, in the order they joined (two queries)."""
    totals = {
        row["rater_id"]: row
        for row in Assignment.objects.filter(rater__participant__link=link)
        .values("rater_id")
        .annotate(
            seconds=Sum("active_seconds"),
            submitted=Count("id", filter=Q(status=Assignment.Status.SUBMITTED)),
            saved=Max("last_saved_at"),
            submitted_at=Max("submitted_at"),
            skipped=Max("skipped_at"),
        )
    }
    rows = []
    for participant in link.participants.order_by("joined_at", "pk"):
        total = totals.get(participant.membership_id)
        # Each save credits at most the time since its own case was last saved, so cases
        # open side by side could claim the same minutes once each: the time paid for is
        # never more than the time the participant spent in the study.
        seconds = (
            min(
                int(total["seconds"] or 0),
                _seconds_in_study(
                    participant, last=[total["saved"], total["submitted_at"], total["skipped"]]
                ),
            )
            if total
            else 0
        )
        cases = int(total["submitted"] or 0) if total else 0
        rows.append(
            PaymentRow(
                external_id=participant.external_id,
                status=participant.status,
                active_seconds=seconds,
                cases_completed=cases,
                bonus=bonus_for(link=link, cases=cases, active_seconds=seconds),
            )
        )
    return rows
