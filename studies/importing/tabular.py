"""Reading a table (CSV, tab-separated, a markdown pipe table, or Excel) into rows of text.

The one reader behind both imports (test cases and worksheets). It imports nothing from
Django's models: it takes the file's name and its bytes (or the path of the file on disk,
read as a stream: a large file is never held in memory) and returns ``TableRow``s, or raises
``TableError`` listing ``TableProblem``s with the row and column they are about.

- **Text** (``.csv``, ``.txt``, ``.tsv``, ``.md``): UTF-8 with or without a BOM, or UTF-16
  with a BOM. The delimiter is the one of ``,`` ``;`` tab ``|`` that the first line holds
  most often (outside quotes); quotes work as in any CSV. A markdown table's leading and
  trailing pipes and its ``|---|---|`` line are dropped.
- **Excel** (``.xlsx``): the first sheet whose name the caller prefers, else the first
  sheet; a cell holding a formula is refused at its cell (its saved value may be stale or
  missing), whole numbers read without ".0", dates as ISO text.

Every row keeps its number as a spreadsheet shows it (and, for text, the line it starts
on); blank rows are left out, cells are stripped, and line breaks in a cell become "\\n".
Every bound is the caller's, with defaults, and is checked before the work it bounds, so a
small file cannot cost minutes or gigabytes.
"""

import codecs
import csv
import io
import math
import os
import threading
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import BinaryIO, NoReturn, TypedDict, Unpack
from xml.parsers import expat

from core.user_input import MAX_JSON_DEPTH, UserInputError, json_read, unstorable
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

TEXT_EXTENSIONS = (".csv", ".txt", ".tsv", ".md")
EXCEL_EXTENSIONS = (".xlsx",)
DELIMITERS = (",", ";", "\t", "|")

NOT_UTF8 = 'The file is not UTF-8 text. Save it as "CSV UTF-8" and upload it again.'
UNSTORABLE_CELL = (
    "This cell holds {what}, which cannot be stored; remove it and upload the file again."
)
FORMULA_CELL = (
    "This cell holds a formula, which is not accepted: type the value itself (in Excel, "
    "copy the cell and paste it as values)."
)
MAX_FORMULA_PROBLEMS = 50
NOT_A_WORKBOOK = (
    "The file cannot be read as an Excel workbook (.xlsx). Save it from Excel as "
    "'Excel Workbook (.xlsx)' or export it as CSV UTF-8."
)

# Excel's own limits: a sheet cannot be larger, whatever its file declares.
EXCEL_ROWS = 1_048_576
EXCEL_COLUMNS = 16_384


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


def table_format(filename: str) -> str | None:
    """The kind of table a file name says: "text", "excel", or None (not one read here)."""
    name = filename.lower()
    if name.endswith(TEXT_EXTENSIONS):
        return "text"
    if name.endswith(EXCEL_EXTENSIONS):
        return "excel"
    return None


# A file's content: its bytes, or the path of the file on disk (read a chunk at a time).
Source = bytes | os.PathLike


def source_size(data: Source) -> int:
    return os.path.getsize(data) if isinstance(data, os.PathLike) else len(data)


def source_open(data: Source) -> BinaryIO:
    """A new binary stream over the content, from its start; the caller closes it."""
    return open(data, "rb") if isinstance(data, os.PathLike) else io.BytesIO(data)


class TableLimits(TypedDict, total=False):
    """``iter_table``'s optional arguments, for ``read_table`` to pass on."""

    sheet_names: Sequence[str]
    max_bytes: int
    max_rows: int
    max_columns: int
    max_cell_chars: int
    max_unpacked_bytes: int
    max_expanded_chars: int | None


def read_table(*, filename: str, data: Source, **limits: Unpack[TableLimits]) -> list[TableRow]:
    """The non-blank rows of a text or Excel file, as text; raises ``TableError``."""
    return list(iter_table(filename=filename, data=data, **limits))


