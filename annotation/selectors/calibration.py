"""Reads for the calibration call (protocol 4.2): the qualification items and pilot cases
the raters disagree on most, and who attended which call.

Raters appear under their pseudonyms only, and responses under their key labels (Response
A, B, ...): nothing here reads the system of a response, so the page keeps the blinding
whatever the study's status.
"""

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, Prefetch

from annotation.disagreement import ItemDisagreement, RaterAnswer, item_disagreement
from annotation.models import (
    Assignment,
    CalibrationAttendance,
    CalibrationCall,
    QualificationAttempt,
    TrainingAnswer,
    TrainingItem,
    Withdrawal,
)
from studies.blinding import LABELS
from studies.models import BlindedLabel, Membership, Study

# The most items of each kind the page shows: a call discusses a handful, and the page
# prints one item per sheet.
MAX_SHOWN = 15


@dataclass(frozen=True)
class CalibrationItem:
    """One item to discuss: what the raters saw and how they answered."""

    title: str
    prompt: str
    # (label, text) in key order, never a system; ("", text) in the texts' own order when
    # the labels must stay off (a pilot case before unblinding, see ``_pilot_cases``).
    responses: list[tuple[str, str]]
    disagreement: ItemDisagreement
    has_key: bool
    labelled: bool = True


@dataclass(frozen=True)
class CalibrationSheet:
    qualification: list[CalibrationItem]  # ranked, at most MAX_SHOWN, each with disagreement
    qualification_compared: int  # items answered by at least two raters
    pilot: list[CalibrationItem]
    pilot_compared: int


def _ranked(items: list[CalibrationItem]) -> list[CalibrationItem]:
    disputed = [item for item in items if item.disagreement.disputed]
    disputed.sort(key=lambda item: item.disagreement.rank_key)  # stable: ties keep position
    return disputed[:MAX_SHOWN]


def _raters(study: Study):
    """The study's raters who have not withdrawn: a withdrawn rater's answers are not
    discussed."""
    return study.memberships.filter(role=Membership.Role.RATER).exclude(
        Exists(Withdrawal.objects.filter(rater=OuterRef("pk")))
    )


def _qualification_items(study: Study, dimensions) -> tuple[list[CalibrationItem], int]:
    items = list(
        study.training_items.filter(kind=TrainingItem.Kind.QUALIFICATION).order_by(
            "position", "created_at"
        )
    )
    # Each rater's latest answer to each item (a second attempt replaces the first).
    answers = (
        TrainingAnswer.objects.filter(
            item__in=items, attempt__isnull=False, rater__in=_raters(study)
        )
        .select_related("rater")
        .order_by("submitted_at", "pk")
    )
    latest: dict[int, dict[str, dict]] = defaultdict(dict)
    for answer in answers:
        latest[answer.item_id][answer.rater.pseudonym] = answer.answer
    shown, compared = [], 0
    for item in items:
        given = latest.get(item.pk, {})
        compared += len(given) >= 2
        labels = list(LABELS[: len(item.responses)])
        shown.append(
            CalibrationItem(
                title=item.title,
                prompt=item.prompt,
                responses=list(zip(labels, item.responses, strict=False)),
                disagreement=item_disagreement(
                    answers=[RaterAnswer(rater, answer) for rater, answer in given.items()],
                    dimensions=dimensions,
                    labels=labels,
                    key=item.key or None,
                ),
                has_key=bool(item.key),
            )
        )
    return _ranked(shown), compared


def _pilot_assignments(study: Study):
    """Submitted assignments whose ratings are pilot data (``Study.phase_at``)."""
    submitted = Assignment.objects.filter(
        test_case__study=study, status=Assignment.Status.SUBMITTED, rater__in=_raters(study)
    )
    if study.opened_at is not None:
        return submitted.filter(submitted_at__lt=study.opened_at)
    return submitted if study.current_phase == "pilot" else submitted.none()


