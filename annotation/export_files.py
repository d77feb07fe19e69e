"""Writing rows as files: CSV text in chunks of whole lines, and an Excel worksheet in
openpyxl's write-only mode (rows go to disk as they come). Every text cell is neutralised
or typed as text, so no cell is ever a spreadsheet formula."""

import csv
from collections.abc import Iterable, Iterator
from typing import IO, Any

from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter

from .worksheets.columns import FORMULA_START, neutralise


class _Echo:
    """A file-like object whose write returns the line, for streaming csv.writer output."""

    def write(self, value: str) -> str:
        return value


# CSV text is handed on in chunks of about this many characters: one write each to the
# response or the zip member, not one per line (a large study's long table has millions).
CHUNK_CHARACTERS = 64 * 1024


def csv_lines(rows: Iterable[list], *, bom: bool = False) -> Iterator[str]:
    """The rows as CSV text, in chunks of whole lines."""
    writer = csv.writer(_Echo())
    lines, size = (["\ufeff"], 1) if bom else ([], 0)
    for row in rows:
        line = writer.writerow([neutralise(value) for value in row])
        lines.append(line)
        size += len(line)
        if size >= CHUNK_CHARACTERS:
            yield "".join(lines)
            lines, size = [], 0
    if lines:
        yield "".join(lines)


# Column widths (in characters) of the Excel worksheet; other columns fit their heading.
XLSX_WIDTHS = {"TC-ID": 10, "Response": 10, "Confidence": 12, "Notes": 60, "System": 18}


def xlsx_write(rows: Iterable[list], file: IO[bytes], *, title: str = "Worksheet") -> None:
    """Write rows to an .xlsx file in write-only mode (rows go to disk as they come).

    The first row is the header: bold, frozen, and setting each column's width. Text is
    stored with Excel's text type, so no cell is ever a formula and none needs a visible
    leading quote (see ``_xlsx_cell``).
    """
    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet(title)
    sheet.freeze_panes = "A2"
    bold = Font(bold=True)
    rows = iter(rows)
    header = next(rows, None)
    if header is None:
        workbook.save(file)
        return
    for number, heading in enumerate(header, start=1):
        width = XLSX_WIDTHS.get(str(heading), max(10, len(str(heading)) + 3))
        sheet.column_dimensions[get_column_letter(number)].width = width
    cells = [_xlsx_cell(sheet, str(value)) for value in header]
    for cell in cells:
        if cell is not None:
            cell.font = bold
    sheet.append(cells)
    for row in rows:
        sheet.append([_xlsx_cell(sheet, value) for value in row])
    workbook.save(file)


def _xlsx_cell(sheet, value: Any) -> Any:
    """A value as Excel stores it: text typed as text, never a formula.

    openpyxl would store a string starting with "=" as a formula; the cell is typed as an
    inline string instead, and one a spreadsheet would read as a formula when edited gets
    Excel's hidden quote prefix (a style, not a character in the cell).
    """
    if value == "" or value is None:
        return None
    if not isinstance(value, str):
        return value
    cell = WriteOnlyCell(sheet, value=ILLEGAL_CHARACTERS_RE.sub("", value))
    cell.data_type = "s"
    if FORMULA_START.match(cell.value):
        cell.quotePrefix = True
    return cell
