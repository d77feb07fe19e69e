"""Ratings made outside Concord, imported by system name (.csv, .xlsx), in the long format:
one row per test case, system and rater.

``Case ID | System | Rater | <one column per rubric dimension> | Confidence | Notes |
Timestamp`` (Confidence, Notes, Timestamp and Total optional). Each dimension's cell is read
by its rubric kind as a worksheet's is; a preference between two responses names the system
preferred ("name", or "name:2" where the scale has several strengths per side) or "tie"
(``read_named_cell``), and may stand on any of the case's rows for that rater.

Everything is checked before anything is written, and a file with any problem imports
nothing; every problem names its row and column (up to ``MAX_PROBLEMS``). The raters the
file names become pseudonymous raters of the study without a usable account (an inactive
user with no password; the file's name kept as ``Membership.external_name``, which identity
erasure clears); a name imported again is the same rater. Then the ratings go through the
one rating write path (``annotation.services.ratings_import_by_system``).

A study holds ratings made in Concord or imported ones, never both (see
``annotation.selectors.imported``). Timestamps are checked and their range recorded in the
history; each rating is stored as submitted at the import, since the phase a rating belongs
to (pilot or main) is read from that time.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, time

from django.db import transaction
from django.db.models import prefetch_related_objects
from django.utils import timezone

from annotation.selectors.imported import concord_ratings_held
from annotation.services import (
    CONCORD_HELD_MESSAGE,
    MAX_NOTES_LENGTH,
    RatingInvalidError,
    ratings_import_by_system,
    submission_check,
)
from core.user_input import quoted
from studies.errors import ApplicationError
from studies.locks import study_lock
from studies.models import BlindedLabel, Membership, Study
from studies.rubric import RubricValueError, cell_number, response_total
from studies.services.accounts import imported_rater_create

from .worksheets import DimensionColumn, WorksheetError, WorksheetProblem, read_table
from .worksheets.columns import CONFIDENCE, MAX_PROBLEMS, dimension_columns

# Distinct raters one file may name.
MAX_RATERS = 500
MAX_NAME_CHARS = 200  # ``Membership.external_name``
FIXED = ("Case ID", "System", "Rater")
OPTIONAL = ("Confidence", "Notes", "Timestamp")

__all__ = [
    "FIXED",
    "OPTIONAL",
    "ImportSummary",
    "ratings_file_headings",
    "ratings_file_import",
]


@dataclass(frozen=True)
class ImportSummary:
    rows: int
    # One per response rated, or, for a rubric of preferences only, one per rater and case
    # (as the analysis counts them; issue 39: 2,997 verdicts were once 5,994 "ratings").
    ratings: int
    cases: int  # test cases with at least one rating in the file
    raters: int
    new_raters: int  # names not imported into this study before
    created: int  # (case, rater) pairs new to the study
    updated: int  # (case, rater) pairs whose earlier imported answer was replaced
    first_rated: str  # the file's earliest timestamp ("" when it gives none)
    last_rated: str
    dry_run: bool
    # The preferences (verdicts) given: one per rater and case that answers one.
    verdicts: int = 0


@dataclass
class _Group:
    """One rater's rows of one test case."""

    first_row: int
    rows: list[tuple[int, str, dict]] = field(default_factory=list)  # (row, label, values)


def _normal(text: str) -> str:
    return re.sub(r"[\s_\-]+", "", text.lower())


def _header_map(columns: list[DimensionColumn]) -> dict[str, tuple[str, str]]:
    """Normalised heading -> (field, display name)."""
    names = {
        "caseid": ("case", "Case ID"),
        "case": ("case", "Case ID"),
        "tcid": ("case", "Case ID"),
        "testcase": ("case", "Case ID"),
        "testcaseid": ("case", "Case ID"),
        "system": ("system", "System"),
        "systemname": ("system", "System"),
        "rater": ("rater", "Rater"),
        "ratername": ("rater", "Rater"),
        "confidence": ("confidence", "Confidence"),
        "notes": ("notes", "Notes"),
        "note": ("notes", "Notes"),
        "timestamp": ("timestamp", "Timestamp"),
        "ratedat": ("timestamp", "Timestamp"),
        "total": ("total", "Total"),
    }
    for column in columns:
        for alias in (column.header, column.key, column.name):
            names.setdefault(_normal(alias), (f"dim:{column.key}", column.header))
    return names


