"""Checking a worksheet against the study's rubric, row by row, before anything is written.

A file with any problem imports nothing, and every problem names its file row and column.
"""

import re
from dataclasses import dataclass, field

from annotation.models import Assignment
from annotation.services import MAX_NOTES_LENGTH
from annotation.services.skipping import MAX_SKIP_NOTE_LENGTH
from core.user_input import quoted
from studies.models import BlindedLabel, Membership, Study
from studies.rubric import answers_missing, cell_number, response_total

from .columns import (
    CONFIDENCE,
    MAX_PROBLEMS,
    WORKSHEET_FIXED,
    DimensionColumn,
    cell_read,
    dimension_columns,
)
from .reading import WorksheetError, WorksheetProblem, read_table


@dataclass
class CaseScores:
    """One test case of the worksheet, checked."""

    case_id: str
    test_case_id: int
    scores: dict[str, dict[str, dict]] = field(default_factory=dict)  # label -> key -> score
    case_scores: dict[str, dict] = field(default_factory=dict)
    confidence: str = ""
    notes: str = ""
    # The rater marked the case skipped (the Skipped column): no scores, the reason if
    # they wrote one, and the notes as the skip's note.
    skip: bool = False
    skip_reason: str = ""


# What the Skipped column may hold for a skip without a reason (or one of the reasons).
SKIP_MARKS = ("yes", "y", "x", "true", "1", "skipped", "skip")


def _rater(study: Study, pseudonym: str) -> Membership:
    rater = study.memberships.filter(
        role=Membership.Role.RATER, pseudonym__iexact=pseudonym.strip()
    ).first()
    if rater is None:
        raise WorksheetError(
            [WorksheetProblem(None, None, f"No rater {quoted(pseudonym)} in this study.")]
        )
    problems = []
    if rater.status != Membership.Status.ACTIVE:
        problems.append(
            WorksheetProblem(
                None, None, f"{rater.pseudonym} is {rater.get_status_display().lower()}."
            )
        )
    if not study.accepts_ratings:
        problems.append(
            WorksheetProblem(
                None,
                None,
                f"The study is {study.get_status_display().lower()}; worksheets can be imported "
                "only while it is in its pilot or open.",
            )
        )
    if problems:
        raise WorksheetError(problems)
    return rater


def _normal(text: str) -> str:
    return re.sub(r"[\s_\-]+", "", text.lower())


def _header_map(columns: list[DimensionColumn]) -> dict[str, tuple[str, str]]:
    """Normalised heading -> (field, display name)."""
    names = {
        "rater": ("rater", "Rater"),
        "raterpseudonym": ("rater", "Rater"),
        "tcid": ("case", "TC-ID"),
        "testcase": ("case", "TC-ID"),
        "testcaseid": ("case", "TC-ID"),
        "caseid": ("case", "TC-ID"),
        "response": ("label", "Response"),
        "responselabel": ("label", "Response"),
        "total": ("total", "Total"),
        "confidence": ("confidence", "Confidence"),
        "notes": ("notes", "Notes"),
        "note": ("notes", "Notes"),
        "skipped": ("skipped", "Skipped"),
        "skip": ("skipped", "Skipped"),
    }
    for column in columns:
        for alias in (column.header, column.key, column.name):
            names.setdefault(_normal(alias), (f"dim:{column.key}", column.header))
    return names


def worksheet_parse(
    *, study: Study, rater: Membership, filename: str, data: bytes
) -> tuple[list[CaseScores], list[str]]:
    """The checked test cases of a worksheet, and the ids of cases left blank."""
    rows = [(n, cells) for n, cells in read_table(filename=filename, data=data) if any(cells)]
    if not rows:
        raise WorksheetError([WorksheetProblem(None, None, "The file has no rows.")])
    columns = dimension_columns(study=study)
    header_number, header = rows[0]
    # The study may let ratings collected elsewhere leave confidence and totals blank.
    optional = study.imported_optional
    fields, problems = _read_header(header_number, header, columns, optional=optional)
    if problems:
        raise WorksheetError(problems)
    body = []
    for number, cells in rows[1:]:
        if all(re.fullmatch(r":?-{3,}:?", c) or not c for c in cells):
            continue  # the separator line of a markdown table
        for index, cell in enumerate(cells):
            if cell and index not in fields:
                problems.append(
                    WorksheetProblem(
                        number, f"#{index + 1}", "A value in a column without a heading."
                    )
                )
        body.append((number, {f: cells[i] if i < len(cells) else "" for i, f in fields.items()}))
    cases, skipped, row_problems = _check_rows(study, rater, columns, body)
    problems += row_problems
    if problems:
        problems.sort(key=lambda p: p.row or 0)
        raise WorksheetError(problems[:MAX_PROBLEMS])
    return cases, skipped


