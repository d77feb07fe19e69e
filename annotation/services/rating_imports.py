"""Answers given off screen: a rater's worksheet (``ratings_import``) and ratings made
outside Concord, imported by system name (``ratings_import_by_system``). Each goes through
the same cleaning, scoring and revision history as a submit on screen."""

from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import prefetch_related_objects
from django.utils import timezone

from annotation.models import Assignment
from annotation.selectors.imported import concord_ratings_held, imported_ratings_held
from studies.events import study_event_record
from studies.locks import membership_lock, study_lock
from studies.models import BlindedLabel, Membership, Study, StudyEvent

from .assignment import cases_beyond_design
from .assignment_rows import assignments_create
from .rating_checks import (
    CONCORD_HELD_MESSAGE,
    IMPORTED_HELD_MESSAGE,
    RatingClosedError,
    RatingInvalidError,
    submission_check,
)
from .submission import Submission, _submissions_store


@dataclass(frozen=True)
class ImportCounts:
    created: int  # assignments created for cases the rater had not been given
    updated: int  # cases whose earlier submission was replaced


def design_room_check(*, study: Study, rater: Membership, test_case_ids: list) -> None:
    """Refuse to give the rater these cases if one would get more raters than the design
    allows (``Study.raters_per_item``); the message names the cases. In a transaction."""
    full = cases_beyond_design(study=study, rater=rater, test_case_ids=test_case_ids)
    if not full:
        return
    one = len(full) == 1
    raise RatingInvalidError(
        f"The study's design gives each test case {study.raters_per_item} raters, and "
        f"{', '.join(full)} already {'has' if one else 'have'} them; {rater.pseudonym} was "
        f"not assigned {'this case' if one else 'these cases'}. Remove "
        f"{'it' if one else 'them'} from the worksheet, or change the design."
    )


@transaction.atomic
def ratings_import(
    *, rater: Membership, answers: dict[int, dict], actor, source_name: str
) -> ImportCounts:
    """Record answers given off screen (a worksheet) for one rater: {test case id: payload}.

    All or nothing. Every answer goes through the same cleaning, scoring and revision
    history as a submission on screen. Offline raters read the responses in key order, so
    each rating's shown label is its key label and the assignment is not flipped.
    """
    # The order of ``studies.locks``. The study is held shared: raters keep saving while a
    # long import runs, and closing the study waits for the import (or the import, begun
    # after a close, waits and then reads the study closed). The rater is held exclusively:
    # a second import for them, or a pause, waits. Then the cases that gain a rater, then
    # the assignments, in id order.
    study = study_lock(rater.study_id)
    if not study.accepts_ratings:
        raise RatingClosedError(
            f"The study is {study.get_status_display().lower()}; worksheets can be imported "
            "only while it is in its pilot or open."
        )
    if imported_ratings_held(study_id=study.pk):
        raise RatingClosedError(IMPORTED_HELD_MESSAGE)
    counts = _answers_record(
        study=study,
        rater=rater,
        answers=answers,
        source=Assignment.Source.WORKSHEET,
        confidence_required=not study.imported_optional,
    )
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.WORKSHEET_IMPORTED,
        membership=counts.rater,
        file=source_name[:200],
        cases=len(answers),
        created=counts.created,
        updated=counts.updated,
    )
    return ImportCounts(created=counts.created, updated=counts.updated)


@dataclass(frozen=True)
class _Recorded:
    rater: Membership
    created: int
    updated: int


