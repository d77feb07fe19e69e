"""Import of filled-in worksheets (.csv, .xlsx) from raters who worked offline.

The file is the worksheet raters know (``TC-ID | Response | <one column per dimension> |
Total | Confidence | Notes``, a Rater column optional). It holds points, or for scales,
categories and pairwise preferences the choice. Everything is checked against the study's
rubric before anything is written; a file with any problem imports nothing, and every
problem names its file row and column.

Imported ratings are stored as points with a mark, ``{key: {"points": n, "imported":
true}}`` (choices keep ``"choice"`` too), for the named rater, creating their assignments
where needed. Offline raters read the responses in key order, so each rating's shown label
is its key label and the assignment is recorded as not flipped.

This module also defines the worksheet's columns and cells, which the exports share.
"""

import csv
import io
import re
import zipfile
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from agreement.services import agreement_request_recompute
from annotation.models import Assignment, Rating, RatingRevision
from annotation.services import MAX_NOTES_LENGTH, assignments_create

from .models import BlindedLabel, Membership, Study, StudyEvent

MAX_BYTES = 5 * 1024 * 1024
MAX_ROWS = 20_000
MAX_PROBLEMS = 200
CONFIDENCE = {"low": "low", "medium": "medium", "high": "high"}
# The worksheet's own columns, around the rubric's: TC-ID, Response, <dimensions>, ...
WORKSHEET_FIXED = ("TC-ID", "Response", "Total", "Confidence", "Notes")
# A cell starting with one of these is read as a formula by spreadsheet programs.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
# Kinds whose cell holds the rater's choice rather than points derived from what they noted.
CHOICE_KINDS = ("scale", "categorical", "pairwise")


# A plain number such as "-2" or "-0.5" is a value, not a formula: it is left as it is.
PLAIN_NUMBER = re.compile(r"-?\d+(\.\d+)?")


def neutralise(value: Any) -> Any:
    """Prefix text that a spreadsheet would run as a formula with a single quote."""
    if (
        isinstance(value, str)
        and value.startswith(FORMULA_PREFIXES)
        and not PLAIN_NUMBER.fullmatch(value)
    ):
        return "'" + value
    return value


def unneutralise(text: str) -> str:
    """Undo ``neutralise`` on text read back from a worksheet."""
    if text.startswith("'") and text[1:].startswith(FORMULA_PREFIXES):
        return text[1:]
    return text


# The worksheet's columns -----------------------------------------------------------------


@dataclass(frozen=True)
class DimensionColumn:
    """A rubric dimension as a worksheet column.

    Counted dimensions and checklists hold points; scales hold the chosen option's value
    (which is also its points); categories hold the category code; pairwise preferences
    hold the signed preference in key order (negative prefers key label A).
    """

    key: str
    name: str
    header: str
    kind: str
    scope: str
    max_points: int
    choices: tuple  # the values a cell may hold
    aliases: dict = field(default_factory=dict, compare=False)  # lower-case label -> value

    @property
    def holds_choice(self) -> bool:
        return self.kind in CHOICE_KINDS

    def describe_choices(self) -> str:
        values = [str(v) for v in self.choices]
        if all(isinstance(v, int) for v in self.choices) and len(values) > 2:
            ints = sorted(self.choices)
            if ints == list(range(ints[0], ints[-1] + 1)):
                return f"{ints[0]} to {ints[-1]}"
        return ", ".join(values)


def dimension_header(dimension) -> str:
    """The worksheet column of a dimension: "Depth" for the key "depth"."""
    custom = str(dimension.config.get("column") or "").strip()
    return custom or dimension.key.replace("-", " ").replace("_", " ").title()