def _read_header(
    number: int, header: list[str], columns: list[DimensionColumn], *, optional: bool = False
):
    known = _header_map(columns)
    fields: dict[int, str] = {}
    seen: dict[str, int] = {}
    problems = []
    for index, heading in enumerate(header):
        if not heading:
            continue
        match = known.get(_normal(heading))
        if match is None:
            expected = ", ".join(_expected_headings(columns))
            problems.append(
                WorksheetProblem(
                    number, heading, f"Unknown column. The worksheet's columns are {expected}."
                )
            )
            continue
        name, _ = match
        if name in seen:
            problems.append(WorksheetProblem(number, heading, "This column appears twice."))
            continue
        seen[name] = index
        fields[index] = name
    required = [("case", "TC-ID"), ("label", "Response")]
    required += [(f"dim:{c.key}", c.header) for c in columns]
    if not optional:
        required += [("total", "Total"), ("confidence", "Confidence")]
    for name, display in required:
        if name not in seen:
            problems.append(WorksheetProblem(number, display, "This column is missing."))
    return fields, problems


def _expected_headings(columns: list[DimensionColumn]) -> list[str]:
    return [*WORKSHEET_FIXED[:2], *[c.header for c in columns], *WORKSHEET_FIXED[2:]]


def worksheet_headings(*, study: Study) -> list[str]:
    """The columns of a worksheet to import (without the optional Rater column)."""
    return _expected_headings(dimension_columns(study=study))


def _check_rows(study, rater, columns, body):
    """The checked cases, the ids of cases left blank, and every problem found."""
    problems: list[WorksheetProblem] = []
    cases = {c.case_id: c for c in study.test_cases.only("id", "case_id")}
    labels: dict[int, list[str]] = {}
    for test_case_id, label in BlindedLabel.objects.filter(test_case__study=study).values_list(
        "test_case_id", "label"
    ):
        labels.setdefault(test_case_id, []).append(label)
    grouped = _group_rows(body, rater=rater, cases=cases, labels=labels, problems=problems)
    scored_fields = [f"dim:{c.key}" for c in columns] + ["total", "confidence"]
    checked, skipped = [], []
    for case_id, rows in grouped.items():
        marks = [(number, values["skipped"]) for number, values in rows if values.get("skipped")]
        if marks:
            checked.append(
                _check_skip(case_id, cases[case_id].pk, rows, marks, scored_fields, problems)
            )
            continue
        if not any(values.get(f) for _, values in rows for f in scored_fields):
            if any(values.get("notes") for _, values in rows):
                problems.append(
                    WorksheetProblem(rows[0][0], "Notes", f"{case_id} has notes but no scores.")
                )
            skipped.append(case_id)
            continue
        test_case_id = cases[case_id].pk
        checked.append(
            _check_case(
                case_id,
                test_case_id,
                rows,
                columns,
                labels[test_case_id],
                problems,
                optional=study.imported_optional,
            )  # fmt: skip
        )
    return checked, skipped, problems


