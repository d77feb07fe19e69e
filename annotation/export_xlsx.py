"""Writing rows as an Excel worksheet. Every text cell is typed as text, so no cell is ever
a spreadsheet formula.

openpyxl builds an object and an XML element for every cell, which costs about half a
second per 10,000 cells: a large study's worksheet (100,000 rows) took close to a minute.
So openpyxl writes only the header row (``_openpyxl_write``: the workbook, its styles and
the sheet around its rows), and the data rows' XML is written here, cell for cell as
openpyxl writes it (tests/annotation/test_export_golden.py compares the two), to a
temporary file as the rows come: memory stays flat.

Imported by the code that writes a worksheet, inside the function: openpyxl costs about 30 MB
and half a second, which a web process that never writes one does not pay
(tests/test_lean_imports.py)."""

import io
import re
import shutil
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from typing import IO, Any
from xml.etree import ElementTree

from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.cell._writer import etree_write_cell
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter

from .worksheets.columns import FORMULA_START

# Column widths (in characters) of the Excel worksheet; other columns fit their heading.
XLSX_WIDTHS = {"TC-ID": 10, "Response": 10, "Confidence": 12, "Notes": 60, "System": 18}


def xlsx_write(rows: Iterable[list], file: IO[bytes], *, title: str = "Worksheet") -> None:
    """Write rows to an .xlsx file, the data rows streamed through a temporary file.

    The first row is the header: bold, frozen, and setting each column's width. Text is
    stored with Excel's text type, so no cell is ever a formula and none needs a visible
    leading quote (see ``_xlsx_cell``).
    """
    rows = iter(rows)
    header = next(rows, None)
    if header is None:
        _openpyxl_write([], file, title=title)
        return
    with tempfile.TemporaryFile() as body:
        quoted = _write_rows(rows, body)
        # The quote prefix is a style: the workbook has it once a cell uses it, so the
        # template has a cell with it (row 2, dropped) exactly when the data does.
        template = io.BytesIO()
        _openpyxl_write([header, *([["="]] if quoted else [])], template, title=title)
        with (
            zipfile.ZipFile(template) as source,
            zipfile.ZipFile(file, "w", zipfile.ZIP_DEFLATED) as target,
        ):
            for info in source.infolist():
                data = source.read(info)
                if not info.filename.startswith("xl/worksheets/sheet"):
                    target.writestr(info.filename, data)
                    continue
                head, rest = data.split(b"</row>", 1)
                tail = rest[rest.index(b"</sheetData>") :]
                with target.open(info.filename, "w", force_zip64=True) as sheet:
                    sheet.write(head + b"</row>")
                    body.seek(0)
                    shutil.copyfileobj(body, sheet, 1 << 20)
                    sheet.write(tail)


def _openpyxl_write(rows: Iterable[list], file: IO[bytes], *, title: str) -> None:
    """The rows as openpyxl writes them in write-only mode: the header and its styles."""
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


# The data rows' style for a quoted text cell: the header's bold font is style 1, the
# quote prefix the next one registered (checked against openpyxl by the golden test).
_QUOTED = ' s="2"'
_ESCAPES = re.compile(r"[&<>]")
_ESCAPE = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}.__getitem__
ROWS_PER_WRITE = 500


def _write_rows(rows: Iterator[list], file: IO[bytes]) -> bool:
    """The data rows' XML (rows 2, 3, ...), as openpyxl writes them; whether a cell is
    quoted (the quote prefix style is used)."""
    letters: list[str] = []
    quoted = False
    parts: list[str] = []
    for number, row in enumerate(rows, start=2):
        while len(letters) < len(row):
            letters.append(get_column_letter(len(letters) + 1))
        parts.append(f'<row r="{number}">')
        for column, value in enumerate(row):
            if value is None or value == "":
                continue
            kind = value.__class__
            if kind is int or (kind is float and value - value == 0):
                parts.append(f'<c r="{letters[column]}{number}" t="n"><v>{value:.16g}</v></c>')
            elif isinstance(value, str):
                # As openpyxl stores text: illegal characters out, at most 32,767 of them.
                text = ILLEGAL_CHARACTERS_RE.sub("", str(value))[:32767]
                quote = ""
                if FORMULA_START.match(text):
                    quote, quoted = _QUOTED, True
                if not text:
                    parts.append(f'<c r="{letters[column]}{number}" t="inlineStr" />')
                    continue
                stripped = text.strip()
                space = ' xml:space="preserve"' if stripped and stripped != text else ""
                if "&" in text or "<" in text or ">" in text:
                    text = _ESCAPES.sub(lambda m: _ESCAPE(m.group()), text)
                parts.append(
                    f'<c r="{letters[column]}{number}"{quote} t="inlineStr"><is><t{space}>'
                    f"{text}</t></is></c>"
                )
            else:
                parts.append(_other_cell(value, f"{letters[column]}{number}"))
        parts.append("</row>")
        if number % ROWS_PER_WRITE == 0:
            file.write("".join(parts).encode("utf-8"))
            parts = []
    file.write("".join(parts).encode("utf-8"))
    return quoted


class _Collect:
    def write(self, element) -> None:
        self.element = element


def _other_cell(value: Any, reference: str) -> str:
    """A cell of another type (a bool, a Decimal, ...) as openpyxl writes it."""
    workbook = Workbook(write_only=True)
    cell = WriteOnlyCell(workbook.create_sheet(), value=_xlsx_cell(None, value))
    if cell.has_style:
        raise TypeError(f"A worksheet cell cannot hold {value!r}.")
    collect = _Collect()
    etree_write_cell(collect, None, cell)
    collect.element.set("r", reference)
    return ElementTree.tostring(collect.element, encoding="unicode")