def ratings_file_headings(*, study: Study) -> list[str]:
    """The columns of a file of ratings by system, the optional ones last."""
    return [*FIXED, *(c.header for c in dimension_columns(study=study)), *OPTIONAL]


def _timestamp(text: str) -> datetime | None:
    """An ISO 8601 date or date and time (UTC when no offset is given); None if it is not."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        try:
            moment = datetime.combine(date.fromisoformat(text), time(0))
        except ValueError:
            return None
    if timezone.is_naive(moment):
        moment = moment.replace(tzinfo=timezone.get_current_timezone())
    return moment


class _Check:
    """The file's rows checked against the study: the answers by rater, or the problems."""

    def __init__(self, study: Study, columns: list[DimensionColumn]):
        self.study = study
        self.columns = columns
        self.response_columns = [c for c in columns if c.scope != "case"]
        self.case_columns = [c for c in columns if c.scope == "case"]
        self.problems: list[WorksheetProblem] = []
        self.cases = {c.case_id: c.pk for c in study.test_cases.only("id", "case_id")}
        # test case id -> {system name (lower case): key label}, and the names as written.
        self.labels: dict[int, dict[str, str]] = {}
        self.names: dict[int, dict[str, str]] = {}
        rows = BlindedLabel.objects.filter(test_case__study=study).values_list(
            "test_case_id", "label", "response__system__name"
        )
        for test_case_id, label, system in rows:
            self.labels.setdefault(test_case_id, {})[system.strip().lower()] = label
            self.names.setdefault(test_case_id, {})[label] = system
        self.groups: dict[tuple[str, str], _Group] = {}
        self.rater_names: dict[str, str] = {}  # casefolded -> as first written
        self.stamps: list[datetime] = []
        self.rows = 0

    def problem(self, row: int | None, column: str | None, message: str) -> None:
        self.problems.append(WorksheetProblem(row, column, message))

    def row(self, number: int, values: dict[str, str]) -> None:
        self.rows += 1
        case_id, rater = values.get("case", ""), values.get("rater", "")
        if not case_id:
            return self.problem(number, "Case ID", "The case id is empty.")
        if case_id not in self.cases:
            return self.problem(number, "Case ID", f"There is no test case {quoted(case_id)} here.")
        if not rater:
            return self.problem(number, "Rater", "The rater's name is empty.")
        if len(rater) > MAX_NAME_CHARS:
            return self.problem(
                number, "Rater", f"A rater's name is limited to {MAX_NAME_CHARS} characters."
            )
        key = rater.casefold()
        if key not in self.rater_names:
            if len(self.rater_names) == MAX_RATERS:
                return self.problem(
                    number, "Rater", f"A file may name at most {MAX_RATERS} raters."
                )
            self.rater_names[key] = rater
        test_case_id = self.cases[case_id]
        label = self._label(number, case_id, test_case_id, values.get("system", ""))
        if label is None:
            return None
        group = self.groups.setdefault((case_id, key), _Group(first_row=number))
        if label and any(label == seen for _, seen, _ in group.rows):
            first = next(row for row, seen, _ in group.rows if seen == label)
            return self.problem(
                number,
                "System",
                f"A second row for {case_id}, {quoted(values['system'])}, {quoted(rater)} "
                f"(the first is row {first}).",
            )
        stamp = values.get("timestamp", "")
        if stamp:
            moment = _timestamp(stamp)
            if moment is None:
                self.problem(
                    number, "Timestamp", "Write the time as 2024-05-31 or 2024-05-31T14:05:00."
                )
            elif moment > timezone.now():
                self.problem(number, "Timestamp", "The time is in the future.")
            else:
                self.stamps.append(moment)
        group.rows.append((number, label, values))
        return None

    def _label(self, number: int, case_id: str, test_case_id: int, system: str) -> str | None:
        """The key label of the row's system ("" for a row with no system, where the rubric
        rates each case once only); None when the row names none of the case's systems."""
        systems = self.labels.get(test_case_id, {})
        if not system:
            if not self.response_columns:
                return ""
            self.problem(number, "System", "The system's name is empty.")
            return None
        label = systems.get(system.strip().lower())
        if label is None:
            listed = ", ".join(sorted(self.names.get(test_case_id, {}).values()))
            self.problem(
                number,
                "System",
                f"{case_id} has no response by {quoted(system)}; its systems: {listed}.",
            )
        return label

    def answers(self) -> tuple[dict[str, dict[int, dict]], int, int]:
        """Each rater's answers by test case, as the screen would send them, each through
        the same check as a submit; the number of ratings (one per response rated, or per
        rater and case for a rubric of preferences only) and of verdicts (preferences
        given, one per rater and case)."""
        answers: dict[str, dict[int, dict]] = {}
        ratings = verdicts = 0
        prefetch_related_objects([self.study], "rubric__dimensions")  # read once for all
        for (case_id, key), group in self.groups.items():
            if len(self.problems) > MAX_PROBLEMS:
                break
            before = len(self.problems)
            payload = self.group_answers(case_id, group)
            if len(self.problems) > before:
                continue
            labels = sorted(self.names.get(self.cases[case_id], {}))
            try:
                submitted = submission_check(
                    study=self.study, labels=labels, payload=payload, confidence_required=False
                )
            except RatingInvalidError as error:
                self.problem(group.first_row, None, f"{case_id}: {error}")
                continue
            ratings += len(submitted["responses"]) if self.response_columns else 1
            verdicts += any(
                column.scoring.given(submitted["case"].get(column.key))
                for column in self.case_columns
            )
            answers.setdefault(self.rater_names[key], {})[self.cases[case_id]] = payload
        return answers, ratings, verdicts

    def group_answers(self, case_id: str, group: _Group) -> dict:
        """One rater's answer to one case as the rating screen would send it."""
        test_case_id = self.cases[case_id]
        names = self.names.get(test_case_id, {})
        given = {label for _, label, _ in group.rows}
        if self.response_columns:
            for label in sorted(set(names) - given):
                self.problem(
                    group.first_row,
                    "System",
                    f"{case_id} has no row for system {names[label]} by this rater.",
                )
        responses = {}
        for number, label, values in group.rows:
            if label:
                responses[label] = self._response_scores(number, values)
        case_scores = {}
        for column in self.case_columns:
            raw = self._per_case(group, f"dim:{column.key}", column.header, case_id)
            if raw is None:
                continue
            try:
                case_scores[column.key] = column.scoring.read_named_cell(
                    raw, names=names, header=column.header
                )
            except RubricValueError as error:
                self.problem(group.first_row, column.header, str(error))
                continue
            if column.scoring.required and not column.scoring.given(case_scores[column.key]):
                self.problem(
                    group.first_row, column.header, f"{column.name} is required; it is empty."
                )
        confidence = self._per_case(group, "confidence", "Confidence", case_id) or ""
        if confidence and confidence.lower() not in CONFIDENCE:
            self.problem(
                group.first_row,
                "Confidence",
                f"The confidence is {quoted(confidence)}; give Low, Medium or High, or leave it "
                "empty.",
            )
            confidence = ""
        notes = "\n".join(dict.fromkeys(v["notes"] for _, _, v in group.rows if v.get("notes")))
        if len(notes) > MAX_NOTES_LENGTH:
            self.problem(
                group.first_row, "Notes", f"Notes are limited to {MAX_NOTES_LENGTH} characters."
            )
        return {
            "responses": responses,
            "case": case_scores,
            "confidence": CONFIDENCE.get(confidence.lower(), ""),
            "notes": notes,
        }

    def _response_scores(self, number: int, values: dict) -> dict:
        scores, complete = {}, True
        for column in self.response_columns:
            try:
                scores[column.key] = column.scoring.read_cell(
                    values.get(f"dim:{column.key}", ""), header=column.header
                )
            except RubricValueError as error:
                self.problem(number, column.header, str(error))
                complete = False
        for column in self.response_columns:
            if (
                complete
                and column.scoring.required
                and not column.scoring.given(scores.get(column.key))
            ):
                self.problem(
                    number, column.header, f"{column.name} is required; the cell is empty."
                )
        raw_total = values.get("total", "")
        if raw_total and complete:
            total = cell_number(raw_total)
            points = response_total([c.scoring for c in self.response_columns], scores)
            if points is None:
                self.problem(
                    number,
                    "Total",
                    f"The total is {quoted(raw_total)}, but a part of it is unanswered, so "
                    "the response has no total; leave Total empty.",
                )
            elif total is None or total != points:
                self.problem(
                    number,
                    "Total",
                    f"The total is {quoted(raw_total)} but the scores add up to {points}.",
                )
        return scores

    def _per_case(self, group: _Group, name: str, display: str, case_id: str) -> str | None:
        """The one value a per-case column has across a rater's rows of a case ("" when
        none is given); None when they differ (the problem is recorded)."""
        given = [(number, v[name]) for number, _, v in group.rows if v.get(name)]
        if len({value.lower() for _, value in given}) > 1:
            listing = ", ".join(f"{quoted(value)} on row {number}" for number, value in given)
            self.problem(given[1][0], display, f"{case_id} has different values ({listing}).")
            return None
        return given[0][1] if given else ""