def _check_skip(case_id, test_case_id, rows, marks, scored_fields, problems) -> CaseScores:
    """A case the rater marked skipped: no scores, one reason at most, the notes as the
    skip's note."""
    reasons = set()
    for number, mark in marks:
        text = mark.strip().lower()
        if text in Assignment.SkipReason.values:
            reasons.add(text)
        elif text not in SKIP_MARKS:
            problems.append(
                WorksheetProblem(
                    number,
                    "Skipped",
                    f"Write yes to skip {case_id}, or one of the reasons: "
                    f"{', '.join(Assignment.SkipReason.values)}; leave it empty to rate it.",
                )
            )
    if len(reasons) > 1:
        problems.append(
            WorksheetProblem(marks[0][0], "Skipped", f"{case_id} has different reasons.")
        )
    if any(values.get(f) for _, values in rows for f in scored_fields):
        problems.append(
            WorksheetProblem(
                rows[0][0],
                "Skipped",
                f"{case_id} is marked skipped but has scores; clear one or the other.",
            )
        )
    notes = "\n".join(dict.fromkeys(v["notes"] for _, v in rows if v.get("notes")))
    if len(notes) > MAX_SKIP_NOTE_LENGTH:
        problems.append(
            WorksheetProblem(
                rows[0][0],
                "Notes",
                f"The note of a skip is limited to {MAX_SKIP_NOTE_LENGTH} characters.",
            )
        )
    return CaseScores(
        case_id=case_id,
        test_case_id=test_case_id,
        notes=notes,
        skip=True,
        skip_reason=next(iter(reasons)) if len(reasons) == 1 else "",
    )


def _group_rows(body, *, rater, cases, labels, problems) -> dict[str, list[tuple[int, dict]]]:
    """The rows of each known test case, one per response label; the others are problems."""
    grouped: dict[str, list[tuple[int, dict]]] = {}
    first_row: dict[tuple[str, str], int] = {}
    for number, raw_values in body:
        values = dict(raw_values)
        given_rater = values.get("rater", "")
        if given_rater and given_rater.upper() != rater.pseudonym.upper():
            problems.append(
                WorksheetProblem(
                    number,
                    "Rater",
                    f"This row is for {quoted(given_rater)}, not {rater.pseudonym}. Import one "
                    "rater's "
                    "worksheet at a time.",
                )
            )
        problem = _row_place_problem(number, values, cases, labels, first_row)
        if problem:
            problems.append(problem)
            continue
        case_id, label = values["case"], _label(values["label"])
        first_row[case_id, label] = number
        values["label"] = label
        grouped.setdefault(case_id, []).append((number, values))
    return grouped


def _label(text: str) -> str:
    return text.upper().removeprefix("RESPONSE").strip()


def _row_place_problem(number, values, cases, labels, first_row) -> WorksheetProblem | None:
    """What is wrong with the test case and response a row names, if anything."""
    case_id, label = values["case"], _label(values["label"])
    if not case_id:
        return WorksheetProblem(number, "TC-ID", "The test case id is empty.")
    if case_id not in cases:
        return WorksheetProblem(
            number, "TC-ID", f"There is no test case {quoted(case_id)} in this study."
        )
    case_labels = labels.get(cases[case_id].pk, [])
    if label not in case_labels:
        shown = quoted(values["label"]) or "empty"
        return WorksheetProblem(
            number,
            "Response",
            f"The response label is {shown}; {case_id} has responses {', '.join(case_labels)}.",
        )
    if (case_id, label) in first_row:
        return WorksheetProblem(
            number,
            "Response",
            f"A second row for {case_id} response {label} (the first is row "
            f"{first_row[case_id, label]}).",
        )
    return None


def _check_case(
    case_id, test_case_id, rows, columns, case_labels, problems, *, optional=False
) -> CaseScores:
    """One test case's rows read against the rubric: scores, totals, confidence, notes."""
    entry = CaseScores(case_id=case_id, test_case_id=test_case_id)
    present = {values["label"] for _, values in rows}
    for missing in [lb for lb in case_labels if lb not in present]:
        problems.append(
            WorksheetProblem(
                rows[0][0], "Response", f"{case_id} has no row for response {missing}."
            )
        )
    response_columns = [c for c in columns if c.scope != "case"]
    row_of = {}
    for number, values in rows:
        row_of[values["label"]] = number
        entry.scores[values["label"]] = _check_response_row(
            number, values, response_columns, problems, optional=optional
        )
    entry.confidence = _check_confidence(rows, case_id, problems, optional=optional)
    for column in (c for c in columns if c.scope == "case"):
        raw = _per_case(rows, f"dim:{column.key}", column.header, case_id, problems)
        if raw is None:
            continue
        try:
            entry.case_scores[column.key] = cell_read(column, raw)
        except ValueError as error:
            problems.append(WorksheetProblem(rows[0][0], column.header, str(error)))
    _check_required(entry, columns, row_of, rows[0][0], problems)
    notes = []
    for _, values in rows:
        note = values.get("notes", "")
        if note and note not in notes:
            notes.append(note)
    entry.notes = "\n".join(notes)
    if len(entry.notes) > MAX_NOTES_LENGTH:
        problems.append(
            WorksheetProblem(
                rows[0][0], "Notes", f"Notes are limited to {MAX_NOTES_LENGTH} characters."
            )
        )
    return entry