def dimension_columns(*, study: Study) -> list[DimensionColumn]:
    columns = []
    for dimension in study.rubric.dimensions.all():
        scoring = dimension.scoring()
        aliases: dict = {}
        if dimension.kind == "scale":
            choices = tuple(option.value for option in scoring.options)
            aliases = {option.label.lower(): option.value for option in scoring.options}
        elif dimension.kind == "categorical":
            choices = tuple(category.value for category in scoring.categories)
            aliases = {category.label.lower(): category.value for category in scoring.categories}
            aliases.update(
                {category.value.lower(): category.value for category in scoring.categories}
            )
        elif dimension.kind == "pairwise":
            choices = tuple(value for value, _ in scoring.options())
            aliases = {label.lower(): value for value, label in scoring.options()}
        elif getattr(scoring, "bands", None):
            choices = tuple(sorted({band.points for band in scoring.bands}))
        else:
            choices = tuple(range(scoring.max_points + 1))
        columns.append(
            DimensionColumn(
                key=dimension.key,
                name=dimension.name,
                header=dimension_header(dimension),
                kind=dimension.kind,
                scope=getattr(scoring, "scope", "response"),
                max_points=scoring.max_points,
                choices=choices,
                aliases=aliases,
            )
        )
    return columns


def choice_in_key_order(column: DimensionColumn, choice, *, flipped: bool):
    """A pairwise choice is recorded relative to the rater's screen; give it in key order."""
    if column.kind == "pairwise" and flipped and isinstance(choice, int):
        return -choice
    return choice


def cell_value(column: DimensionColumn, entry: dict | None, *, flipped: bool):
    """What a worksheet cell shows for a stored score ("" when there is none)."""
    if not entry:
        return ""
    if column.holds_choice:
        choice = choice_in_key_order(column, entry.get("choice"), flipped=flipped)
        return "" if choice is None else choice
    return entry.get("points", "")


def cell_read(column: DimensionColumn, raw: str) -> dict:
    """The stored score for a worksheet cell, marked imported; ValueError says what is wrong."""
    if not raw:
        if column.holds_choice:  # an unanswered choice, as on the rating screen
            return {"choice": None, "points": 0, "imported": True}
        raise ValueError("The score is empty.")
    value = column.aliases.get(raw.lower())
    if value is None:
        try:
            number = Decimal(raw)
        except InvalidOperation:
            number = None
        if number is not None and number == number.to_integral_value():
            value = int(number)
        elif column.kind != "categorical":
            raise ValueError(
                f"{raw} is not a whole number; {column.header} takes {column.describe_choices()}."
            )
        else:
            value = raw
    if value not in column.choices:
        raise ValueError(
            f"{raw} is not allowed; {column.header} takes {column.describe_choices()}."
        )
    if column.kind == "scale":
        return {"choice": value, "points": value, "imported": True}
    if column.holds_choice:
        return {"choice": value, "points": 0, "imported": True}
    return {"points": value, "imported": True}


@dataclass(frozen=True)
class WorksheetProblem:
    row: int | None
    column: str | None
    message: str

    def __str__(self) -> str:
        where = []
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.column:
            where.append(f"column {self.column}")
        if not where:
            return self.message
        place = ", ".join(where)
        return f"{place[0].upper()}{place[1:]}: {self.message}"


class WorksheetError(Exception):
    """The worksheet cannot be imported; ``problems`` lists every reason found."""

    def __init__(self, problems: list[WorksheetProblem]):
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


@dataclass
class CaseScores:
    """One test case of the worksheet, checked."""

    case_id: str
    test_case_id: int
    scores: dict[str, dict[str, dict]] = field(default_factory=dict)  # label -> key -> score
    case_scores: dict[str, dict] = field(default_factory=dict)
    confidence: str = ""
    notes: str = ""


@dataclass(frozen=True)
class ImportResult:
    rater: str
    cases: int
    created: int
    updated: int
    skipped: list[str]
    dry_run: bool


def worksheet_import(
    *,
    study: Study,
    pseudonym: str,
    filename: str,
    data: bytes,
    actor=None,
    dry_run: bool = False,
) -> ImportResult:
    """Check a worksheet and, unless ``dry_run``, record it for the rater; all or nothing."""
    rater = _rater(study, pseudonym)
    cases, skipped = worksheet_parse(study=study, rater=rater, filename=filename, data=data)
    assigned = set(
        rater.assignments.filter(test_case_id__in=[c.test_case_id for c in cases]).values_list(
            "test_case_id", flat=True
        )
    )
    created = sum(1 for c in cases if c.test_case_id not in assigned)
    submitted = set(
        rater.assignments.filter(status=Assignment.Status.SUBMITTED).values_list(
            "test_case_id", flat=True
        )
    )
    updated = sum(1 for c in cases if c.test_case_id in submitted)
    result = ImportResult(
        rater=rater.pseudonym,
        cases=len(cases),
        created=created,
        updated=updated,
        skipped=skipped,
        dry_run=dry_run,
    )
    if not dry_run:
        _record(study=study, rater=rater, cases=cases, filename=filename, actor=actor)
    return result