def _read_header(number: int, header: list[str], columns: list[DimensionColumn], problems: list):
    known = _header_map(columns)
    fields: dict[int, str] = {}
    seen: set[str] = set()
    for index, heading in enumerate(header):
        if not heading:
            continue
        match = known.get(_normal(heading))
        if match is None:
            expected = ", ".join([*FIXED, *(c.header for c in columns), *OPTIONAL])
            problems.append(
                WorksheetProblem(number, heading, f"Unknown column. The columns are {expected}.")
            )
            continue
        name = match[0]
        if name in seen:
            problems.append(WorksheetProblem(number, heading, "This column appears twice."))
            continue
        seen.add(name)
        fields[index] = name
    required = [("case", "Case ID"), ("rater", "Rater")]
    if any(c.scope != "case" for c in columns):
        required.append(("system", "System"))
    required += [(f"dim:{c.key}", c.header) for c in columns]
    for name, display in required:
        if name not in seen:
            problems.append(WorksheetProblem(number, display, "This column is missing."))
    return fields


@dataclass(frozen=True)
class _Parsed:
    answers: dict[str, dict[int, dict]]  # rater's name as written -> {test case id: payload}
    rows: int
    ratings: int
    cases: int
    first_rated: str
    last_rated: str
    verdicts: int = 0


