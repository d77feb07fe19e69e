"""Judge files: the prompts exported for a judge, and the judge outputs read back in.

Prompts: JSONL, one line per test case and order ({"case_id", "order", "prompt"}), both
orders. Outputs: JSONL ({"case_id", "order", "judge", "output"} per line) or a table (CSV,
Excel) with those columns. Reading checks the file's shape; the service checks the rows
against the study and writes all of them or none.
"""

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from core.user_input import UserInputError
from studies.errors import ApplicationError
from studies.importing.table_rows import MAX_BYTES, TableError
from studies.importing.tabular import read_table
from studies.importing.text_tables import jsonl_records
from studies.rendering import reasoning_steps

from .verdicts import MAX_OUTPUT_CHARS, ORDERS, template_fill

COLUMNS = ("case_id", "order", "judge", "output")
MAX_ROWS = 20_000
MAX_JUDGE_NAME = 100
MAX_CASE_ID = 50


class JudgeImportError(ApplicationError):
    """The file has problems; ``problems`` lists each with its row."""

    def __init__(self, problems: list[str]):
        count = len(problems)
        super().__init__(
            f"The file has {count} problem{'s' if count != 1 else ''}; nothing was imported.",
            problems=problems[:200],
        )


@dataclass(frozen=True)
class JudgeRow:
    number: int  # the line (JSONL) or row (table) it came from
    case_id: str
    order: str
    judge: str
    output: str


def judge_rows_read(*, filename: str, data: bytes) -> list[JudgeRow]:
    """The rows of a judge output file, each checked for shape; raises JudgeImportError."""
    rows, problems = judge_rows_check(filename=filename, data=data)
    if problems:
        raise JudgeImportError(problems)
    return rows


def judge_rows_check(*, filename: str, data: bytes) -> tuple[list[JudgeRow], list[str]]:
    """The rows of good shape and the problems of the others, so that a caller checking the
    good rows further reports every problem of the file at once. Raises JudgeImportError
    for a problem of the whole file (too large, no header)."""
    if len(data) > MAX_BYTES:
        raise JudgeImportError([f"The file is larger than {MAX_BYTES // (1024 * 1024)} MB."])
    if filename.lower().endswith((".jsonl", ".json")):
        raw = _jsonl_records(data)
    else:
        raw = _table_records(filename, data)
    rows, problems = [], []
    for number, record in raw:
        row, row_problems = _row(number, record)
        problems += row_problems
        if row is not None:
            rows.append(row)
        if len(problems) > 200:
            break
    if not rows and not problems:
        raise JudgeImportError(["The file holds no judge outputs."])
    return rows, problems


def _jsonl_records(data: bytes) -> Iterator[tuple[int, object]]:
    try:
        records = jsonl_records(data, max_chars=MAX_OUTPUT_CHARS * 2, max_depth=2)
    except TableError as error:
        raise JudgeImportError([str(p) for p in error.problems]) from None
    for count, record in enumerate(records, 1):
        if count > MAX_ROWS:
            raise JudgeImportError([f"The file has more than {MAX_ROWS} lines."])
        yield record


def _table_records(filename: str, data: bytes) -> Iterator[tuple[int, object]]:
    try:
        table = read_table(filename=filename, data=data, max_rows=MAX_ROWS + 1, max_columns=20)
    except TableError as error:
        raise JudgeImportError([str(p) for p in error.problems]) from None
    if not table:
        return
    header = [cell.strip().lower() for cell in table[0].cells]
    missing = [column for column in COLUMNS if column not in header]
    if missing:
        raise JudgeImportError(
            [f"Row 1: the header needs the columns {', '.join(COLUMNS)}; missing: "
             f"{', '.join(missing)}."]
        )  # fmt: skip
    where = {column: header.index(column) for column in COLUMNS}
    for row in table[1:]:
        cells = row.cells
        yield (
            row.number,
            {c: cells[i] if i < len(cells) else "" for c, i in where.items()},
        )


def _row(number: int, record) -> tuple[JudgeRow | None, list[str]]:
    place = f"Line/row {number}"
    if isinstance(record, UserInputError):
        return None, [f"{place}: {record.reason}."]
    if not isinstance(record, dict):
        return None, [f"{place}: expected an object with {', '.join(COLUMNS)}."]
    problems = []
    values = {}
    for column in COLUMNS:
        value = record.get(column)
        if not isinstance(value, str) or (column != "output" and not value.strip()):
            problems.append(f"{place}: '{column}' must be non-empty text.")
            continue
        values[column] = value if column == "output" else value.strip()
    if problems:
        return None, problems
    if values["order"].upper() not in ORDERS:
        problems.append(f"{place}: order must be AB or BA, not {values['order'][:10]!r}.")
    if len(values["judge"]) > MAX_JUDGE_NAME:
        problems.append(f"{place}: the judge name is longer than {MAX_JUDGE_NAME} characters.")
    if len(values["case_id"]) > MAX_CASE_ID:
        problems.append(f"{place}: the case id is longer than {MAX_CASE_ID} characters.")
    if len(values["output"]) > MAX_OUTPUT_CHARS:
        problems.append(f"{place}: the output is longer than {MAX_OUTPUT_CHARS} characters.")
    if problems:
        return None, problems
    return (
        JudgeRow(
            number=number,
            case_id=values["case_id"],
            order=values["order"].upper(),
            judge=values["judge"],
            output=values["output"],
        ),
        [],
    )


def prompt_lines(template: str, cases: Iterable[tuple[str, str, str, str, str]]) -> Iterator[str]:
    """JSONL lines for (case id, question, context, key A text, key B text): both orders."""
    for case_id, question, context, text_a, text_b in cases:
        for order, first, second in (("AB", text_a, text_b), ("BA", text_b, text_a)):
            prompt = template_fill(
                template,
                question=question,
                steps=reasoning_steps(context),
                first=first,
                second=second,
            )
            yield json.dumps({"case_id": case_id, "order": order, "prompt": prompt}) + "\n"
