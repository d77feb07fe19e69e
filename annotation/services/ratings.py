"""Writes for rating: assignments, autosaved drafts and submitted ratings.

Every submitted answer is recorded here, whatever its source (the rating screen, a
worksheet filled in offline, the demo loader): cleaned and scored by the rubric, the
previous answer kept as a revision, and the change announced to the analysis.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q, prefetch_related_objects
from django.utils import timezone

from annotation.models import Assignment, Rating, RatingRevision
from annotation.selectors import screen_labels
from annotation.selectors.imported import concord_ratings_held, imported_ratings_held
from annotation.services.exposure import exposure_credit
from studies.blinding import seeded_permutation
from studies.bulk_rows import rows_insert, rows_update
from studies.errors import ApplicationError
from studies.events import study_event_record
from studies.locks import membership_lock, study_lock
from studies.models import BlindedLabel, Membership, Study, StudyEvent, TestCase
from studies.rubric import RubricValueError, score_form, total_points
from studies.services.webhooks import webhook_event_announce
from studies.signals import analysis_inputs_announce

MAX_NOTES_LENGTH = 5000
MAX_ACTIVE_SECONDS_PER_SAVE = 6 * 60 * 60
# A draft holds one form: a few hundred answers and notes at most.
MAX_DRAFT_BYTES = 256 * 1024


class StaleVersionError(ApplicationError):
    """The save was based on an older version than the one stored."""


class RatingClosedError(ApplicationError):
    """The study does not accept ratings now."""


class RatingInvalidError(ApplicationError):
    """The submitted form does not fit the rubric; the message says what to fix, and
    ``field`` which part of the rating form it concerns ("" for the form as a whole)."""

    def __init__(self, message: str = "", *, field: str = ""):
        super().__init__(message)
        self.field = field


@transaction.atomic
def assignments_create_all(*, study: Study, rater: Membership) -> list[int]:
    """Give a rater every test case of the sample, in an order shuffled from the study seed,
    with gold items and attention checks mixed in at the study's rates.

    In a balanced side design, half of the rater's screens (chosen by the same seeded
    shuffle, keyed ``sides:{pseudonym}``) show the responses in reverse order.
    """
    from .assignment import quality_cases_pick  # the design module builds on this one

    cases = {case.case_id: case for case in study.test_cases.all()}
    sample = [c for c, case in cases.items() if case.purpose == TestCase.Purpose.SAMPLE]
    extra = quality_cases_pick(study=study, rater=rater, sample_count=len(sample))
    return assignments_create(study=study, rater=rater, case_ids=sample + extra, cases=cases)


def assignments_create(
    *,
    study: Study,
    rater: Membership,
    case_ids: list[str],
    cases: dict | None = None,
    assigned: set[str] | None = None,
) -> list[int]:
    """Give a rater the named test cases (those not yet assigned), in a seeded order; returns
    the new assignments' ids.

    Gold items and attention checks among them are mixed in at seeded positions among the
    sample cases (``assignment.quality_mixed_order``): never first, never two in a row.
    ``assigned``, the case ids the rater has already, when the caller read them.
    """
    from .assignment import quality_mixed_order

    cases = cases or {c.case_id: c for c in study.test_cases.filter(case_id__in=case_ids)}
    if assigned is None:
        assigned = set(rater.assignments.values_list("test_case__case_id", flat=True))
    existing = assigned
    new_ids = [case_id for case_id in case_ids if case_id not in existing]
    sample_ids = [c for c in new_ids if cases[c].purpose == TestCase.Purpose.SAMPLE]
    quality_ids = [c for c in new_ids if cases[c].purpose != TestCase.Purpose.SAMPLE]
    order = seeded_permutation(
        seed=study.blinding_seed, key=f"order:{rater.pseudonym}", items=sample_ids
    )
    start = len(existing)  # one assignment per case: the rater's count of assignments
    if quality_ids:
        order = quality_mixed_order(
            sample=order,
            quality=seeded_permutation(
                seed=study.blinding_seed, key=f"quality:{rater.pseudonym}", items=quality_ids
            ),
            seed=study.blinding_seed,
            key=f"{rater.pseudonym}:{start}",
        )
    flipped = set()
    if study.side_mode == "balanced":
        sides = seeded_permutation(
            seed=study.blinding_seed, key=f"sides:{rater.pseudonym}", items=order
        )
        flipped = set(sides[: len(sides) // 2])
    # COPY on PostgreSQL: a 10,000-case study's 30,000 assignments in one pass each rater.
    return rows_insert(
        Assignment,
        [
            {
                "rater_id": rater.pk,
                "test_case_id": cases[case_id].pk,
                "position": start + index,
                "flipped": case_id in flipped,
            }
            for index, case_id in enumerate(order)
        ],
    )


def _clean_case_fields(payload: dict) -> tuple[str, str]:
    confidence = str(payload.get("confidence") or "")
    if confidence and confidence not in Assignment.Confidence.values:
        raise RatingInvalidError("Confidence must be Low, Medium or High.", field="confidence")
    notes = str(payload.get("notes") or "").strip()
    if len(notes) > MAX_NOTES_LENGTH:
        raise RatingInvalidError(
            f"Notes are limited to {MAX_NOTES_LENGTH} characters.", field="notes"
        )
    return confidence, notes


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


def _score_labels(*, study: Study, labels: list[str], payload: dict) -> tuple[dict, dict]:
    dimensions = study.rubric.scoring_dimensions()
    try:
        return score_form(dimensions, payload, labels=labels)
    except RubricValueError as error:
        raise RatingInvalidError(str(error), field=error.field) from error


NO_VERSION_MESSAGE = (
    "The form did not say which version of this case it was opened at, so it was not "
    "saved. Reload the page and submit again."
)
DRAFT_TOO_LARGE = (
    "This draft is too large to save. Shorten the listed items or notes; your answers "
    "are kept in this tab."
)

# A crowd participant's case released after their time-out (``services.participants``).
MOVED_ON_MESSAGE = (
    "This item moved on to another participant after a time without activity, so this "
    "answer was not saved. Thank you: the ratings you submitted before are kept."
)
SKIPPED_MESSAGE = (
    "You skipped this case, so it was not saved. Undo the skip on the case's page to rate it."
)

# One study holds ratings made in Concord or ratings imported by system name, never both
# (``annotation.selectors.imported``): the imported ones would tell the key.
IMPORTED_HELD_MESSAGE = (
    "This study holds ratings imported from elsewhere by system name, so it takes no "
    "ratings made in Concord: beside the imported ones, its statistics by response label "
    "would show which system each label stands for, and the blinding would be lost."
)
CONCORD_HELD_MESSAGE = (
    "This study holds ratings made in Concord, so ratings cannot be imported into it by "
    "system name: what the file says of a system would show, in the statistics by response "
    "label, which system each label stands for, and the raters' blinding would be lost. "
    "Import them into a study of their own."
)

STALE_MESSAGE = (
    "This case was saved from another tab or device after you opened it. "
    "Reload to see the newer version; your unsaved answers are kept in this tab."
)


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


def _answers_known(dimensions, raw) -> dict:
    """The answers of a draft to the given dimensions, each cleaned by its kind."""
    raw = raw if isinstance(raw, dict) else {}
    return {d.key: d.clean(raw[d.key]) for d in dimensions if isinstance(raw.get(d.key), dict)}


def _draft_clean(*, assignment: Assignment, payload: dict) -> dict:
    """The form as the rater left it, keeping only what the rubric defines; raises on bad input.

    Unknown labels, unknown dimension keys and fields a kind does not have are dropped,
    and a draft larger than ``MAX_DRAFT_BYTES`` is refused.
    """
    study = assignment.test_case.study
    labels = list(assignment.test_case.labels.values_list("label", flat=True))
    # Reject what could never be submitted.
    _score_labels(study=study, labels=labels, payload=payload)
    confidence, notes = _clean_case_fields(payload)
    dimensions = study.rubric.scoring_dimensions()
    per_response = [d for d in dimensions if d.scope == "response"]
    per_case = [d for d in dimensions if d.scope == "case"]
    responses = payload.get("responses")
    if not isinstance(responses, dict):
        responses = {}
    draft = {
        "responses": {
            label: _answers_known(per_response, responses[label])
            for label in labels
            if isinstance(responses.get(label), dict)
        },
        "case": _answers_known(per_case, payload.get("case")),
        "confidence": confidence,
        "notes": notes,
    }
    if len(json.dumps(draft)) > MAX_DRAFT_BYTES:
        raise RatingInvalidError(DRAFT_TOO_LARGE)
    return draft


@transaction.atomic
def draft_save(
    *, assignment: Assignment, payload: dict, expected_version: int, active_seconds: int = 0
) -> Assignment:
    """Store the form as the rater left it. Refuses a save based on an older version,
    unless it brings exactly the answers stored: that is no conflict, nothing is lost.

    The page sends its answers as it unloads; when the rater reloads, the new page may be
    rendered before that save lands, and then sends the same answers with the version it
    was rendered at (after a pause and reinstatement, say). Only answers that differ from
    a newer stored version are a conflict between two tabs or devices.
    """
    locked = _locked(assignment)
    draft = _draft_clean(assignment=locked, payload=payload)
    if expected_version != locked.version:
        if draft != locked.draft:
            raise StaleVersionError(STALE_MESSAGE)
        return locked  # stored already; the caller learns the current version
    locked.draft = draft
    if locked.status == Assignment.Status.TODO:
        locked.status = Assignment.Status.DRAFT
    _saved(locked, claimed_seconds=active_seconds, now=timezone.now())
    locked.save(
        update_fields=[
            "draft",
            "status",
            "version",
            "active_seconds",
            "last_saved_at",
            "updated_at",
        ]
    )
    return locked


def _submitted_now(assignment: Assignment, ratings: list[Rating]) -> dict:
    return {
        "responses": {rating.label: rating.scores for rating in ratings},
        "case": assignment.case_scores,
        "confidence": assignment.confidence,
        "notes": assignment.notes,
    }


def _revisions_keep(*, replacing: list["Submission"], now) -> None:
    """Keep what was submitted before as history, for each answer that changes it: one
    read of the earlier ratings and one insert, however many answers are replaced."""
    if not replacing:
        return
    earlier: dict[int, list[Rating]] = {s.assignment.pk: [] for s in replacing}
    for rating in Rating.objects.filter(assignment_id__in=list(earlier)).order_by("pk"):
        earlier[rating.assignment_id].append(rating)
    revisions = []
    for submission in replacing:
        assignment, ratings = submission.assignment, earlier[submission.assignment.pk]
        previous = _submitted_now(assignment, ratings)
        if previous == submission.submitted or not ratings:
            continue
        revisions.append(
            RatingRevision(
                assignment=assignment,
                submitted={**previous, "totals": {r.label: r.total for r in ratings}},
                submitted_at=assignment.submitted_at or now,
                replaced_at=now,
            )
        )
    RatingRevision.objects.bulk_create(revisions, batch_size=STORE_BATCH)


def submission_check(
    *, study: Study, labels: list[str], payload: dict, confidence_required: bool = True
) -> dict:
    """What a submit of ``payload`` for a case with these labels would record, cleaned and
    scored; raises ``RatingInvalidError`` as a submit would. Writes nothing: the rubric
    preview asks it too, so it refuses exactly what the rating screen refuses.

    Ratings imported from elsewhere may leave the confidence blank when the study allows it
    (``Study.imported_optional``); it is then stored blank, never as a default.
    """
    confidence, notes = _clean_case_fields(payload)
    if not confidence and confidence_required:
        raise RatingInvalidError(
            "Choose your confidence (Low, Medium or High) before submitting.", field="confidence"
        )
    scored, case_scored = _score_labels(study=study, labels=labels, payload=payload)
    if study.explanation_first and not notes:
        _refuse_verdict_without_explanation(study=study, case_scored=case_scored)
    return {"responses": scored, "case": case_scored, "confidence": confidence, "notes": notes}


EXPLANATION_FIRST_MESSAGE = (
    "This study asks for your reasoning first: write it in the box above the preference, "
    "then choose."
)


def _refuse_verdict_without_explanation(*, study: Study, case_scored: dict) -> None:
    """A preference between the two responses needs the rater's written reasoning."""
    for dimension in study.rubric.scoring_dimensions():
        if dimension.compares_two and dimension.answered(case_scored.get(dimension.key)):
            raise RatingInvalidError(EXPLANATION_FIRST_MESSAGE, field="notes")