def iter_table(
    *,
    filename: str,
    data: Source,
    sheet_names: Sequence[str] = (),
    max_bytes: int = MAX_BYTES,
    max_rows: int = MAX_ROWS,
    max_columns: int = MAX_COLUMNS,
    max_cell_chars: int = MAX_CELL_CHARS,
    max_unpacked_bytes: int = MAX_UNPACKED_BYTES,
    max_expanded_chars: int | None = MAX_EXPANDED_CHARS,
) -> Iterator[TableRow]:
    """``read_table``'s rows one at a time: a row is let go once the caller has read it.

    The checks of the whole file (its type, size, encoding, a workbook's archive) are made
    when this is called; a row's problem is raised when that row is reached.
    ``max_expanded_chars`` bounds the characters a workbook's cells show in all (None: as
    many as ``max_unpacked_bytes``).
    """
    kind = table_format(filename)
    if kind is None:
        extensions = ", ".join(TEXT_EXTENSIONS + EXCEL_EXTENSIONS)
        _refuse(None, None, f"'{filename}' is not a table file. Use one of {extensions}.")
    if source_size(data) > max_bytes:
        _refuse(None, None, f"The file is larger than {_size(max_bytes)}.")
    bounds = _Bounds(max_rows, max_columns, max_cell_chars)
    if kind == "text":
        return _read_text(data, bounds)
    expanded = max_unpacked_bytes if max_expanded_chars is None else max_expanded_chars
    _check_archive(data, max_unpacked_bytes, max_cell_chars, expanded)
    return _read_excel(data, bounds, sheet_names)


def _encoding(data: Source) -> str:
    """UTF-8 (a BOM or not) or UTF-16 with its BOM; anything else is refused with its line."""
    with source_open(data) as stream:
        start = stream.read(4)
        # UTF-32, or UTF-16 without its BOM (a NUL in the first two bytes), would read as
        # UTF-8.
        if start.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)) or b"\x00" in start[:2]:
            _refuse(None, None, NOT_UTF8, line=1)
        utf16 = start.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
        encoding = "utf-16" if utf16 else "utf-8-sig"
        # Checked whole, a chunk at a time, so that a file is refused before any row is
        # read; the text is dropped at once, and the rows are decoded again as they are read.
        decoder = codecs.getincrementaldecoder(encoding)()
        stream.seek(0)
        read = 0
        while True:
            chunk = stream.read(CHUNK_BYTES)
            pending = len(decoder.getstate()[0])
            try:
                decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as error:
                at = read - pending + error.start
                if utf16:
                    at -= at % 2
                _refuse(None, None, NOT_UTF8, line=_line_at(stream, encoding, at))
            read += len(chunk)
            if not chunk:
                return encoding


def _line_at(stream: BinaryIO, encoding: str, offset: int) -> int:
    """The line the byte at ``offset`` is on, counted in the text before it."""
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    stream.seek(0)
    lines, left = 1, offset
    while left > 0:
        chunk = stream.read(min(CHUNK_BYTES, left))
        if not chunk:
            break
        left -= len(chunk)
        lines += decoder.decode(chunk, final=left <= 0).count("\n")
    return lines


def text_lines(data: Source, *, newline: str | None = None) -> io.TextIOWrapper:
    """The file's lines, decoded as they are read: the text is never held whole.

    ``newline`` as for ``open``: None for universal newlines, "" for the csv module. The
    caller closes it (or lets it go: the stream closes with it).
    """
    encoding = _encoding(data)
    return io.TextIOWrapper(source_open(data), encoding=encoding, newline=newline)


def jsonl_records(
    data: Source, *, max_chars: int, max_depth: int = MAX_JSON_DEPTH
) -> Iterator[tuple[int, object]]:
    """Each non-blank line of a JSONL file as (line number, its JSON value).

    Decoded as the tables are (UTF-8, or UTF-16 with its BOM; a file that is neither raises
    ``TableError`` here, before any line is read) and read line by line by the one reader of
    user JSON; a line it refuses gives its ``UserInputError`` in place of the value, so the
    caller reports it in its own words and reads on.
    """
    return _jsonl_values(text_lines(data), max_chars, max_depth)


def _jsonl_values(lines, max_chars: int, max_depth: int) -> Iterator[tuple[int, object]]:
    with lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                yield number, json_read(line, max_chars=max_chars, max_depth=max_depth)
            except UserInputError as error:
                yield number, error


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


# --- Text ---------------------------------------------------------------------------------

# csv's field size limit is global to the process: it is raised only for the length of one
# row's read, under a lock, so that no field is refused for its size by csv itself; each cell's
# length is then checked against the caller's bound, with its row and column.
_FIELD_LIMIT = threading.Lock()