def _answers_record(
    *, study: Study, rater: Membership, answers: dict[int, dict], source: str,
    confidence_required: bool,
) -> _Recorded:  # fmt: skip
    """Record one rater's answers given off screen, on a locked study; see the callers."""
    rater = membership_lock(rater.pk, exclusive=True)
    if rater.status != Membership.Status.ACTIVE:
        raise RatingClosedError(f"{rater.pseudonym} is {rater.get_status_display().lower()}.")
    prefetch_related_objects([study], "rubric__dimensions")  # read once for every answer
    wanted = list(answers)
    have = set(
        rater.assignments.filter(test_case_id__in=wanted).values_list("test_case_id", flat=True)
    )
    missing = [test_case_id for test_case_id in wanted if test_case_id not in have]
    if missing:
        design_room_check(study=study, rater=rater, test_case_ids=missing)
        case_ids = study.test_cases.filter(pk__in=missing).values_list("case_id", flat=True)
        assignments_create(study=study, rater=rater, case_ids=list(case_ids))
    assignments = (
        Assignment.objects.select_for_update(of=("self",), no_key=True)
        .select_related("test_case")
        .filter(rater=rater, test_case_id__in=wanted)
        .order_by("pk")
    )
    # What each key label stands for, for every case at once (a query per case was most of
    # a large worksheet's time).
    responses_of: dict[int, dict] = {case_id: {} for case_id in wanted}
    key = BlindedLabel.objects.filter(test_case_id__in=wanted).order_by("test_case_id", "label")
    for test_case_id, label, response_id in key.values_list("test_case_id", "label", "response_id"):
        responses_of[test_case_id][label] = response_id
    submissions = []
    updated = 0
    for assignment in assignments:
        if assignment.status == Assignment.Status.SKIPPED:
            raise RatingInvalidError(
                f"{assignment.test_case.case_id}: {rater.pseudonym} skipped this case; undo "
                "the skip on the rating screen before importing an answer for it."
            )
        assignment.rater = rater
        assignment.test_case.study = study
        responses = responses_of[assignment.test_case_id]
        try:
            submitted = submission_check(
                study=study,
                labels=sorted(responses),
                payload=answers[assignment.test_case_id],
                confidence_required=confidence_required,
            )
        except RatingInvalidError as error:
            raise RatingInvalidError(f"{assignment.test_case.case_id}: {error}") from error
        if assignment.status == Assignment.Status.SUBMITTED:
            updated += 1
        assignment.flipped = False
        submissions.append(
            Submission(
                assignment=assignment,
                submitted=submitted,
                # Offline raters read the responses in key order.
                shown={label: label for label in submitted["responses"]},
                responses=responses,
            )
        )
    _submissions_store(submissions=submissions, source=source, now=timezone.now())
    return _Recorded(rater=rater, created=len(missing), updated=updated)


@transaction.atomic
def ratings_import_by_system(
    *,
    study: Study,
    answers: dict[Membership, dict[int, dict]],
    actor,
    source_name: str,
    detail: dict,
    progress: Callable[[int, int], None] | None = None,
) -> ImportCounts:
    """Record ratings made outside Concord, already mapped from systems to the key's labels:
    {rater: {test case id: payload}}. All or nothing, through the same cleaning, scoring and
    revision history as every rating; the assignments are marked imported, and one event
    (``RATINGS_IMPORTED``, with ``detail``) is recorded.

    Refused when the study holds a rating made in Concord; once this commits, the study
    takes none (``IMPORTED_HELD_MESSAGE``). The study is locked exclusively, so that no
    rating made in Concord is written beside the import meanwhile.
    """
    study = study_lock(study.pk, exclusive=True)
    if not study.accepts_ratings:
        raise RatingClosedError(
            f"The study is {study.get_status_display().lower()}; ratings can be imported "
            "only while it is in its pilot or open."
        )
    if concord_ratings_held(study_id=study.pk):
        raise RatingClosedError(CONCORD_HELD_MESSAGE)
    tell = progress or (lambda done, total: None)
    created = updated = 0
    for done, (rater, rater_answers) in enumerate(answers.items()):
        tell(done, len(answers))
        recorded = _answers_record(
            study=study,
            rater=rater,
            answers=rater_answers,
            source=Assignment.Source.IMPORTED,
            confidence_required=False,
        )
        created += recorded.created
        updated += recorded.updated
    tell(len(answers), len(answers))
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.RATINGS_IMPORTED,
        file=source_name[:200],
        created=created,
        updated=updated,
        **detail,
    )
    return ImportCounts(created=created, updated=updated)