def _rater(study: Study, pseudonym: str) -> Membership:
    rater = study.memberships.filter(
        role=Membership.Role.RATER, pseudonym__iexact=pseudonym.strip()
    ).first()
    if rater is None:
        raise WorksheetError([WorksheetProblem(None, None, f"No rater {pseudonym} in this study.")])
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


# Reading the file ------------------------------------------------------------------------


def read_table(*, filename: str, data: bytes) -> list[tuple[int, list[str]]]:
    """(file row number, cells as text) for every row of a .csv or .xlsx file."""
    if len(data) > MAX_BYTES:
        raise WorksheetError(
            [WorksheetProblem(None, None, f"The file is larger than {MAX_BYTES // 2**20} MB.")]
        )
    name = filename.lower()
    if name.endswith(".csv") or name.endswith(".txt") or name.endswith(".md"):
        rows = _read_csv(data)
    elif name.endswith(".xlsx"):
        rows = _read_xlsx(data)
    else:
        raise WorksheetError(
            [WorksheetProblem(None, None, "Upload the worksheet as .csv or .xlsx.")]
        )
    if len(rows) > MAX_ROWS:
        raise WorksheetError(
            [WorksheetProblem(None, None, f"The file has more than {MAX_ROWS} rows.")]
        )
    return rows


def _read_csv(data: bytes) -> list[tuple[int, list[str]]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise WorksheetError(
            [
                WorksheetProblem(
                    line,
                    None,
                    'The file is not UTF-8 text. Save it as "CSV UTF-8" and upload it again.',
                )
            ]
        ) from None
    first = next((line for line in text.splitlines() if line.strip()), "")
    # Excel in some locales writes semicolons; the instructions show a table with pipes.
    delimiter = max([",", ";", "\t", "|"], key=first.count)
    if not first.count(delimiter):
        delimiter = ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    rows = []
    try:
        for cells in reader:
            if delimiter == "|" and cells and not cells[0].strip():
                cells = cells[1:]  # a markdown table's leading pipe
            if delimiter == "|" and cells and not cells[-1].strip():
                cells = cells[:-1]
            rows.append((reader.line_num, [c.strip() for c in cells]))
            if len(rows) > MAX_ROWS:
                break
    except csv.Error as error:
        raise WorksheetError(
            [WorksheetProblem(reader.line_num, None, f"The CSV could not be read: {error}.")]
        ) from None
    return rows


def _read_xlsx(data: bytes) -> list[tuple[int, list[str]]]:
    from openpyxl import load_workbook

    try:
        workbook = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError):
        raise WorksheetError(
            [WorksheetProblem(None, None, "The file could not be read as an Excel workbook.")]
        ) from None
    try:
        names = workbook.sheetnames
        sheet = workbook["Worksheet"] if "Worksheet" in names else workbook[names[0]]
        rows = []
        for number, values in enumerate(sheet.iter_rows(values_only=True), start=1):
            rows.append((number, [_xlsx_text(v) for v in values]))
            if len(rows) > MAX_ROWS:
                break
    finally:
        workbook.close()
    return rows


def _xlsx_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


# Checking against the rubric -------------------------------------------------------------


def _normal(text: str) -> str:
    return re.sub(r"[\s_\-]+", "", unneutralise(text).lower())


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
    fields, problems = _read_header(header_number, header, columns)
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