def _pilot_cases(study: Study, dimensions) -> tuple[list[CalibrationItem], int]:
    assignments = (
        _pilot_assignments(study)
        .select_related("rater", "test_case")
        .prefetch_related("ratings")
        .order_by("test_case__position", "rater__pseudonym")
    )
    by_case: dict[int, list[RaterAnswer]] = defaultdict(list)
    cases = {}
    for assignment in assignments:
        if study.phase_at(assignment.submitted_at) != "pilot":
            continue
        cases[assignment.test_case_id] = assignment.test_case
        answer = {
            "responses": {rating.label: rating.scores for rating in assignment.ratings.all()},
            "case": assignment.case_scores,
        }
        by_case[assignment.test_case_id].append(
            RaterAnswer(assignment.rater.pseudonym, answer, flipped=assignment.flipped)
        )
    compared = sum(1 for answers in by_case.values() if len(answers) >= 2)
    labels_of: dict[int, list[str]] = defaultdict(list)
    for case_id, label in BlindedLabel.objects.filter(test_case_id__in=cases).values_list(
        "test_case_id", "label"
    ):
        labels_of[case_id].append(label)
    ranked = _ranked(
        [
            CalibrationItem(
                title=case.case_id,
                prompt=case.prompt,
                responses=[],
                disagreement=item_disagreement(
                    answers=by_case[case_pk],
                    dimensions=dimensions,
                    labels=sorted(labels_of[case_pk]),
                ),
                has_key=False,
            )
            for case_pk, case in sorted(cases.items(), key=lambda pair: pair[1].position)
        ]
    )
    # The texts of the cases shown only. Before unblinding they are not shown under their
    # labels: the coordinator pages show each response under its system (the gold items'
    # page), and a text under its label beside it would tell the key. Unlabelled, in the
    # texts' own order, they say nothing of it; the raters' answers keep their labels.
    labelled = study.is_unblinded
    texts: dict[str, list[tuple[str, str]]] = defaultdict(list)
    shown = {item.title for item in ranked}
    rows = (
        BlindedLabel.objects.filter(test_case__study=study, test_case__case_id__in=shown)
        .order_by("label")
        .values_list("test_case__case_id", "label", "response__text")
    )
    for case_id, label, text in rows:
        texts[case_id].append((label, text) if labelled else ("", text))
    return [
        CalibrationItem(
            title=item.title,
            prompt=item.prompt,
            responses=texts[item.title] if labelled else sorted(texts[item.title]),
            disagreement=item.disagreement,
            has_key=False,
            labelled=labelled,
        )
        for item in ranked
    ], compared


def calibration_sheet(*, study: Study) -> CalibrationSheet:
    """The qualification items and pilot cases with the most disagreement, ranked."""
    dimensions = study.rubric.scoring_dimensions()
    qualification, qualification_compared = _qualification_items(study, dimensions)
    pilot, pilot_compared = _pilot_cases(study, dimensions)
    return CalibrationSheet(
        qualification=qualification,
        qualification_compared=qualification_compared,
        pilot=pilot,
        pilot_compared=pilot_compared,
    )


@dataclass(frozen=True)
class CallAttendanceRow:
    pseudonym: str
    status: str
    qualification_passed: bool
    attended: list  # the calls' dates, latest first


def calibration_calls(*, study: Study) -> list[CalibrationCall]:
    """The study's calls, latest first, each with its attendance (pseudonyms)."""
    return list(
        study.calibration_calls.prefetch_related(
            Prefetch(
                "attendance",
                queryset=CalibrationAttendance.objects.select_related("rater").order_by(
                    "rater__pseudonym"
                ),
            )
        )
    )


def calibration_attendance(
    *, study: Study, calls: list[CalibrationCall]
) -> list[CallAttendanceRow]:
    """Per rater (by pseudonym), whether they passed qualification and which calls they
    attended; withdrawn raters are left out."""
    attended: dict[int, list] = defaultdict(list)
    for call in calls:
        for row in call.attendance.all():
            attended[row.rater_id].append(call.held_at)
    raters = _raters(study).order_by("pseudonym")
    passed = set(
        QualificationAttempt.objects.filter(rater__study=study, passed=True).values_list(
            "rater_id", flat=True
        )
    )
    return [
        CallAttendanceRow(
            pseudonym=rater.pseudonym,
            status=rater.get_status_display(),
            qualification_passed=rater.pk in passed,
            attended=attended.get(rater.pk, []),
        )
        for rater in raters
    ]


def calibration_attendees_choices(*, study: Study):
    """The raters a call's attendance may name: the study's raters who have not withdrawn."""
    return _raters(study).exclude(status=Membership.Status.WITHDRAWN).order_by("pseudonym")