def _parse(*, study: Study, filename: str, data: bytes) -> _Parsed:
    """The file checked against the study, every rating through the same check as a submit
    (writing nothing); raises ``WorksheetError`` with every problem found."""
    rows = [(n, cells) for n, cells in read_table(filename=filename, data=data) if any(cells)]
    if not rows:
        raise WorksheetError([WorksheetProblem(None, None, "The file has no rows.")])
    columns = dimension_columns(study=study)
    problems: list[WorksheetProblem] = []
    header_number, header = rows[0]
    fields = _read_header(header_number, header, columns, problems)
    if problems:
        raise WorksheetError(problems)
    check = _Check(study, columns)
    for number, cells in rows[1:]:
        for index, cell in enumerate(cells):
            if cell and index not in fields:
                check.problem(number, f"#{index + 1}", "A value in a column without a heading.")
        check.row(number, {f: cells[i] if i < len(cells) else "" for i, f in fields.items()})
        if len(check.problems) > MAX_PROBLEMS:
            break
    answers, ratings, verdicts = check.answers()
    if check.problems:
        check.problems.sort(key=lambda p: p.row or 0)
        raise WorksheetError(check.problems[:MAX_PROBLEMS])
    if not answers:
        raise WorksheetError([WorksheetProblem(None, None, "The file has no ratings.")])
    stamps = sorted(check.stamps)
    return _Parsed(
        answers=answers,
        rows=check.rows,
        ratings=ratings,
        verdicts=verdicts,
        cases=len({case_id for case_id, _ in check.groups}),
        first_rated=stamps[0].isoformat() if stamps else "",
        last_rated=stamps[-1].isoformat() if stamps else "",
    )