def _read_header(number: int, header: list[str], columns: list[DimensionColumn]):
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
    problems: list[WorksheetProblem] = []
    cases = {c.case_id: c for c in study.test_cases.only("id", "case_id")}
    labels: dict[int, list[str]] = {}
    for test_case_id, label in BlindedLabel.objects.filter(test_case__study=study).values_list(
        "test_case_id", "label"
    ):
        labels.setdefault(test_case_id, []).append(label)
    response_columns = [c for c in columns if c.scope != "case"]
    case_columns = [c for c in columns if c.scope == "case"]
    grouped: dict[str, list[tuple[int, dict]]] = {}
    first_row: dict[tuple[str, str], int] = {}

    for number, values in body:
        values = {k: unneutralise(v) for k, v in values.items()}
        given_rater = values.get("rater", "")
        if given_rater and given_rater.upper() != rater.pseudonym.upper():
            problems.append(
                WorksheetProblem(
                    number,
                    "Rater",
                    f"This row is for {given_rater}, not {rater.pseudonym}. Import one rater's "
                    "worksheet at a time.",
                )
            )
        case_id = values["case"]
        label = values["label"].upper().removeprefix("RESPONSE").strip()
        if not case_id:
            problems.append(WorksheetProblem(number, "TC-ID", "The test case id is empty."))
            continue
        if case_id not in cases:
            problems.append(
                WorksheetProblem(number, "TC-ID", f"There is no test case {case_id} in this study.")
            )
            continue
        case_labels = labels.get(cases[case_id].pk, [])
        if label not in case_labels:
            shown = values["label"] or "empty"
            problems.append(
                WorksheetProblem(
                    number,
                    "Response",
                    f"The response label is {shown}; {case_id} has responses "
                    f"{', '.join(case_labels)}.",
                )
            )
            continue
        if (case_id, label) in first_row:
            problems.append(
                WorksheetProblem(
                    number,
                    "Response",
                    f"A second row for {case_id} response {label} (the first is row "
                    f"{first_row[case_id, label]}).",
                )
            )
            continue
        first_row[case_id, label] = number
        values["label"] = label
        grouped.setdefault(case_id, []).append((number, values))

    checked, skipped = [], []
    for case_id, rows in grouped.items():
        scored_fields = [f"dim:{c.key}" for c in columns] + ["total", "confidence"]
        if not any(values.get(f) for _, values in rows for f in scored_fields):
            if any(values.get("notes") for _, values in rows):
                problems.append(
                    WorksheetProblem(rows[0][0], "Notes", f"{case_id} has notes but no scores.")
                )
            skipped.append(case_id)
            continue
        test_case_id = cases[case_id].pk
        entry = CaseScores(case_id=case_id, test_case_id=test_case_id)
        present = {values["label"] for _, values in rows}
        for missing in [lb for lb in labels[test_case_id] if lb not in present]:
            problems.append(
                WorksheetProblem(
                    rows[0][0], "Response", f"{case_id} has no row for response {missing}."
                )
            )
        for number, values in rows:
            scores, total_ok = {}, True
            for column in response_columns:
                try:
                    scores[column.key] = cell_read(column, values.get(f"dim:{column.key}", ""))
                except ValueError as error:
                    problems.append(WorksheetProblem(number, column.header, str(error)))
                    total_ok = False
            points = sum(score["points"] for score in scores.values())
            raw_total = values.get("total", "")
            if not raw_total:
                problems.append(WorksheetProblem(number, "Total", "The total is empty."))
            elif not re.fullmatch(r"\d+(\.0+)?", raw_total):
                problems.append(
                    WorksheetProblem(number, "Total", "The total must be a whole number.")
                )
            elif total_ok and int(Decimal(raw_total)) != points:
                problems.append(
                    WorksheetProblem(
                        number,
                        "Total",
                        f"The total is {int(Decimal(raw_total))} but the scores add up to "
                        f"{points}.",
                    )
                )
            entry.scores[values["label"]] = scores
        confidence = _per_case(rows, "confidence", "Confidence", case_id, problems)
        if confidence is not None:
            if not confidence:
                problems.append(
                    WorksheetProblem(rows[0][0], "Confidence", "Give Low, Medium or High.")
                )
            elif confidence.lower() not in CONFIDENCE:
                problems.append(
                    WorksheetProblem(
                        rows[0][0],
                        "Confidence",
                        f"The confidence is {confidence}; give Low, Medium or High.",
                    )
                )
            else:
                entry.confidence = CONFIDENCE[confidence.lower()]
        for column in case_columns:
            raw = _per_case(rows, f"dim:{column.key}", column.header, case_id, problems)
            if raw is None:
                continue
            try:
                entry.case_scores[column.key] = cell_read(column, raw)
            except ValueError as error:
                problems.append(WorksheetProblem(rows[0][0], column.header, str(error)))
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
        checked.append(entry)
    return checked, skipped, problems


