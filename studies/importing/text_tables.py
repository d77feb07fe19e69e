"""Reading a text table (CSV, tab-separated, a markdown pipe table) and a JSONL file: the
encoding checked whole before any row is read, the delimiter the first line holds most
often, the rows streamed (no Django models)."""

import codecs
import csv
import io
import threading
from collections.abc import Iterator
from typing import BinaryIO

from core.user_input import MAX_JSON_DEPTH, UserInputError, json_read
from studies.importing.table_rows import (
    CHUNK_BYTES,
    Source,
    TableRow,
    _Bounds,
    _refuse,
    source_open,
    source_size,
)

DELIMITERS = (",", ";", "\t", "|")

NOT_UTF8 = 'The file is not UTF-8 text. Save it as "CSV UTF-8" and upload it again.'


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