@dataclass(frozen=True)
class Submission:
    """A cleaned answer (``submission_check``) for a locked assignment, with what each key
    label stands for: the label on screen (``shown``) and the response (``responses``)."""

    assignment: Assignment
    submitted: dict
    shown: dict
    responses: dict
    active_seconds: int = 0


# Rows per statement when a worksheet writes thousands of cases at once.
STORE_BATCH = 1000
# What a submission changes on its assignment (``rows_update`` writes only these; the
# update time is set here, as a bulk update does not stamp ``auto_now``).
_STORED_FIELDS = [
    "draft", "case_scores", "confidence", "notes", "source", "status", "submitted_at",
    "active_seconds", "version", "last_saved_at", "flipped", "updated_at",
]  # fmt: skip


def _submissions_store(*, submissions: list[Submission], source: str, now) -> None:
    """Record cleaned answers on locked assignments: the one write of submitted ratings,
    for one case from the screen or a whole worksheet at once, in a few statements
    however many cases (a statement per case made a 10,000-case worksheet take minutes).
    """
    if not submissions:
        return
    _revisions_keep(
        replacing=[s for s in submissions if s.assignment.status == Assignment.Status.SUBMITTED],
        now=now,
    )
    # A new rating per label, or the earlier one replaced in place (same row, same id), as
    # a revision does.
    Rating.objects.bulk_create(
        [
            Rating(
                assignment=submission.assignment,
                label=label,
                response_id=submission.responses[label],
                shown_label=submission.shown[label],
                scores=scores,
                total=total_points(scores),
                submitted_at=now,
            )
            for submission in submissions
            for label, scores in submission.submitted["responses"].items()
        ],
        update_conflicts=True,
        unique_fields=["assignment", "label"],
        update_fields=["response", "shown_label", "scores", "total", "submitted_at"],
        batch_size=STORE_BATCH,
    )
    for submission in submissions:
        assignment, submitted = submission.assignment, submission.submitted
        assignment.draft = submitted
        assignment.case_scores = submitted["case"]
        assignment.confidence = submitted["confidence"]
        assignment.notes = submitted["notes"]
        assignment.source = source
        assignment.status = Assignment.Status.SUBMITTED
        assignment.submitted_at = now
        _saved(assignment, claimed_seconds=submission.active_seconds, now=now)
        assignment.updated_at = now
    rows_update(Assignment, [s.assignment for s in submissions], _STORED_FIELDS)
    touched: dict[int, list[int]] = {}
    for s in submissions:
        touched.setdefault(s.assignment.test_case.study_id, []).append(s.assignment.test_case_id)
    for study_id, case_ids in sorted(touched.items()):
        analysis_inputs_announce(study_id=study_id, reason="rating", case_ids=case_ids)
        webhook_event_announce(study_id=study_id, event="rating.milestone")


