"""Reading test cases from CSV, JSONL and Excel files, with every problem reported.

Nothing here touches the database: ``parse_cases`` takes the file's bytes, the ids and
systems the study already has, and returns the cases it found and the problems, each with
its row (or line) and column in plain words. The caller imports only a file with no
problems, all at once (``studies.services.test_cases_import``).

The formats (also in docs/coordinator.md and on the test cases page):

- **CSV** (``.csv``, UTF-8 or UTF-16, separated by commas, semicolons, tabs or pipes, first
  row names the columns) and **Excel** (``.xlsx``, first worksheet, first row names the
  columns), both read by ``importing.tabular`` as the worksheet import reads them. Columns,
  in any order:
  ``id`` and ``prompt`` (required), ``context``, ``stratum`` and ``content_warning``
  (optional; a warning the rater reads before the responses), and one
  ``response:<system>`` column per system, e.g. ``response:baseline``. Every system is in
  every case, unless an optional ``systems`` column names each case's systems separated by
  ``;`` (at least two, arena-style studies): then the row's other responses must be blank.
  Blank rows are skipped. Rows are numbered as a spreadsheet shows them: the column names
  are row 1.
- **JSONL** (``.jsonl``, UTF-8): one JSON object per line,
  ``{"id": "TC-001", "prompt": "...", "context": "...", "stratum": "...",
  "responses": {"baseline": "...", "improved": "..."}}``; ``context`` and ``stratum`` may
  be left out, as may ``content_warning``; ``responses`` holds exactly the case's
  systems. Blank lines are skipped.

The study's systems are the union of the cases' systems. An empty response is a system's
real output: it is imported, with a warning naming its row, never refused.
"""

import re
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field

from core.user_input import UserInputError, quoted

from . import tabular
from .case_checks import (
    MAX_CASES,
    MAX_REPORTED_PROBLEMS,
    RESPONSE_PREFIX,
    Problem,
    _check_records,
    _Collector,
)

# A file of 100,000 cases of about 2 KB is about 210 MB. It is read as a stream from the
# stored upload (never whole in memory), checked a row at a time, and written in batches.
MAX_FILE_BYTES = 256 * 1024 * 1024
# Blank rows count; an Excel workbook of 100,000 cases unpacks to several times its size.
MAX_TABLE_ROWS = 2 * MAX_CASES
MAX_UNPACKED_BYTES = 1024 * 1024 * 1024
# The first cases kept for the preview.
PREVIEW_CASES = 10
MAX_SYSTEM_CHARS = 100

FILE_TYPES = {".csv": "CSV", ".jsonl": "JSONL", ".xlsx": "Excel"}
REQUIRED_COLUMNS = ("id", "prompt")
OPTIONAL_COLUMNS = ("context", "stratum", "content_warning", "systems")
JSONL_FIELDS = ("id", "prompt", "context", "stratum", "content_warning", "responses")
COLUMN_HINT = (
    "Use id, prompt, context, stratum, content_warning, systems, or response:<system name> "
    "for each system."
)


@dataclass
class ParsedCases:
    """What a file holds. ``cases`` is every checked case, unless they were handed to a
    ``sink`` (then it is empty: a large file's cases are written, not kept)."""

    file_type: str = ""
    systems: list[str] = field(default_factory=list)
    cases: list[dict] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # Things imported as they are but worth a look (an empty response); the first few.
    warnings: list[Problem] = field(default_factory=list)
    warning_count: int = 0
    case_count: int = 0
    first_cases: list[dict] = field(default_factory=list)
    stratum_counts: Counter = field(default_factory=Counter)
    # Cases that carry their own content warning.
    warned_cases: int = 0
    _keep: bool = field(default=True, repr=False)

    @property
    def ok(self) -> bool:
        return not self.problems and bool(self.case_count)

    def take(self, case: dict, sink: Callable[[dict], None] | None) -> None:
        """Count a checked case; keep it, or hand it to the sink (None: a file with problems)."""
        self.case_count += 1
        if case["stratum"]:
            self.stratum_counts[case["stratum"]] += 1
        if case.get("content_warning"):
            self.warned_cases += 1
        if len(self.first_cases) < PREVIEW_CASES:
            self.first_cases.append(case)
        if self._keep:
            self.cases.append(case)
        elif sink is not None:
            sink(case)

    @property
    def strata(self) -> list[tuple[str, int]]:
        """(stratum, number of cases), by name; a list, as templates read it more easily."""
        return sorted(self.stratum_counts.items())

    def problem_lines(self, limit: int = MAX_REPORTED_PROBLEMS) -> list[str]:
        lines = [str(problem) for problem in self.problems[:limit]]
        if len(self.problems) > limit:
            lines.append(f"... and {len(self.problems) - limit} more problems.")
        return lines

    def warning_lines(self, limit: int = MAX_REPORTED_PROBLEMS) -> list[str]:
        lines = [str(warning) for warning in self.warnings[:limit]]
        if self.warning_count > len(lines):
            lines.append(f"... and {self.warning_count - len(lines)} more.")
        return lines