def _check_required(entry: CaseScores, columns, row_of: dict, first_row: int, problems) -> None:
    """Every required dimension answered: a blank cell of one is a problem at its row."""
    headers = {c.key: c.header for c in columns}
    read = {c.key for c in columns if c.scope == "case" and c.key in entry.case_scores}
    responses = {label: entry.scores[label] for label in entry.scores}
    for answer in answers_missing([c.scoring for c in columns], responses, entry.case_scores):
        if not answer.label and answer.key not in read:
            continue  # a per-case cell that could not be read: reported already
        problems.append(
            WorksheetProblem(
                row_of.get(answer.label, first_row),
                headers[answer.key],
                f"{answer.name} is required; the cell is empty.",
            )
        )


def _check_response_row(number, values, columns, problems, *, optional=False) -> dict:
    """One response's cells read against the rubric, and its total checked against them
    (a response with a part unanswered has no total: its Total cell stays empty)."""
    scores, total_ok = {}, True
    for column in columns:
        try:
            scores[column.key] = cell_read(column, values.get(f"dim:{column.key}", ""))
        except ValueError as error:
            problems.append(WorksheetProblem(number, column.header, str(error)))
            total_ok = False
    points = response_total([c.scoring for c in columns], scores) if total_ok else None
    raw_total = values.get("total", "")
    total = cell_number(raw_total)
    if not raw_total:
        if not optional and total_ok and points is not None:
            problems.append(WorksheetProblem(number, "Total", "The total is empty."))
    elif total is None or total < 0:
        problems.append(
            WorksheetProblem(number, "Total", "The total must be a whole number of 0 or more.")
        )
    elif total_ok and points is None:
        problems.append(
            WorksheetProblem(
                number,
                "Total",
                f"The total is {total}, but a part of it is unanswered, so the response has "
                "no total; leave Total empty.",
            )
        )
    elif total_ok and total != points:
        problems.append(
            WorksheetProblem(
                number, "Total", f"The total is {total} but the scores add up to {points}."
            )
        )
    return scores


def _check_confidence(rows, case_id, problems, *, optional=False) -> str:
    """The case's confidence; an unknown value is reported at its own cell first."""
    unknown = [
        (number, values["confidence"])
        for number, values in rows
        if values.get("confidence") and values["confidence"].lower() not in CONFIDENCE
    ]
    for number, value in unknown:
        problems.append(
            WorksheetProblem(
                number,
                "Confidence",
                f"The confidence is {quoted(value)}; give Low, Medium or High.",
            )
        )
    if unknown:
        return ""
    confidence = _per_case(rows, "confidence", "Confidence", case_id, problems)
    if confidence is None:
        return ""
    if not confidence:
        if not optional:  # blank stays blank: never read as a default such as Medium
            problems.append(WorksheetProblem(rows[0][0], "Confidence", "Give Low, Medium or High."))
        return ""
    return CONFIDENCE[confidence.lower()]


def _per_case(rows, name, display, case_id, problems) -> str | None:
    """The one value a per-case column has across a case's rows ("" when none is given).

    None when the rows disagree (the problem is recorded).
    """
    given = [(number, values.get(name, "")) for number, values in rows if values.get(name, "")]
    distinct = {value.lower() for _, value in given}
    if len(distinct) > 1:
        listing = ", ".join(f"{quoted(value)} on row {number}" for number, value in given)
        problems.append(
            WorksheetProblem(
                given[1][0], display, f"{case_id} has different values on its rows ({listing})."
            )
        )
        return None
    return given[0][1] if given else ""