@transaction.atomic
def rating_submit(
    *,
    assignment: Assignment,
    payload: dict,
    expected_version: int | None = None,
    any_version: bool = False,
    active_seconds: int = 0,
) -> Assignment:
    """Record the rater's scores for every response of the case; repeat submits update.

    ``expected_version`` is the version the form was opened at; a submit from the screen
    must carry it, so that a stale tab cannot overwrite a newer answer. Only a caller
    that writes on the rater's behalf (the demo loader) may pass ``any_version=True``.
    """
    if expected_version is None and not any_version:
        raise RatingInvalidError(NO_VERSION_MESSAGE)
    locked = _locked(assignment)
    # Asked under the study's lock, which an import by system holds exclusively.
    if imported_ratings_held(study_id=locked.test_case.study_id):
        raise RatingClosedError(IMPORTED_HELD_MESSAGE)
    labels = screen_labels(assignment=locked)
    submitted = submission_check(
        study=locked.test_case.study,
        labels=sorted(label for _, label, _ in labels),
        payload=payload,
    )
    if expected_version is not None and expected_version != locked.version:
        # A double click or a retried request carries the same answers: it is the same
        # submission, already recorded. Anything else is a stale tab and is refused.
        if locked.status == Assignment.Status.SUBMITTED and locked.draft == submitted:
            return locked
        raise StaleVersionError(STALE_MESSAGE)
    submission = Submission(
        assignment=locked,
        submitted=submitted,
        shown={label: shown for shown, label, _ in labels},
        responses={label: response_id for _, label, response_id in labels},
        active_seconds=active_seconds,
    )
    _submissions_store(
        submissions=[submission], source=Assignment.Source.SCREEN, now=timezone.now()
    )
    return locked