def _position(problem: Problem) -> int:
    match = re.match(r"(?:Row|Line) (\d+)", problem.where)
    return int(match.group(1)) if match else 0


def size_problem(size: int) -> Problem | None:
    if size <= MAX_FILE_BYTES:
        return None
    return Problem(
        "File",
        f"the file is {size / 1024 / 1024:.1f} MB; the limit is "
        f"{MAX_FILE_BYTES // 1024 // 1024} MB. Split it into smaller files.",
    )


def file_type_for(filename: str) -> str | None:
    lowered = filename.lower()
    return next((kind for ext, kind in FILE_TYPES.items() if lowered.endswith(ext)), None)


def parse_cases(
    *,
    filename: str,
    data: tabular.Source,
    existing_ids: Collection[str] = (),
    study_systems: Sequence[str] = (),
    sink: Callable[[dict], None] | None = None,
) -> ParsedCases:
    """Read and check a whole file; ``existing_ids``/``study_systems`` are the study's.

    ``data`` is the file's bytes or its path (read as a stream). With a ``sink``, each
    checked case is handed to it as it is read, while the file has no problem so far, and
    not kept: the caller writes it and undoes everything if the file turns out to have one.
    """
    result = ParsedCases(_keep=sink is None)
    problems = _Collector()
    file_type = file_type_for(filename)
    size = tabular.source_size(data)
    if file_type is None:
        problems.add(
            "File",
            f"'{filename}' is not a file type Concord reads. Upload a .csv, .jsonl or .xlsx "
            "file (an old .xls workbook must first be saved as .xlsx).",
        )
    elif size_problem(size):
        problems.problems.append(size_problem(size))
    elif _is_blank(data):
        problems.add("File", "the file is empty.")
    if problems.problems:
        result.problems = problems.problems
        return result
    result.file_type = file_type
    if file_type == "JSONL":
        records = _jsonl_records(data, problems)
    else:
        records = _table_records(_table_rows(filename, data, problems), problems)
    _check_records(records, problems, result, existing_ids, study_systems, sink)
    # Reading and checking happen in two passes; report in the order of the file.
    result.problems = sorted(problems.problems, key=_position)
    if not result.problems and not result.case_count:
        result.problems = [Problem("File", "the file has no test cases, only column names.")]
    return result


def _is_blank(data: tabular.Source) -> bool:
    """Whether the file holds only white space; reads no further than its first character."""
    with tabular.source_open(data) as stream:
        while chunk := stream.read(64 * 1024):
            if chunk.strip():
                return False
    return True


# --- Reading each format into records: (where, {field: text}, {system: text}, columns) --


def _add_table_problems(error: tabular.TableError, problems: _Collector) -> None:
    """The reader's problems in this module's words: "Row 3 (line 5), column B: the ..."."""
    for problem in error.problems:
        if problem.row is None:
            where = "File" if problem.line is None else f"Line {problem.line}"
        else:
            where = _row_where(problem.row, problem.line)
        column = f"column {tabular.column_letter(problem.column)}" if problem.column else ""
        problems.add(where, problem.message[0].lower() + problem.message[1:], column)


def _table_rows(
    filename: str, data: tabular.Source, problems: _Collector
) -> Iterator[tuple[str, list]]:
    """(where, cells) for each non-blank row; the same reader as the worksheet import's.

    Rows are read one at a time from the file, and each is let go once it has been checked.
    """
    try:
        for row in tabular.iter_table(
            filename=filename,
            data=data,
            max_bytes=MAX_FILE_BYTES,
            max_rows=MAX_TABLE_ROWS,
            max_unpacked_bytes=MAX_UNPACKED_BYTES,
        ):
            yield _row_where(row.number, row.line), row.cells
    except tabular.TableError as error:
        _add_table_problems(error, problems)


def _row_where(number: int, line: int | None) -> str:
    """Where a row is: "Row 3", or "Row 3 (line 5)" when a cell above spans lines."""
    if line is None or line == number:
        return f"Row {number}"
    return f"Row {number} (line {line})"


def _table_records(rows, problems: _Collector) -> Iterator[tuple]:
    """Turn a header row and data rows into records; reports column problems on row 1."""
    rows = iter(rows)
    first = next(rows, None)
    if first is None:
        if not problems.problems:
            problems.add("File", "the file has no rows.")
        return
    where, header = first
    columns = _read_header(where, header, problems)
    if columns is None:
        return
    # Worked out once for the file: each row starts with every response column blank.
    blank_responses = dict.fromkeys(
        (entry[1] for entry in columns if entry and entry[0] == "response"), ""
    )
    width = len(columns)
    for where, cells in rows:
        if problems.full:
            return
        # A short row (fewer cells than column names) reads as empty cells.
        fields = {}
        responses = blank_responses.copy()
        for index, text in enumerate(cells):
            entry = columns[index] if index < width else None
            if entry is None:
                if text:
                    problems.add(
                        where,
                        "this cell has a value but its column has no name in row 1.",
                        f"column {tabular.column_letter(index + 1)}",
                    )
                continue
            kind, name = entry
            if kind == "response":
                responses[name] = text
            elif kind == "field":
                fields[name] = text
            # "unknown": reported once, on row 1
        yield where, fields, responses, columns