def _read_text(data: Source, bounds: _Bounds) -> Iterator[TableRow]:
    with text_lines(data) as lines:
        delimiter = _delimiter(lines)
    return _text_rows(text_lines(data, newline=""), delimiter, bounds, source_size(data))


def _next_row(reader, field_limit: int):
    """The reader's next row with csv's field limit raised, under the lock, for that row."""
    with _FIELD_LIMIT:
        previous = csv.field_size_limit(field_limit)
        try:
            return next(reader, None)
        finally:
            csv.field_size_limit(previous)


def _delimiter(lines: Iterator[str]) -> str:
    """The delimiter the first non-blank line holds most often, outside quotes; else ","."""
    first = next((line for line in lines if line.strip()), "")
    unquoted = "".join(first.split('"')[::2])
    delimiter = max(DELIMITERS, key=unquoted.count)
    return delimiter if unquoted.count(delimiter) else ","


def _text_rows(lines, delimiter: str, bounds: _Bounds, size: int) -> Iterator[TableRow]:
    with lines:
        yield from _text_rows_of(lines, delimiter, bounds, size)


def _text_rows_of(lines, delimiter: str, bounds: _Bounds, size: int) -> Iterator[TableRow]:
    reader = csv.reader(lines, delimiter=delimiter, strict=True)
    number = 0
    last_line = 0
    header_seen = rule_may_follow = False
    while True:
        try:
            # A field has at most as many characters as the file has bytes.
            cells = _next_row(reader, size + 1)
        except csv.Error as error:
            message = f"The CSV cannot be read ({error}); check the quotes in this row."
            _refuse(number + 1, None, message, line=last_line + 1)
        if cells is None:
            return
        number += 1
        first_line, last_line = last_line + 1, reader.line_num
        if delimiter == "|":
            cells = _markdown_cells(cells)
            if rule_may_follow and _is_rule_line(cells):
                rule_may_follow = False
                continue  # the |---|---| line under a markdown table's header
        row = bounds.row(number, first_line, cells)
        if row is not None:
            rule_may_follow = not header_seen
            header_seen = True
            yield row


def _markdown_cells(cells: list[str]) -> list[str]:
    """A markdown table's row without its outer pipes."""
    if cells and not cells[0].strip():
        cells = cells[1:]
    if cells and not cells[-1].strip():
        cells = cells[:-1]
    return cells


def _is_rule_line(cells: list[str]) -> bool:
    cores = [cell.strip().removeprefix(":").removesuffix(":") for cell in cells]
    return bool(cores) and all(core and set(core) == {"-"} for core in cores)


# --- Excel --------------------------------------------------------------------------------


def _unreadable() -> tuple[type[Exception], ...]:
    """What a damaged or hostile workbook makes openpyxl or zipfile raise (an except clause
    asks when an error comes: xml.etree is imported with openpyxl, not at start-up)."""
    from xml.etree.ElementTree import ParseError

    return (
        zipfile.BadZipFile,
        zlib.error,
        EOFError,
        OSError,
        KeyError,
        IndexError,
        ValueError,
        TypeError,
        AttributeError,
        ParseError,
        expat.ExpatError,
    )


def _read_excel(data: Source, bounds: _Bounds, sheet_names: Sequence[str]) -> Iterator[TableRow]:
    from openpyxl import load_workbook

    stream = source_open(data)
    try:
        # Not data_only: a formula cell is seen as a formula, and refused, rather than read as
        # the value some program last computed and saved (or, when none was saved, as empty).
        workbook = load_workbook(stream, read_only=True, data_only=False)
    except _unreadable():
        stream.close()
        _refuse(None, None, NOT_A_WORKBOOK)
    return _excel_rows(workbook, stream, bounds, sheet_names)


