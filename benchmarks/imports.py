"""Hostile table files: how long the reader takes, and its peak memory, before it answers.

Run: .venv/bin/python benchmarks/imports.py [--repeat 5]
Every case must answer (rows read, or a clear refusal) in seconds and in flat memory,
whatever the file declares. Prints one line per case: the median and spread of the reader's
seconds over the runs, and the peak memory Python traced in one more run.
"""

import argparse
import contextlib
import io
import sys
import tracemalloc
import zipfile
from functools import partial
from pathlib import Path

from openpyxl import Workbook

# The repository first on the path (the virtual environment may point at another checkout).
sys.path[0] = str(Path(__file__).resolve().parents[1])

from benchmarks.report import add_repeat, reported, spread, timed  # noqa: E402
from studies.importing.table_rows import TableError  # noqa: E402
from studies.importing.tabular import read_table  # noqa: E402


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


def shared_text_workbook(text: str, rows: int) -> bytes:
    """``rows`` rows, each one cell showing one shared ``text`` (stored once, as Excel does)."""
    sst = (
        '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="1" '
        f'uniqueCount="1"><si><t>{text}</t></si></sst>'
    )
    cells = "".join(
        f'<row r="{n}"><c r="A{n}" t="s"><v>0</v></c></row>' for n in range(1, rows + 1)
    )
    parts = {
        "xl/worksheets/sheet1.xml": lambda x: x.replace("</sheetData>", cells + "</sheetData>"),
        "[Content_Types].xml": lambda x: x.replace(
            "</Types>",
            '<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
            'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>',
        ),
        "xl/_rels/workbook.xml.rels": lambda x: x.replace(
            "</Relationships>",
            '<Relationship Id="rIdShared" Type="http://schemas.openxmlformats.org/'
            'officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/>'
            "</Relationships>",
        ),
    }
    source = zipfile.ZipFile(io.BytesIO(workbook([])))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for entry in source.infolist():
            content = source.read(entry).decode()
            target.writestr(entry.filename, parts.get(entry.filename, lambda x: x)(content))
        target.writestr("xl/sharedStrings.xml", sst)
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
    for chars in (4_000_000, 150_000):
        yield (
            f"xlsx: 150,000 rows show one {chars:,}-char text",
            "w.xlsx",
            shared_text_workbook("x" * chars, 150_000),
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


def read(filename: str, data: bytes) -> str:
    """What the reader answers: rows read, or its refusal."""
    try:
        return f"{len(read_table(filename=filename, data=data, max_bytes=len(data)))} rows"
    except TableError as error:
        return f"refused: {error.problems[0].message[:50]}"


def measure(filename: str, data: bytes, runs: int) -> tuple[str, list[float], int]:
    outcome = read(filename, data)
    seconds = timed(partial(read, filename, data), runs)
    tracemalloc.start()
    try:
        with contextlib.suppress(TableError):
            read_table(filename=filename, data=data, max_bytes=len(data))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return outcome, seconds, peak


def main(runs: int) -> None:
    print(f"{'case':48} {'file':>9} {'seconds':>26} {'peak MB':>8}  outcome")
    for name, filename, data in cases():
        outcome, seconds, peak = measure(filename, data, runs)
        print(
            f"{name:48} {len(data) / 2**20:8.2f}M {spread(seconds):>26} {peak / 2**20:8.1f}  "
            f"{outcome}",
            flush=True,
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_repeat(parser)
    args = parser.parse_args()
    with reported("Hostile table files: the reader's answer, time and memory", runs=args.repeat):
        main(args.repeat)