def ratings_withdraw(*, rater: Membership) -> int:
    """Delete a withdrawing rater's submitted ratings, their revision history and their
    drafts, as the study's withdrawal policy says; returns the number of ratings deleted.

    Only ``participation.withdrawal_record`` calls it, in its transaction, once it has
    locked the membership exclusively and applied the policy: no rating of this rater can
    be written meanwhile, and a deletion is never done without a recorded withdrawal.
    """
    assignments = Assignment.objects.filter(rater=rater)
    case_ids = list(
        Rating.objects.filter(assignment__in=assignments)
        .values_list("assignment__test_case_id", flat=True)
        .distinct()
    )
    deleted, _ = Rating.objects.filter(assignment__in=assignments).delete()
    RatingRevision.objects.filter(assignment__in=assignments).delete()
    skipped = Q(status=Assignment.Status.SKIPPED)
    assignments.exclude(skipped).update(
        draft={}, case_scores={}, confidence="", notes="", status=Assignment.Status.TODO,
        submitted_at=None,
    )  # fmt: skip
    # A skip stays a skip (the case went to someone else); the rater's words go.
    assignments.filter(skipped).update(draft={}, skip_note="")
    if deleted:
        analysis_inputs_announce(study_id=rater.study_id, reason="withdrawal", case_ids=case_ids)
    return deleted


@dataclass(frozen=True)
class ImportCounts:
    created: int  # assignments created for cases the rater had not been given
    updated: int  # cases whose earlier submission was replaced


def design_room_check(*, study: Study, rater: Membership, test_case_ids: list) -> None:
    """Refuse to give the rater these cases if one would get more raters than the design
    allows (``Study.raters_per_item``); the message names the cases. In a transaction."""
    # annotation.services.assignment (the designs) builds on this module, so it is imported here.
    from .assignment import cases_beyond_design

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