def _excel_rows(workbook, stream, bounds: _Bounds, sheet_names) -> Iterator[TableRow]:
    try:
        sheet = _sheet(workbook, sheet_names)
        # The size a sheet declares may be anything: read only the rows and cells it holds.
        sheet.reset_dimensions()
        formulas = []
        for number, cells in enumerate(sheet.iter_rows(), start=1):
            if not cells:
                continue  # a row missing from the file (Excel leaves blank rows out)
            values = [cell.value for cell in cells]
            # A row is as wide as its last cell, up to Excel's 16,384 columns: the empty
            # cells past the bound are counted in C rather than converted one by one.
            beyond = values[bounds.columns :]
            if beyond.count(None) == len(beyond):
                values = values[: bounds.columns]
            for column, cell in enumerate(cells[: len(values)], start=1):
                if cell.data_type == "f" and len(formulas) < MAX_FORMULA_PROBLEMS:
                    formulas.append(TableProblem(number, column, FORMULA_CELL))
            row = bounds.row(number, number, [_excel_text(value) for value in values])
            if row is not None:
                yield row
        if formulas:
            raise TableError(formulas)
    except _unreadable():
        _refuse(None, None, NOT_A_WORKBOOK)
    finally:
        workbook.close()
        stream.close()


def _sheet(workbook, preferred: Sequence[str]):
    sheets = workbook.worksheets
    if not sheets:
        _refuse(None, None, "The workbook has no sheet with cells.")
    by_name = {sheet.title.strip().lower(): sheet for sheet in reversed(sheets)}
    for name in preferred:
        if name.strip().lower() in by_name:
            return by_name[name.strip().lower()]
    return sheets[0]


def _check_archive(data: Source, max_unpacked: int, max_cell_chars: int, max_expanded: int) -> None:
    """Refuse a zip bomb from its directory, any row too wide to be a spreadsheet's, a
    shared text longer than a cell may hold, and cells that show more text in all than
    ``max_expanded`` characters.

    zipfile stops reading an entry at the size its directory gives, so the directory bounds
    the work; each part is then streamed through expat once, without building a tree,
    because openpyxl builds each row whole in memory before it hands it over. A shared text
    is stored once and may be shown by every cell: one of megabytes in a small file would be
    copied into each row read before the row's bound refused it, and one a cell may hold,
    shown by every row, costs each row a copy of it. So the scan counts, for each shared
    text, the cells that show it, and adds its length once per cell: the text the rows
    would hold in all, known before the first row is read.
    """
    scan = _PartScan(max_cell_chars, max_expanded)
    try:
        with source_open(data) as stream, zipfile.ZipFile(stream) as archive:
            entries = archive.infolist()
            unpacked = sum(entry.file_size for entry in entries)
            if unpacked > max_unpacked:
                _refuse(
                    None,
                    None,
                    f"The workbook unpacks to more than {_size(max_unpacked)}; save it again "
                    "from Excel, or export it as CSV UTF-8.",
                )
            # The shared texts first: one longer than a cell may hold is refused before
            # the sheets' rows are scanned (the count does not depend on the order).
            shared_first = sorted(
                entries, key=lambda e: not e.filename.lower().endswith("sharedstrings.xml")
            )
            for entry in shared_first:
                with archive.open(entry) as part:
                    _scan_part(part, scan)
    except _unreadable():
        _refuse(None, None, NOT_A_WORKBOOK)
    except _SharedTextTooLong:
        _refuse(
            None,
            None,
            f"The workbook holds a text of more than {max_cell_chars:,} characters, more "
            "than a cell may hold.",
        )
    except _TooMuchText:
        pass
    if scan.expanded_chars() > max_expanded:
        _refuse(
            None,
            None,
            f"The workbook's cells show more than {max_expanded:,} characters in all (a text "
            "stored once counts in every cell that shows it); save it again from Excel, or "
            "export it as CSV UTF-8.",
        )


class _Impossible(Exception):
    """A part no spreadsheet program writes: a row past Excel's last, too wide, a DTD."""


class _SharedTextTooLong(Exception):
    """A shared string (``<si>`` of sharedStrings.xml) longer than a cell may hold."""


class _TooMuchText(Exception):
    """The cells show more text in all than the bound: the scan need read no further."""


