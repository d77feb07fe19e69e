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

This module is the entry point; the rows, their bounds and problems are ``table_rows``, the
readers ``text_tables`` (and JSONL) and ``excel_tables``.
"""

from collections.abc import Iterator, Sequence
from typing import TypedDict, Unpack

from studies.importing.excel_tables import _check_archive, _read_excel
from studies.importing.table_rows import (
    CHUNK_BYTES,
    MAX_BYTES,
    MAX_CELL_CHARS,
    MAX_COLUMNS,
    MAX_EXPANDED_CHARS,
    MAX_ROWS,
    MAX_UNPACKED_BYTES,
    Source,
    TableError,
    TableProblem,
    TableRow,
    _Bounds,
    _refuse,
    _size,
    column_letter,
    problem_text,
    source_open,
    source_size,
)
from studies.importing.text_tables import _read_text, jsonl_records, text_lines

# The reader's public names, wherever they are defined (callers use them as ``tabular.X``).
__all__ = [
    "CHUNK_BYTES",
    "MAX_BYTES",
    "MAX_CELL_CHARS",
    "MAX_COLUMNS",
    "MAX_ROWS",
    "MAX_UNPACKED_BYTES",
    "Source",
    "TableError",
    "TableLimits",
    "TableProblem",
    "TableRow",
    "column_letter",
    "iter_table",
    "jsonl_records",
    "problem_text",
    "read_table",
    "source_open",
    "source_size",
    "table_format",
    "text_lines",
]

TEXT_EXTENSIONS = (".csv", ".txt", ".tsv", ".md")
EXCEL_EXTENSIONS = (".xlsx",)


def table_format(filename: str) -> str | None:
    """The kind of table a file name says: "text", "excel", or None (not one read here)."""
    name = filename.lower()
    if name.endswith(TEXT_EXTENSIONS):
        return "text"
    if name.endswith(EXCEL_EXTENSIONS):
        return "excel"
    return None


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
