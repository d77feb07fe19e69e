"""The lock a rating write takes on its assignment, once the study and the rater allow it,
and the count of a save: its version and its active time."""

from django.db.models import prefetch_related_objects

from annotation.models import Assignment
from annotation.services.exposure import exposure_credit
from studies.locks import membership_lock, study_lock
from studies.models import Membership

from .rating_checks import RatingClosedError, RatingInvalidError

MAX_ACTIVE_SECONDS_PER_SAVE = 6 * 60 * 60


# A crowd participant's case released after their time-out (``services.participants``).
MOVED_ON_MESSAGE = (
    "This item moved on to another participant after a time without activity, so this "
    "answer was not saved. Thank you: the ratings you submitted before are kept."
)
SKIPPED_MESSAGE = (
    "You skipped this case, so it was not saved. Undo the skip on the case's page to rate it."
)


def _active_seconds_credit(*, assignment: Assignment, claimed, now) -> int:
    """The active time a save may add: what the page claims, never more than has passed.

    The page counts the seconds it was in use; a claim is credited up to the wall time
    since this case was last saved (or, the first time, since it was assigned), so no
    request can claim more time than has passed.
    """
    try:
        seconds = int(claimed or 0)
    except (TypeError, ValueError):
        return 0
    since = assignment.last_saved_at or assignment.updated_at
    elapsed = (now - since).total_seconds() if since else MAX_ACTIVE_SECONDS_PER_SAVE
    return max(0, min(seconds, MAX_ACTIVE_SECONDS_PER_SAVE, int(elapsed)))


def _locked(assignment: Assignment) -> Assignment:
    """The assignment locked for a rating write, once the study and rater allow it.

    The study and the membership are held shared and only the assignment row exclusively
    (the order and strengths of ``studies.locks``): raters never wait for one another, and
    closing the study or pausing the rater waits for this write, or this write for it.
    """
    # An assignment's rater and test case never change: the caller's copy names the rows.
    study = study_lock(assignment.test_case.study_id)
    if not study.accepts_ratings:
        raise RatingClosedError("This study is not accepting ratings at the moment.")
    rater = membership_lock(assignment.rater_id)
    if rater.status != Membership.Status.ACTIVE:
        raise RatingClosedError("Your participation in this study is on hold.")
    locked = (
        Assignment.objects.select_for_update(of=("self",), no_key=True)
        .select_related("test_case")
        .get(pk=assignment.pk)
    )
    if locked.released_at is not None:
        raise RatingClosedError(MOVED_ON_MESSAGE)
    if locked.status == Assignment.Status.SKIPPED:
        raise RatingInvalidError(SKIPPED_MESSAGE)
    locked.rater = rater
    locked.test_case.study = study
    # Scoring reads the rubric's dimensions several times: one query for the whole write.
    prefetch_related_objects([study], "rubric__dimensions")
    return locked


def _saved(assignment: Assignment, *, claimed_seconds, now) -> None:
    """Count a save on a locked assignment: its version and its active time.

    The row stays locked until the transaction ends, so the values read with it are the
    stored ones: they are incremented here, and nothing needs to be read back. The active
    time also counts toward the rater's daily exposure, in the same transaction.
    """
    credit = _active_seconds_credit(assignment=assignment, claimed=claimed_seconds, now=now)
    assignment.active_seconds += credit
    assignment.version += 1
    assignment.last_saved_at = now
    exposure_credit(
        rater=assignment.rater, stratum=assignment.test_case.stratum, seconds=credit, end=now
    )