class _PartScan:
    """expat's handlers for the parts of a workbook: no DTD (entity tricks), rows and
    columns within Excel's limits, no shared text (``<si>``) longer than a cell may hold;
    and what the cells show in all (``expanded_chars``).

    A cell's own characters (a number, an inline text) are counted where they stand; a cell
    of type "s" shows the shared text its ``<v>`` numbers, counted once per such cell. The
    shared texts' lengths are kept by position (the largest where two parts hold some), so
    the part order in the archive does not matter.
    """

    def __init__(self, max_cell_chars: int, max_expanded: int):
        self.max_cell_chars = max_cell_chars
        self.max_expanded = max_expanded
        self.cells = 0
        self.shared: int | None = None  # characters of the shared text being read, if in one
        self.shared_lengths: list[int] = []  # of this part's shared texts, in order
        self.lengths: list[int] = []  # of every part's, the largest at each position
        self.in_cell = False
        self.in_shared_cell = False  # in a cell that shows a shared text
        self.reference: list[str] | None = None  # the text of such a cell's <v>
        self.references: dict[int, int] = {}  # shared text's position -> cells showing it
        self.chars = 0  # the cells' own characters
        self.shown = 0  # shared texts' characters counted so far, for the early stop

    def part_start(self) -> None:
        self.cells, self.shared, self.shared_lengths = 0, None, []
        self.in_cell = self.in_shared_cell = False
        self.reference = None

    def part_end(self) -> None:
        lengths = self.shared_lengths
        self.lengths = [max(pair) for pair in zip(self.lengths, lengths, strict=False)] + (
            self.lengths[len(lengths) :] or lengths[len(self.lengths) :]
        )

    def start(self, name, attributes):
        local = name.rpartition("}")[2]
        if local == "si":
            self.shared = 0
        elif local == "row":
            self.cells = 0
            # openpyxl fills the gap up to a row's number with blank rows, one by one.
            number = attributes.get("r", "")
            if number.isascii() and number.isdigit() and int(number) > EXCEL_ROWS:
                raise _Impossible
        elif local == "c":
            self.cells += 1
            if self.cells > EXCEL_COLUMNS:
                raise _Impossible
            self.in_cell = True
            self.in_shared_cell = attributes.get("t") == "s"
        elif local == "v" and self.in_shared_cell:
            self.reference = []

    def end(self, name):
        local = name.rpartition("}")[2]
        if local == "si":
            self.shared_lengths.append(self.shared or 0)
            self.shared = None
        elif local == "v" and self.reference is not None:
            position = "".join(self.reference).strip()
            if position.isascii() and position.isdigit() and len(position) < 10:
                index = int(position)
                self.references[index] = self.references.get(index, 0) + 1
                # The shared texts are usually scanned first: stop as soon as it is too much.
                if index < len(self.lengths):
                    self.shown += self.lengths[index]
                    if self.chars + self.shown > self.max_expanded:
                        raise _TooMuchText
            self.reference = None
        elif local == "c":
            self.in_cell = self.in_shared_cell = False

    def text(self, data):
        if self.shared is not None:
            self.shared += len(data)
            if self.shared > self.max_cell_chars:
                raise _SharedTextTooLong
        elif self.reference is not None:
            if sum(map(len, self.reference)) < 16:  # a position has a few digits
                self.reference.append(data)
        elif self.in_cell:
            self.chars += len(data)

    def expanded_chars(self) -> int:
        lengths = self.lengths
        shown = sum(
            count * lengths[index]
            for index, count in self.references.items()
            if index < len(lengths)
        )
        return self.chars + shown

    @staticmethod
    def doctype(*_args):
        raise _Impossible


def _scan_part(part, scan: _PartScan) -> None:
    """Stream one part through ``scan``; refuse the workbook if it finds what no
    spreadsheet program writes."""
    parser = expat.ParserCreate(namespace_separator="}")
    parser.buffer_text = True  # a long text comes in few pieces
    parser.StartElementHandler = scan.start
    parser.EndElementHandler = scan.end
    parser.CharacterDataHandler = scan.text
    parser.StartDoctypeDeclHandler = scan.doctype
    scan.part_start()
    try:
        while chunk := part.read(64 * 1024):
            parser.Parse(chunk, False)
        parser.Parse(b"", True)
    except expat.ExpatError:
        return  # not XML (an image, say): openpyxl reads only the parts it needs
    except _Impossible:
        _refuse(None, None, NOT_A_WORKBOOK)
    finally:
        scan.part_end()


def _excel_text(value) -> str:
    """A cell as Excel shows it: 5.0 as "5", TRUE, dates as ISO text."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            return str(int(value))
        return repr(value)
    if isinstance(value, datetime):
        if value.time() == time(0):
            return value.date().isoformat()
        return value.isoformat()
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return str(value)
    return str(value)