def _per_case(rows, name, display, case_id, problems) -> str | None:
    """The one value a per-case column has across a case's rows ("" when none is given).

    None when the rows disagree (the problem is recorded).
    """
    given = [(number, values.get(name, "")) for number, values in rows if values.get(name, "")]
    distinct = {value.lower() for _, value in given}
    if len(distinct) > 1:
        listing = ", ".join(f"{value} on row {number}" for number, value in given)
        problems.append(
            WorksheetProblem(
                given[1][0], display, f"{case_id} has different values on its rows ({listing})."
            )
        )
        return None
    return given[0][1] if given else ""


# Recording -------------------------------------------------------------------------------


def _revision_keep(assignment: Assignment, case: CaseScores, now) -> None:
    """Keep the answer being replaced as a revision, as a resubmission on screen does."""
    ratings = list(assignment.ratings.all())
    previous = {
        "responses": {rating.label: rating.scores for rating in ratings},
        "case": assignment.case_scores,
        "confidence": assignment.confidence,
        "notes": assignment.notes,
    }
    replacing = {
        "responses": case.scores,
        "case": case.case_scores,
        "confidence": case.confidence,
        "notes": case.notes,
    }
    if ratings and previous != replacing:
        RatingRevision.objects.create(
            assignment=assignment,
            submitted={**previous, "totals": {rating.label: rating.total for rating in ratings}},
            submitted_at=assignment.submitted_at or now,
            replaced_at=now,
        )


@transaction.atomic
def _record(*, study: Study, rater: Membership, cases: list[CaseScores], filename: str, actor):
    # Lock the study, then the rater: a status change (closing) or a second import for the
    # same rater waits, and what was checked before the locks is checked again under them.
    study = Study.objects.select_for_update().get(pk=study.pk)
    rater = Membership.objects.select_for_update().get(pk=rater.pk)
    if not study.accepts_ratings or rater.status != Membership.Status.ACTIVE:
        _rater(study, rater.pseudonym)  # raises the same error as before the check
    wanted = [c.test_case_id for c in cases]
    have = set(
        rater.assignments.filter(test_case_id__in=wanted).values_list("test_case_id", flat=True)
    )
    missing = [c.case_id for c in cases if c.test_case_id not in have]
    if missing:
        assignments_create(study=study, rater=rater, case_ids=missing)
    assignments = {
        a.test_case_id: a
        for a in Assignment.objects.select_for_update().filter(rater=rater, test_case_id__in=wanted)
    }
    responses = dict(
        ((test_case_id, label), response_id)
        for test_case_id, label, response_id in BlindedLabel.objects.filter(
            test_case_id__in=wanted
        ).values_list("test_case_id", "label", "response_id")
    )
    now = timezone.now()
    updated = 0
    for case in cases:
        assignment = assignments[case.test_case_id]
        if assignment.status == Assignment.Status.SUBMITTED:
            updated += 1
            _revision_keep(assignment, case, now)
        for label, scores in case.scores.items():
            Rating.objects.update_or_create(
                assignment=assignment,
                label=label,
                defaults={
                    "response_id": responses[case.test_case_id, label],
                    "shown_label": label,
                    "scores": scores,
                    "total": sum(score["points"] for score in scores.values()),
                    "submitted_at": now,
                },
            )
        # The rater read the responses in key order, off screen: record that, so the shown
        # labels and any pairwise sign are read the right way round.
        assignment.flipped = False
        assignment.case_scores = case.case_scores
        assignment.confidence = case.confidence
        assignment.notes = case.notes
        assignment.draft = {
            "responses": {},
            "case": {},
            "confidence": case.confidence,
            "notes": case.notes,
        }
        assignment.status = Assignment.Status.SUBMITTED
        assignment.submitted_at = now
        assignment.version = F("version") + 1
        assignment.save()
    StudyEvent.objects.create(
        study=study,
        actor=actor,
        kind="worksheet_imported",
        membership=rater,
        detail={
            "file": filename[:200],
            "cases": len(cases),
            "created": len(missing),
            "updated": updated,
        },
    )
    # The agreement statistics are recomputed after new ratings, as after a submit.
    study_id = study.pk
    transaction.on_commit(lambda: agreement_request_recompute(study_id=study_id))
