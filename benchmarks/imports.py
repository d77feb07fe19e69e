"""Hostile table files: how long the reader takes, and its peak memory, before it answers.

Run: .venv/bin/python benchmarks/imports.py
Every case must answer (rows read, or a clear refusal) in seconds and in flat memory,
whatever the file declares. Prints one line per case.
"""

import contextlib
import io
import time
import tracemalloc
import zipfile

from openpyxl import Workbook

from studies.importing.tabular import TableError, read_table


def workbook(rows) -> bytes:
    book = Workbook()
    for row in rows:
        book.active.append(row)
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def rewrite_sheet(data: bytes, rewrite) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(data))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for entry in source.infolist():
            content = source.read(entry)
            if entry.filename == "xl/worksheets/sheet1.xml":
                content = rewrite(content.decode()).encode()
            target.writestr(entry.filename, content)
    return buffer.getvalue()


def cases():
    yield "csv: 10 million blank lines", "t.csv", b"a,b\n" + b"\n" * 10_000_000
    yield "csv: 2 million rows of empty cells", "t.csv", b"a,b\n" + b",,,,\n" * 2_000_000
    yield "csv: one row of 10 million cells", "t.csv", b"a,b\n" + b"," * 10_000_000
    small = workbook([["a", "b"], ["1", "2"]])
    yield (
        "xlsx: declares A1:XFD1048576",
        "w.xlsx",
        rewrite_sheet(
            small,
            lambda x: x.replace('<dimension ref="A1:B2"/>', '<dimension ref="A1:XFD1048576"/>'),
        ),
    )
    yield (
        "xlsx: a cell in row 1,048,576",
        "w.xlsx",
        rewrite_sheet(
            small,
            lambda x: x.replace(
                "</sheetData>",
                '<row r="1048576"><c r="A1048576" t="n"><v>1</v></c></row></sheetData>',
            ),
        ),
    )
    row = '<row><c t="n"><v>1</v></c></row>'
    yield (
        "xlsx: zip bomb (80 MB unpacked)",
        "w.xlsx",
        rewrite_sheet(
            small,
            lambda x: x.replace("</sheetData>", row * (80 * 2**20 // len(row)) + "</sheetData>"),
        ),
    )


def measure(filename: str, data: bytes) -> tuple[str, float, int]:
    started = time.perf_counter()
    try:
        outcome = f"{len(read_table(filename=filename, data=data, max_bytes=len(data)))} rows"
    except TableError as error:
        outcome = f"refused: {error.problems[0].message[:50]}"
    seconds = time.perf_counter() - started
    tracemalloc.start()
    try:
        with contextlib.suppress(TableError):
            read_table(filename=filename, data=data, max_bytes=len(data))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return outcome, seconds, peak


def main():
    print(f"{'case':40} {'file':>9} {'seconds':>8} {'peak MB':>8}  outcome")
    for name, filename, data in cases():
        outcome, seconds, peak = measure(filename, data)
        print(f"{name:40} {len(data) / 2**20:8.2f}M {seconds:8.2f} {peak / 2**20:8.1f}  {outcome}")


if __name__ == "__main__":
    main()
