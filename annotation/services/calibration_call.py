"""Writes for the calibration call (protocol 4.2): the lead records a call held with the
raters and who attended it, the step's pass rule.

Attendance is what a study with ``OnboardingSettings.calibration_call_required`` asks of a
qualified rater before the main phase (``annotation.selectors.onboarding_state``).
"""

from collections.abc import Sequence
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from annotation.models import CalibrationAttendance, CalibrationCall
from studies.errors import ApplicationError
from studies.events import study_event_record
from studies.locks import study_lock
from studies.models import Membership, Study, StudyEvent

MAX_NOTE_LENGTH = 5000
# A call is recorded once held; a few minutes' grace for a clock set slightly ahead.
FUTURE_GRACE = timedelta(minutes=10)


class CalibrationCallError(ApplicationError):
    """The call cannot be recorded; the message says what to fix."""


@transaction.atomic
def calibration_call_record(
    *,
    study: Study,
    actor: User | None,
    held_at: datetime,
    attended: Sequence[Membership],
    note: str = "",
) -> CalibrationCall:
    """Record a call held on ``held_at`` and the raters who attended it.

    Every attendee must be a rater of this study who has not withdrawn; at least one is
    named. The study's audit trail records the call with the attendees' pseudonyms.
    """
    # Shared: the study's status must not change until the call is recorded.
    locked = study_lock(study.pk)
    if locked.is_draft:
        raise CalibrationCallError(
            "The study has not started: raters take the qualification test once it has, and "
            "a calibration call discusses their answers."
        )
    if locked.is_closed:
        raise CalibrationCallError("Rating is over in this study: no call is recorded now.")
    if held_at is None or timezone.is_naive(held_at):
        raise CalibrationCallError("Give the date and time the call was held.")
    if held_at > timezone.now() + FUTURE_GRACE:
        raise CalibrationCallError(
            "The date is in the future: record a call once it has been held."
        )
    note = str(note or "").strip()
    if len(note) > MAX_NOTE_LENGTH:
        raise CalibrationCallError(f"The note is limited to {MAX_NOTE_LENGTH} characters.")
    ids = sorted({member.pk for member in attended})
    if not ids:
        raise CalibrationCallError("Tick at least one rater who attended the call.")
    raters = list(
        Membership.objects.filter(
            pk__in=ids, study=locked, role=Membership.Role.RATER, withdrawal__isnull=True
        )
        .exclude(status=Membership.Status.WITHDRAWN)
        .order_by("pseudonym")
    )
    if len(raters) != len(ids):
        raise CalibrationCallError(
            "Only raters of this study who have not withdrawn can be recorded as attending."
        )
    call = CalibrationCall.objects.create(
        study=locked,
        held_at=held_at,
        note=note,
        recorded_by=actor if getattr(actor, "pk", None) else None,
    )
    CalibrationAttendance.objects.bulk_create(
        [CalibrationAttendance(call=call, rater=rater) for rater in raters]
    )
    study_event_record(
        study=locked,
        actor=actor,
        kind=StudyEvent.Kind.CALIBRATION_CALL_RECORDED,
        call=str(call.uuid),
        held_at=held_at.isoformat(),
        attended=[rater.pseudonym for rater in raters],
    )
    return call
