"""How a crowd participant's part ends, and what happens to the cases they held.

Screened out (declined consent, failed the qualification test) or timed out: the cases
they had not submitted are released (marked skipped, with ``released_at``), so they hold
no place among their cases' k raters, and the design's top-up gives them to the next
participant (``raters_need_cases``, after commit). Their submitted ratings are kept. A
submit that arrives after the release is told the item moved on (``rating_locks._locked``).

Completion: every assigned case submitted or skipped, and the end-of-study form sent.
"""

from datetime import timedelta

from django.db import transaction
from django.db.models import Count, Max, Q
from django.utils import timezone

from annotation.models import Assignment, StudyFeedback
from annotation.selectors.progress import HANDLED
from studies.errors import ApplicationError
from studies.locks import membership_lock, study_lock
from studies.models import Membership, Participant, ParticipantLink, TestCase
from studies.services.participants import participant_finish
from studies.signals import raters_need_cases_announce

OPEN = (Assignment.Status.TODO, Assignment.Status.DRAFT)


class ParticipantStepError(ApplicationError):
    """The participant's step cannot be recorded; the message says why."""


def _release(rater: Membership, now) -> int:
    """Release the rater's open cases; the caller holds the study and the rater locked."""
    cases = list(
        TestCase.objects.select_for_update(of=("self",), no_key=True)
        .filter(assignments__rater=rater, assignments__status__in=OPEN)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    if not cases:
        return 0
    ids = list(
        Assignment.objects.select_for_update(of=("self",), no_key=True)
        .filter(rater=rater, status__in=OPEN, test_case_id__in=cases)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    released = Assignment.objects.filter(pk__in=ids, status__in=OPEN).update(
        status=Assignment.Status.SKIPPED, skipped_at=now, released_at=now, updated_at=now
    )
    if released:
        # The design's top-up gives the released cases to the next participants.
        raters_need_cases_announce(study_id=rater.study_id, reason="released")
    return released


@transaction.atomic
def participant_screen_out(*, rater: Membership, reason: str) -> Participant:
    """Record that the participant was screened out ("consent" declined, "qualification"
    failed) and release their open cases."""
    study_lock(rater.study_id)
    locked = membership_lock(rater.pk, exclusive=True)
    if not Participant.objects.filter(membership=locked).exists():
        raise ParticipantStepError("Only a participant from a study link is screened out.")
    participant = participant_finish(
        membership=locked, status=Participant.Status.SCREENED_OUT, reason=reason
    )
    if participant.status == Participant.Status.SCREENED_OUT:
        _release(locked, timezone.now())
    return participant


def completion_ready(*, rater: Membership) -> bool:
    """Every assigned case submitted or skipped (at least one), and the form sent."""
    counts = rater.assignments.aggregate(
        total=Count("id"), handled=Count("id", filter=Q(status__in=HANDLED))
    )
    if not counts["total"] or counts["handled"] < counts["total"]:
        return False
    return StudyFeedback.objects.filter(rater=rater).exists()


@transaction.atomic
def participant_complete(*, rater: Membership) -> Participant:
    """The participant finished: their last case and the end-of-study form."""
    locked = membership_lock(rater.pk, exclusive=True)
    if not completion_ready(rater=locked):
        raise ParticipantStepError(
            "Finish your cases and the end-of-study form first; then you get the code."
        )
    return participant_finish(membership=locked, status=Participant.Status.COMPLETED)


def participant_last_active(*, participant: Participant):
    """When the participant last did something the study records: joined, consented,
    answered a worked example or a test item, started or finished a qualification attempt
    (their cases are held from joining, and onboarding comes first), or saved, submitted
    or skipped a case."""
    rater = participant.membership
    times = rater.assignments.aggregate(
        saved=Max("last_saved_at"), submitted=Max("submitted_at"), skipped=Max("skipped_at")
    )
    consented = rater.consents.aggregate(at=Max("agreed_at"))["at"]
    answered = rater.training_answers.aggregate(at=Max("submitted_at"))["at"]
    attempts = rater.qualification_attempts.aggregate(
        started=Max("started_at"), finished=Max("finished_at")
    )
    return max(
        t
        for t in [participant.joined_at, consented, answered, *attempts.values(), *times.values()]
        if t is not None
    )


def participants_time_out(*, study_id: int | None = None, now=None) -> int:
    """Time out every started participant who holds open cases and has done nothing for
    their link's time-out; returns how many. Idempotent, and safe against the late
    participant's own submit (see ``_time_out``)."""
    now = now or timezone.now()
    links = ParticipantLink.objects.all()
    if study_id is not None:
        links = links.filter(study_id=study_id)
    # Nobody idle yet who joined less than their link's time-out ago: a burst of arrivals
    # (each of which runs this, and a full batch study's newcomer under the study lock)
    # reads no one of the burst.
    joined_long_enough = Q(pk__in=[])
    for link_id, minutes in links.values_list("pk", "timeout_minutes"):
        joined_long_enough |= Q(link_id=link_id, joined_at__lte=now - timedelta(minutes=minutes))
    started = Participant.objects.filter(
        joined_long_enough,
        status=Participant.Status.STARTED,
        membership__assignments__status__in=OPEN,
    )
    timed_out = 0
    for participant_id in started.values_list("pk", flat=True).distinct().order_by("pk"):
        timed_out += _time_out(participant_id, now)
    return timed_out


@transaction.atomic
def _time_out(participant_id: int, now) -> int:
    participant = Participant.objects.select_related("link").get(pk=participant_id)
    # A rating write holds the study and the rater shared: this waits for it, then reads
    # the activity it recorded, so a submit either lands before the time-out (and the
    # participant is no longer idle) or after it (and is told the item moved on).
    study_lock(participant.study_id)
    rater = membership_lock(participant.membership_id, exclusive=True)
    participant = Participant.objects.select_related("link", "membership").get(pk=participant_id)
    if participant.status != Participant.Status.STARTED:
        return 0
    if rater.status != Membership.Status.ACTIVE:
        return 0  # paused, withdrawn or excluded: an administrator's matter, not a time-out
    idle_since = participant_last_active(participant=participant)
    if idle_since > now - timedelta(minutes=participant.link.timeout_minutes):
        return 0
    participant_finish(
        membership=rater,
        status=Participant.Status.TIMED_OUT,
        reason=f"no activity for {participant.link.timeout_minutes} minutes",
    )
    _release(rater, now)
    return 1
