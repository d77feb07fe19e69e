"""Reading an Excel workbook (.xlsx): its archive and parts checked by one streaming scan
before any row is read (a zip bomb, a row wider than Excel's, a shared text shown by every
cell), then the preferred sheet's rows as text, a formula refused at its cell (no Django
models; openpyxl imported when a workbook is read)."""

import math
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from datetime import date, datetime, time, timedelta
from xml.parsers import expat

from studies.importing.table_rows import (
    Source,
    TableError,
    TableProblem,
    TableRow,
    _Bounds,
    _refuse,
    _size,
    source_open,
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