def _imported_raters(study: Study) -> dict[str, Membership]:
    """The study's raters imported before, by their file name (case folded)."""
    return {
        m.external_name.casefold(): m
        for m in study.memberships.filter(role=Membership.Role.RATER).exclude(external_name="")
    }


def _refusal(study: Study) -> str:
    if not study.accepts_ratings:
        return (
            f"The study is {study.get_status_display().lower()}; ratings can be imported only "
            "while it is in its pilot or open."
        )
    if concord_ratings_held(study_id=study.pk):
        return CONCORD_HELD_MESSAGE
    return ""


def ratings_file_import(
    *,
    study: Study,
    filename: str,
    data: bytes,
    actor=None,
    dry_run: bool = False,
    progress: Callable[[str, int, int, str], None] | None = None,
) -> ImportSummary:
    """Check a file of ratings by system and, unless ``dry_run``, record it; all or nothing.

    ``progress(stage, done, total, message)`` is told when the check and the writing begin.
    Raises ``WorksheetError`` listing every problem; nothing is then written.
    """
    report = progress or (lambda stage, done, total, message: None)
    refusal = _refusal(study)
    if refusal:
        raise WorksheetError([WorksheetProblem(None, None, refusal)])
    report("checking", 0, 1, "Checking the file")
    parsed = _parse(study=study, filename=filename, data=data)
    known = _imported_raters(study)
    new_names = [name for name in parsed.answers if name.casefold() not in known]
    counts = (0, 0)
    if not dry_run:
        plural = "s" if len(parsed.answers) != 1 else ""
        report("writing", 0, len(parsed.answers), f"Recording the ratings of the rater{plural}")
        try:
            with transaction.atomic():
                # The names are matched to the study's raters under the lock the import
                # takes anyway, so that two imports of one file at once (two tabs, a retry)
                # make each new name one rater, not one per import.
                study_lock(study.pk, exclusive=True)
                known = _imported_raters(study)
                new_names = [name for name in parsed.answers if name.casefold() not in known]
                raters = {
                    name: known.get(name.casefold())
                    or imported_rater_create(study=study, name=name)
                    for name in parsed.answers
                }
                recorded = ratings_import_by_system(
                    study=study,
                    answers={raters[name]: answers for name, answers in parsed.answers.items()},
                    actor=actor,
                    source_name=filename,
                    detail={
                        "ratings": parsed.ratings,
                        "verdicts": parsed.verdicts,
                        "raters": len(raters),
                        "new_raters": len(new_names),
                        "first_rated": parsed.first_rated,
                        "last_rated": parsed.last_rated,
                    },
                    progress=lambda done, total: report(
                        "writing", done, total, f"Recording the ratings of {done} of {total}"
                    ),
                )
        except ApplicationError as error:
            raise WorksheetError([WorksheetProblem(None, None, str(error))]) from error
        counts = (recorded.created, recorded.updated)
    return ImportSummary(
        rows=parsed.rows,
        ratings=parsed.ratings,
        verdicts=parsed.verdicts,
        cases=parsed.cases,
        raters=len(parsed.answers),
        new_raters=len(new_names),
        created=counts[0],
        updated=counts[1],
        first_rated=parsed.first_rated,
        last_rated=parsed.last_rated,
        dry_run=dry_run,
    )
