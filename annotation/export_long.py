"""The tidy long table (one row per submitted rating and dimension, with the adjudicated
answer beside it) and the gold file (gold items' and attention checks' answers against
the expected ones). A system only once the study is unblinded."""

from collections.abc import Iterator
from typing import Any

from studies.models import Membership, Study, TestCase
from studies.rubric import answer_flag, response_total

from .export_assignments import CHUNK, _assignments, _systems, _timestamp, label_keyed
from .models import Adjudication, Assignment
from .selectors import expected_answer_details
from .worksheets.columns import dimension_columns

LONG_COLUMNS = [
    ("rater", "Rater pseudonym (R-01, R-02, ...)."),
    ("rater_status", "The rater's status in the study: active, paused, withdrawn or excluded."),
    (
        "phase",
        "pilot or main: pilot ratings were last submitted before the study opened (or the "
        "study is still in its pilot).",
    ),
    ("test_case", "Test case id (TC-ID)."),
    ("stratum", "The test case's stratum, if any."),
    (
        "response_label",
        "The response's label in the blinding key (the same for every rater); empty for "
        "dimensions rated once per test case.",
    ),
    (
        "shown_label",
        "The label the rater saw on screen; differs from response_label on flipped screens "
        "in the balanced side design. Ratings imported from worksheets use the key label.",
    ),
    (
        "flipped",
        "yes when the rater's screen showed the responses in reverse key order (balanced "
        "side design).",
    ),
    ("dimension", "Dimension key."),
    ("dimension_name", "Dimension name."),
    ("scope", "response (rated for each response) or case (rated once per test case)."),
    (
        "items",
        "Counted dimensions: what the rater counted, separated by ' | '; an item counted at "
        "half-weight starts with '½ '.",
    ),
    (
        "value",
        "The recorded answer: the count for counted dimensions (half-weight items count "
        "0.5); yes/no per criterion (separated by ';', in the rubric's order) for "
        "checklists; the chosen option's value for scales, the category code for categories "
        "and the signed preference for pairwise dimensions (empty when unanswered). "
        "Pairwise values are given in key order: negative prefers the response with key "
        "label A, positive key label B, 0 is a tie, whatever the rater's screen showed "
        "first. Empty for counted dimensions and checklists imported from worksheets.",
    ),
    (
        "points",
        "Points for this dimension (categories and pairwise preferences give 0); empty when "
        "the dimension was not answered: an unanswered answer is null, never 0 points.",
    ),
    ("flagged", "yes when the rater flagged the dimension as hard to apply."),
    ("flag_note", "The rater's note on the flag."),
    (
        "imported",
        "yes when the rating came from an imported worksheet (counted dimensions and "
        "checklists then record points only).",
    ),
    (
        "response_total",
        "Total points of the response: the sum of the points of its per-response dimensions "
        "that have points; empty when any of them was not answered (a required one left "
        "blank before answers were required, or an optional one): a total is never formed "
        "from some of its parts.",
    ),
    ("confidence", "The rater's confidence for the test case: Low, Medium or High."),
    ("active_seconds", "Seconds the rater actively spent on the test case (all visits)."),
    ("submitted_at", "When the rating was last submitted (ISO 8601, UTC)."),
    (
        "version",
        "The submitted answer's number: 1 for the first submission, 2 after one revision.",
    ),
    (
        "adjudication",
        "The test case's adjudication: waiting, done or unresolvable (cannot be resolved); "
        "empty when the case was never sent to adjudication. The same on every rater's row.",
    ),
    (
        "adjudicated_value",
        "The adjudicator's resolved answer to this dimension (and response), as a worksheet "
        "cell holds it (the rubric table above), in key order like value; empty when the "
        "dimension was not adjudicated or the case is not done. Agreement statistics never "
        "read it; the analysis takes it as the item's label where it exists.",
    ),
    (
        "adjudication_reason",
        "The adjudicator's reason for the decision (or for 'cannot be resolved').",
    ),
]
SYSTEM_COLUMN = (
    "system",
    "The system that wrote the response (only after unblinding); on a case-level row such "
    "as a preference, the pair in key order, 'A-system vs B-system'.",
)


def long_header(*, study: Study) -> list[str]:
    header = [name for name, _ in LONG_COLUMNS]
    if study.is_unblinded:
        header.append(SYSTEM_COLUMN[0])
    return header


def _adjudications(study: Study) -> dict[int, tuple[str, dict, str]]:
    """Test case pk -> (status, resolved answers, reason) of the study's adjudications."""
    rows = Adjudication.objects.filter(test_case__study=study).values_list(
        "test_case_id", "status", "answers", "reason"
    )
    return {case: (status, answers or {}, reason) for case, status, answers, reason in rows}


def _resolved(answers: dict, column, *, label: str) -> Any:
    """The adjudicator's resolved answer to the dimension, for the response ``label`` (""
    for a per-case one), as a worksheet cell holds it; "" when there is none."""
    if label:
        resolved = ((answers.get("responses") or {}).get(label) or {}).get(column.key)
    else:
        resolved = (answers.get("case") or {}).get(column.key)
    # Resolved on a screen that shows the pair in key order: never flipped.
    return "" if resolved is None else column.scoring.cell_out(resolved, flipped=False)


