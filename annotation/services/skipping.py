"""Skipping a case (protocol 3: "raters may skip any item"), and giving it to another rater.

A skip is not a missing rating. The skipped assignment stays with the rater, marked
skipped with its optional reason and note; in the balanced design the case goes to another
active rater (the least loaded one who does not have it yet, ties broken by a shuffle
seeded from the study seed and the case), so that the case keeps its k raters. Where no
rater can take it (everyone has it, or the study rates every case by every rater) the
event says so and the QC page counts it ("k not met after skips").

Gold items and attention checks are each rater's own: they are never handed on.
"""

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotation.models import Assignment
from annotation.selectors.skips import case_places_taken
from core.user_input import unstorable
from studies.blinding import seeded_permutation
from studies.errors import ApplicationError
from studies.events import study_event_record
from studies.locks import membership_lock, study_lock
from studies.models import TAKES_NEW_CASES, Membership, Study, StudyEvent, TestCase
from studies.selectors import skips_handed_on

from .assignment_rows import assignments_create
from .rating_checks import RatingClosedError
from .rating_locks import MOVED_ON_MESSAGE

MAX_SKIP_NOTE_LENGTH = 1000
# A rater picked for the skipped case may be taken by a concurrent write between the pick
# and the locks; the pick is made again this many times before the case is left unmet.
PICK_ATTEMPTS = 3


class SkipError(ApplicationError):
    """The skip (or its undoing) was refused; the message says why."""


class _PickTaken(Exception):
    """The rater picked for the skipped case can no longer take it; pick again."""


@dataclass(frozen=True)
class SkipOutcome:
    assignment: Assignment
    # The pseudonym of the rater the case went to; "" when it went to no one.
    reassigned_to: str = ""
    # The case has fewer than the design's k raters left who have not skipped it.
    k_unmet: bool = False
    # The case had been skipped already: nothing changed.
    already: bool = False


def skip_input_clean(*, reason, note) -> tuple[str, str]:
    """The skip's reason (one of ``Assignment.SkipReason`` or "") and note; raises on bad input."""
    reason = str(reason or "")
    if reason and reason not in Assignment.SkipReason.values:
        raise SkipError("Choose one of the reasons listed, or none.")
    note = str(note or "").strip()
    if len(note) > MAX_SKIP_NOTE_LENGTH:
        raise SkipError(f"Keep the note under {MAX_SKIP_NOTE_LENGTH:,} characters.")
    problem = unstorable(note)
    if problem:
        raise SkipError(f"The note contains {problem}; remove it.")
    return reason, note


def _needs_rater(*, study: Study, test_case: TestCase, skipper_id: int) -> bool:
    """Whether, without the skipper, the case is short of the design's raters."""
    if test_case.purpose != TestCase.Purpose.SAMPLE:
        return False
    if not study.raters_per_item:
        return True  # every rater rates every case: one fewer is one short
    return case_places_taken(test_case_id=test_case.pk, besides=skipper_id) < study.raters_per_item


def _replacement_pick(*, study: Study, test_case: TestCase, skipper_id: int) -> Membership | None:
    """The active rater who should take the case: fewest sample cases to rate, then a
    seeded shuffle; None when the design has no room for one or nobody can."""
    if not skips_handed_on(study=study) or test_case.purpose != TestCase.Purpose.SAMPLE:
        return None
    if not _needs_rater(study=study, test_case=test_case, skipper_id=skipper_id):
        return None
    have = Assignment.objects.filter(test_case=test_case).values("rater_id")
    candidates = list(
        study.memberships.filter(role=Membership.Role.RATER, status=Membership.Status.ACTIVE)
        .filter(TAKES_NEW_CASES)
        .exclude(pk__in=have)
        .exclude(pk=skipper_id)
        .annotate(
            load=Count(
                "assignments",
                filter=Q(assignments__test_case__purpose=TestCase.Purpose.SAMPLE)
                & ~Q(assignments__status=Assignment.Status.SKIPPED),
            )
        )
    )
    if not candidates:
        return None
    order = seeded_permutation(
        seed=study.blinding_seed,
        key=f"skip:{test_case.case_id}",
        items=[c.pseudonym or str(c.pk) for c in candidates],
    )
    rank = {name: index for index, name in enumerate(order)}
    return min(candidates, key=lambda c: (c.load, rank[c.pseudonym or str(c.pk)]))


def _case_lock(test_case_id: int) -> TestCase:
    return TestCase.objects.select_for_update(of=("self",), no_key=True).get(pk=test_case_id)


def _assignment_lock(assignment_id: int) -> Assignment:
    return (
        Assignment.objects.select_for_update(of=("self",), no_key=True)
        .select_related("test_case")
        .get(pk=assignment_id)
    )


