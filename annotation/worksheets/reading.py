"""Reading a worksheet file (.csv or .xlsx) into rows of text, with clear problems."""

import csv
import io
import zipfile
from dataclasses import dataclass

from .columns import MAX_BYTES, MAX_ROWS


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