def long_rows(*, study: Study) -> Iterator[list]:
    """One row per submitted rating and dimension (per-case dimensions once per case).

    Each row is built as a list in ``LONG_COLUMNS`` order from the parts its assignment
    and rating share: a large study's table has millions of rows."""
    columns = dimension_columns(study=study)
    per_response = [c for c in columns if c.scope != "case"]
    per_case = [c for c in columns if c.scope == "case"]
    scorings = [c.scoring for c in columns]
    yield long_header(study=study)
    systems = _systems(study)
    adjudications = _adjudications(study)
    for assignment in _assignments(study, submitted_only=True):
        ratings = assignment.ratings
        if not ratings or assignment.purpose != TestCase.Purpose.SAMPLE:
            continue  # gold items and attention checks: see ``gold_rows``
        case_pk = assignment.test_case_id
        status, answers, reason = adjudications.get(case_pk, ("", {}, ""))
        flipped = assignment.flipped
        imported = "yes" if assignment.source == Assignment.Source.WORKSHEET else ""
        after = [assignment.confidence_shown, assignment.active_seconds]
        for rating in ratings:
            label = rating.label
            head = [assignment.rater, assignment.rater_status, study.phase_at(rating.submitted_at),
                    assignment.case_id, assignment.stratum, label, rating.shown_label,
                    "yes" if flipped else "no"]  # fmt: skip
            tail = [_timestamp(rating.submitted_at), assignment.submission, status]
            system = None if systems is None else systems.get((case_pk, label), "")
            total = response_total(scorings, rating.scores)
            for column in per_response:
                yield _long_row(
                    head, column, rating.scores.get(column.key), flipped, imported,
                    "" if total is None else total, after, tail,
                    _resolved(answers, column, label=label), reason, system,
                )  # fmt: skip
        first = ratings[0]
        phase = study.phase_at(first.submitted_at)
        head = [assignment.rater, assignment.rater_status, phase, assignment.case_id,
                assignment.stratum, "", "", "yes" if flipped else "no"]  # fmt: skip
        tail = [_timestamp(first.submitted_at), assignment.submission, status]
        system = None if systems is None else systems.get((case_pk, ""), "")
        for column in per_case:
            yield _long_row(
                head, column, assignment.case_scores.get(column.key), flipped, imported, "",
                after, tail, _resolved(answers, column, label=""), reason, system,
            )  # fmt: skip


def _long_row(
    head, column, entry, flipped, imported, total, after, tail, resolved, reason, system
) -> list:
    """One row of the long table: ``head`` (rater ... flipped), the dimension's answer,
    ``after`` (confidence, active seconds), ``tail`` (submitted_at, version, adjudication),
    the resolved answer and the reason, and the system once unblinded (else None)."""
    entry = entry or {}
    items, value = column.scoring.long_text(entry, flipped=flipped)
    points = column.scoring.recorded_points(entry)
    flagged, note = answer_flag(entry)
    row = [
        *head, column.key, column.name, column.scope, items, value,
        "" if points is None else points, "yes" if flagged else "", note, imported, total,
        *after, *tail, resolved, reason,
    ]  # fmt: skip
    if system is not None:
        row.append(system)
    return row


GOLD_COLUMNS = (
    "rater", "rater_status", "test_case", "purpose", "response_label", "dimension",
    "expected", "given", "met", "confidence", "active_seconds", "submitted_at",
)  # fmt: skip


def gold_rows(*, study: Study) -> Iterator[list]:
    """One row per submitted gold item or attention check and expected answer: what was
    expected, what the rater gave and whether it met it (each dimension's kind says).
    Responses are named by key label, and by system only after unblinding."""
    yield [*GOLD_COLUMNS, *([SYSTEM_COLUMN[0]] if study.is_unblinded else [])]
    systems = _systems(study)
    dimensions = {d.key: d for d in study.rubric.scoring_dimensions()}
    assignments = (
        label_keyed(
            Assignment.objects.filter(
                test_case__study=study,
                rater__role=Membership.Role.RATER,
                status=Assignment.Status.SUBMITTED,
                test_case__expected__isnull=False,
            ),
            study=study,
        )
        .exclude(test_case__purpose=TestCase.Purpose.SAMPLE)
        .select_related("rater", "test_case__expected")
        .prefetch_related("ratings")
        .order_by("rater__pseudonym", "test_case__position")
    )
    for assignment in assignments.iterator(chunk_size=CHUNK):
        names = {rating.label: rating.label for rating in assignment.ratings.all()}
        for detail in expected_answer_details(
            assignment=assignment,
            expected=assignment.test_case.expected.answers or {},
            dimensions=dimensions,
            names=names,
        ):
            label = detail["label"]
            row = [
                assignment.rater.pseudonym,
                assignment.rater.status,
                assignment.test_case.case_id,
                assignment.test_case.purpose,
                label,
                detail["key"],
                detail["expected"],
                detail["given"],
                "yes" if detail["met"] else "no",
                assignment.get_confidence_display(),
                assignment.active_seconds,
                _timestamp(assignment.submitted_at),
            ]
            if systems is not None:
                row.append(systems.get((assignment.test_case_id, label), "") if label else "")
            yield row
