"""A table's rows and what is wrong with them: the bounds every reader checks a row
against, the problems with their row and column, and the file's content as bytes or a
path (no Django models). The readers are ``text_tables`` and ``excel_tables``; the one
entry point is ``tabular``."""

import io
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import BinaryIO, NoReturn

from core.user_input import unstorable
from studies.errors import ApplicationError

MAX_BYTES = 10 * 1024 * 1024
MAX_ROWS = 20_000
MAX_COLUMNS = 500
MAX_CELL_CHARS = 200_000
# An .xlsx is a zip: what it unpacks to is bounded from the zip's directory, before reading.
MAX_UNPACKED_BYTES = 64 * 1024 * 1024
# What its cells show in all, a shared text counted in every cell that shows it: bounded by
# one scan of the parts before any row is read (by default, as many characters as the
# unpacked bytes allowed: a file that expands beyond that is no spreadsheet's own writing).
# Without it, a text of 150,000 characters stored once and shown by every row costs each
# row a copy and a check of it: tens of seconds before the row bound refuses the file.
MAX_EXPANDED_CHARS: int | None = None
CHUNK_BYTES = 1024 * 1024

UNSTORABLE_CELL = (
    "This cell holds {what}, which cannot be stored; remove it and upload the file again."
)


@dataclass(frozen=True)
class TableProblem:
    """What is wrong, and where: ``row`` as a spreadsheet shows it, ``column`` from 1.

    ``line`` is the line of a text file, where a problem is about a line rather than a row
    (the encoding) or the two differ (a cell over several lines). All three may be None.
    """

    row: int | None
    column: int | None
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = []
        if self.row is not None:
            where.append(f"row {self.row}")
        elif self.line is not None:
            where.append(f"line {self.line}")
        if self.column is not None:
            where.append(f"column {column_letter(self.column)}")
        return problem_text(where, self.message)


def problem_text(where: list[str], message: str) -> str:
    """A problem as a message shows it: "Row 3, column B: ...", or the message alone."""
    if not where:
        return message
    place = ", ".join(where)
    return f"{place[0].upper()}{place[1:]}: {message}"


class TableError(ApplicationError):
    """The file cannot be read as a table; ``problems`` says why."""

    def __init__(self, problems: list[TableProblem]):
        super().__init__("\n".join(str(p) for p in problems), problems=problems)


@dataclass(frozen=True)
class TableRow:
    number: int  # as a spreadsheet shows it: the first row is 1
    line: int  # the line of the file it starts on; the same as ``number`` for Excel
    cells: list[str]


def column_letter(number: int) -> str:
    """1 -> "A", 27 -> "AA", as spreadsheets name columns."""
    letters = ""
    while number > 0:
        number, remainder = divmod(number - 1, 26)
        letters = chr(ord("A") + remainder) + letters
    return letters


# A file's content: its bytes, or the path of the file on disk (read a chunk at a time).
Source = bytes | os.PathLike


def source_size(data: Source) -> int:
    return os.path.getsize(data) if isinstance(data, os.PathLike) else len(data)


def source_open(data: Source) -> BinaryIO:
    """A new binary stream over the content, from its start; the caller closes it."""
    return open(data, "rb") if isinstance(data, os.PathLike) else io.BytesIO(data)


def _refuse(
    row: int | None, column: int | None, message: str, *, line: int | None = None
) -> NoReturn:
    raise TableError([TableProblem(row, column, message, line=line)])


def _size(number: int) -> str:
    if number >= 1024 * 1024 and number % (1024 * 1024) == 0:
        return f"{number // (1024 * 1024)} MB"
    if number >= 1024 and number % 1024 == 0:
        return f"{number // 1024} KB"
    return f"{number:,} bytes"


@dataclass(frozen=True)
class _Bounds:
    rows: int
    columns: int
    cell_chars: int

    def row(self, number: int, line: int, cells: Sequence[str]) -> TableRow | None:
        """The row checked against the bounds, or None when it is blank.

        Every row the file holds counts, blank or not, so that the work stays bounded; the
        empty cells at the end of a row do not count.
        """
        if number > self.rows:
            _refuse(number, None, f"The file has more than {self.rows:,} rows.", line=line)
        if len(cells) > self.columns:
            beyond = cells[self.columns :]
            if any(cell.strip() for cell in beyond):
                message = f"This row has more than {self.columns:,} columns."
                _refuse(number, self.columns + 1, message, line=line)
            cells = cells[: self.columns]
        cells = [
            (cell.replace("\r\n", "\n").replace("\r", "\n") if "\r" in cell else cell).strip()
            for cell in cells
        ]
        while cells and not cells[-1]:
            cells.pop()
        if not cells:
            return None
        # One length test and one search for the whole row (a search per cell cost more
        # than the rest of the checks); a row that fails one is checked cell by cell, in
        # order, for the first problem and its column.
        if max(map(len, cells)) <= self.cell_chars and not unstorable("".join(cells)):
            return TableRow(number=number, line=line, cells=cells)
        for index, cell in enumerate(cells, start=1):
            if len(cell) > self.cell_chars:
                message = f"This cell holds more than {self.cell_chars:,} characters."
                _refuse(number, index, message, line=line)
            # PostgreSQL stores no NUL character in text (nor a lone surrogate, which strict
            # decoding and the XML reader already refuse: this is the one rule, checked here).
            what = unstorable(cell)
            if what:
                _refuse(number, index, UNSTORABLE_CELL.format(what=what), line=line)
        return TableRow(number=number, line=line, cells=cells)