def case_skip(
    *, assignment: Assignment, reason: str = "", note: str = "", actor=None
) -> SkipOutcome:
    """Mark the rater's case skipped, and give it to another rater where the design needs one.

    Refused, like a rating, while the study does not accept ratings or the rater is not
    active, and for a case already submitted. Skipping a skipped case changes nothing.
    """
    reason, note = skip_input_clean(reason=reason, note=note)
    for _ in range(PICK_ATTEMPTS):
        study = Study.objects.get(pk=assignment.test_case.study_id)
        pick = _replacement_pick(
            study=study, test_case=assignment.test_case, skipper_id=assignment.rater_id
        )
        try:
            return _skip(assignment=assignment, reason=reason, note=note, pick=pick, actor=actor)
        except _PickTaken:
            continue
    return _skip(assignment=assignment, reason=reason, note=note, pick=None, actor=actor)


@transaction.atomic
def _skip(
    *, assignment: Assignment, reason: str, note: str, pick: Membership | None, actor
) -> SkipOutcome:
    # The order of ``studies.locks``: the study shared; the memberships in id order, the
    # skipper's shared (raters never wait for each other) and the picked rater's exclusively
    # (a new assignment takes the next place in their list); the test case exclusively, so
    # that two skips of one case are handed on one after the other; then the assignment.
    study = study_lock(assignment.test_case.study_id)
    if not study.accepts_ratings:
        raise RatingClosedError("This study is not accepting ratings at the moment.")
    locked_members = {}
    for pk in sorted({assignment.rater_id} | ({pick.pk} if pick else set())):
        exclusive = pick is not None and pk == pick.pk
        locked_members[pk] = membership_lock(pk, exclusive=exclusive)
    rater = locked_members[assignment.rater_id]
    if rater.status != Membership.Status.ACTIVE:
        raise RatingClosedError("Your participation in this study is on hold.")
    test_case = _case_lock(assignment.test_case_id)
    locked = _assignment_lock(assignment.pk)
    if locked.status == Assignment.Status.SKIPPED:
        return SkipOutcome(assignment=locked, already=True)
    if locked.status == Assignment.Status.SUBMITTED:
        raise SkipError(
            "You have submitted this case, so it can no longer be skipped. You can revise "
            "your answers instead."
        )
    now = timezone.now()
    locked.status = Assignment.Status.SKIPPED
    locked.skip_reason = reason
    locked.skip_note = note
    locked.skipped_at = now
    locked.version += 1
    locked.save(
        update_fields=["status", "skip_reason", "skip_note", "skipped_at", "version", "updated_at"]
    )
    reassigned_to = ""
    if pick is not None:
        taker = locked_members[pick.pk]
        still_free = not Assignment.objects.filter(rater=taker, test_case=test_case).exists()
        if (
            taker.status != Membership.Status.ACTIVE
            or not still_free
            or not _needs_rater(study=study, test_case=test_case, skipper_id=rater.pk)
        ):
            raise _PickTaken
        case_id = test_case.case_id
        assignments_create(study=study, rater=taker, case_ids=[case_id], cases={case_id: test_case})
        reassigned_to = taker.pseudonym
    unmet = _needs_rater(study=study, test_case=test_case, skipper_id=rater.pk)
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.CASE_SKIPPED,
        membership=rater,
        case=test_case.case_id,
        stratum=test_case.stratum,
        skip_reason=reason,
        reassigned_to=reassigned_to,
        k_unmet=unmet,
    )
    locked.rater = rater
    return SkipOutcome(assignment=locked, reassigned_to=reassigned_to, k_unmet=unmet)


@transaction.atomic
def skip_undo(*, assignment: Assignment, actor=None) -> Assignment:
    """Put a skipped case back in the rater's list, while the study is open and the design
    still has room for them on it; a case that is not skipped is left as it is."""
    study = study_lock(assignment.test_case.study_id)
    if not study.accepts_ratings:
        raise RatingClosedError("This study is not accepting ratings at the moment.")
    rater = membership_lock(assignment.rater_id)
    if rater.status != Membership.Status.ACTIVE:
        raise RatingClosedError("Your participation in this study is on hold.")
    test_case = _case_lock(assignment.test_case_id)
    locked = _assignment_lock(assignment.pk)
    if locked.status != Assignment.Status.SKIPPED:
        return locked
    if locked.released_at is not None:
        raise SkipError(MOVED_ON_MESSAGE)
    k = study.raters_per_item
    if (
        k
        and test_case.purpose == TestCase.Purpose.SAMPLE
        and case_places_taken(test_case_id=test_case.pk, besides=rater.pk) >= k
    ):
        raise SkipError(
            "This case has been given to another rater since you skipped it, so it stays skipped."
        )
    locked.status = Assignment.Status.DRAFT if locked.draft else Assignment.Status.TODO
    locked.skip_reason = ""
    locked.skip_note = ""
    locked.skipped_at = None
    locked.version += 1
    locked.save(
        update_fields=["status", "skip_reason", "skip_note", "skipped_at", "version", "updated_at"]
    )
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.CASE_SKIPPED,
        membership=rater,
        case=test_case.case_id,
        stratum=test_case.stratum,
        undone=True,
    )
    locked.rater = rater
    return locked
