"""Writing rows as an Excel worksheet in openpyxl's write-only mode (rows go to disk as they
come). Every text cell is typed as text, so no cell is ever a spreadsheet formula.

Imported by the code that writes a worksheet, inside the function: openpyxl costs about 30 MB
and half a second, which a web process that never writes one does not pay
(tests/test_lean_imports.py)."""

from collections.abc import Iterable
from typing import IO, Any

from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter

from .worksheets.columns import FORMULA_START

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