def _read_header(where: str, header: list[str], problems: _Collector):
    """Each column as ("field", name), ("response", system), ("unknown", name) or None."""
    columns = []
    seen = {}
    for index, raw in enumerate(header):
        name = raw.strip()
        letter = tabular.column_letter(index + 1)
        column = f"column {letter} '{quoted(name)}'"
        entry = _header_column(where, name, column, problems)
        if entry is not None and entry[0] != "unknown":
            if entry in seen:
                problems.add(where, f"this column repeats column {seen[entry]}.", column)
            seen.setdefault(entry, letter)
        columns.append(entry)
    # Unknown or repeated columns are reported, and the rows are still checked, so that
    # one upload shows every problem; without the required columns there is nothing to check.
    return columns if _has_required_columns(where, seen, problems) else None


def _header_column(where: str, name: str, column: str, problems: _Collector):
    """What one column name means; reports a name that cannot be used as it is."""
    if not name:
        return None
    if name.lower().startswith(RESPONSE_PREFIX):
        system = name[len(RESPONSE_PREFIX) :].strip()
        if not system:
            problems.add(
                where, "a response column needs a system name, e.g. 'response:baseline'.", column
            )
            return None
        if len(system) > MAX_SYSTEM_CHARS:
            problems.add(
                where, f"system names are limited to {MAX_SYSTEM_CHARS} characters.", column
            )
        return ("response", system)
    if name.lower() in REQUIRED_COLUMNS + OPTIONAL_COLUMNS:
        return ("field", name.lower())
    problems.add(where, f"unknown column. {COLUMN_HINT}", column)
    return ("unknown", name)


def _has_required_columns(where: str, seen: dict, problems: _Collector) -> bool:
    """Whether the header has the required columns and a response column; reports which not."""
    usable = True
    for required in REQUIRED_COLUMNS:
        if ("field", required) not in seen:
            problems.add(where, f"there is no '{required}' column. {COLUMN_HINT}")
            usable = False
    if not any(entry[0] == "response" for entry in seen):
        problems.add(
            where,
            "there is no response column. Add one column per system, named "
            "'response:<system name>', e.g. 'response:baseline'.",
        )
        usable = False
    return usable


def _jsonl_records(data: tabular.Source, problems: _Collector) -> Iterator[tuple]:
    """One record per non-blank line that holds a JSON object, read line by line."""
    try:
        records = tabular.jsonl_records(data, max_chars=MAX_FILE_BYTES)
    except tabular.TableError as error:
        _add_table_problems(error, problems)
        return
    for number, value in records:
        if problems.full:
            return
        where = f"Line {number}"
        record = _jsonl_object(where, value, problems)
        if record is None:
            continue
        fields = _jsonl_fields(where, record, problems)
        texts = _jsonl_responses(where, record, problems)
        yield where, fields, texts, None


def _jsonl_object(where: str, value: object, problems: _Collector) -> dict | None:
    """The line's JSON object, or None when it is not valid JSON or not an object."""
    if isinstance(value, UserInputError):
        message = f"this line cannot be read: {value.reason}."
        if value.reason.startswith("it is not valid JSON"):
            message = f"this line {value.reason[3:]}. Each line must be one complete JSON object."
        problems.add(where, message)
        return None
    if not isinstance(value, dict):
        problems.add(where, "each line must be a JSON object, {...}.")
        return None
    return value


def _jsonl_fields(where: str, record: dict, problems: _Collector) -> dict:
    """The line's fields other than "responses", as text; reports unknown or non-text ones."""
    fields = {}
    for key, value in record.items():
        if key not in JSONL_FIELDS:
            problems.add(
                where,
                "unknown field. Use id, prompt, context, stratum, content_warning and responses.",
                f"field '{quoted(key)}'",
            )
        elif key == "responses":
            continue
        elif value is None:
            fields[key] = ""
        elif isinstance(value, str) or (key == "id" and isinstance(value, int)):
            fields[key] = str(value)
        else:
            problems.add(where, "must be text (in double quotes).", f"field '{quoted(key)}'")
    return fields


def _jsonl_responses(where: str, record: dict, problems: _Collector) -> dict:
    """The line's responses as {system: text}; reports a malformed object or entry."""
    # A missing "responses" is reported per system by the shared checks.
    responses = record.get("responses") or {}
    if not isinstance(responses, dict):
        problems.add(
            where,
            'must be an object with one text per system: {"<system>": "<text>", ...}.',
            "field 'responses'",
        )
        responses = {}
    texts = {}
    for system, value in responses.items():
        column = f"field 'responses.{quoted(system)}'"
        if not system.strip():
            problems.add(where, "a response needs a system name as its key.", column)
        elif len(system) > MAX_SYSTEM_CHARS:
            problems.add(
                where, f"system names are limited to {MAX_SYSTEM_CHARS} characters.", column
            )
        elif not isinstance(value, str | None):
            problems.add(where, "must be text (in double quotes).", column)
        else:
            texts[system.strip()] = value or ""
    return texts


# --- Checks shared by every format -------------------------------------------------------
