"""The one table reader: delimiters, encodings, sheets, cell text, bounds, hostile files."""

import io
import zipfile
from datetime import date, datetime

import pytest
from openpyxl import Workbook

from studies.errors import ApplicationError
from studies.importing.table_rows import TableError, TableProblem, TableRow, column_letter
from studies.importing.tabular import read_table


def rows_of(filename: str, data: bytes, **bounds) -> list[tuple[int, list[str]]]:
    return [(row.number, row.cells) for row in read_table(filename=filename, data=data, **bounds)]


def refusal(filename: str, data: bytes, **bounds) -> TableProblem:
    with pytest.raises(TableError) as caught:
        read_table(filename=filename, data=data, **bounds)
    assert isinstance(caught.value, ApplicationError)
    [problem] = caught.value.problems
    return problem


def xlsx(sheets: dict[str, list[list]]) -> bytes:
    workbook = Workbook()
    workbook.remove(workbook.active)
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for row in rows:
            sheet.append(row)
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def with_sheet_xml(data: bytes, rewrite, part: str = "xl/worksheets/sheet1.xml") -> bytes:
    """The workbook with its first sheet's XML (or another ``part``) passed through
    ``rewrite``."""
    source = zipfile.ZipFile(io.BytesIO(data))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for entry in source.infolist():
            content = source.read(entry)
            if entry.filename == part:
                content = rewrite(content.decode()).encode()
            target.writestr(entry.filename, content)
    return buffer.getvalue()


EXPECTED = [(1, ["id", "prompt"]), (2, ["TC-1", "Why?"])]


# --- Delimiters -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "text"),
    [
        ("t.csv", "id,prompt\nTC-1,Why?\n"),
        ("t.csv", "id;prompt\r\nTC-1;Why?\r\n"),
        ("t.tsv", "id\tprompt\nTC-1\tWhy?\n"),
        ("t.txt", "id|prompt\nTC-1|Why?\n"),
        ("t.md", "| id | prompt |\n|----|:------:|\n| TC-1 | Why? |\n"),
        ("t.md", "id   | prompt\n-----|-------\nTC-1 | Why?\n"),
    ],
    ids=["comma", "semicolon", "tab", "pipe", "markdown", "markdown without outer pipes"],
)
def test_the_delimiter_is_found_on_the_header_line(filename, text):
    # The markdown rule line is left out, but still counts as a row of the file.
    second = 3 if filename == "t.md" else 2
    assert rows_of(filename, text.encode()) == [(1, ["id", "prompt"]), (second, ["TC-1", "Why?"])]


def test_a_delimiter_inside_quotes_does_not_count_and_cells_keep_it():
    data = b'id;"a, b, c";prompt\nTC-1;"x, y";P\n'
    assert rows_of("t.csv", data) == [(1, ["id", "a, b, c", "prompt"]), (2, ["TC-1", "x, y", "P"])]


def test_a_line_of_dashes_further_down_a_markdown_table_is_a_row():
    data = b"| a | b |\n|---|---|\n| - | - |\n"
    assert rows_of("t.md", data) == [(1, ["a", "b"]), (3, ["-", "-"])]


def test_quoted_cells_over_several_lines_keep_row_and_line_numbers():
    data = b'id,prompt\n\nTC-1,"one\r\ntwo"\nTC-2,  padded  \n'
    rows = read_table(filename="t.csv", data=data)
    assert [(r.number, r.line, r.cells) for r in rows] == [
        (1, 1, ["id", "prompt"]),
        (3, 3, ["TC-1", "one\ntwo"]),
        (4, 5, ["TC-2", "padded"]),
    ]


def test_an_unclosed_quote_is_refused_with_the_row_it_starts_on():
    problem = refusal("t.csv", b'id,prompt\nTC-1,"never closed\nTC-2,P\n')
    assert (problem.row, problem.line) == (2, 2)
    assert "check the quotes" in problem.message


# --- Encodings --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "encoded",
    [
        b"id,prompt\nTC-1,Why?\n",
        "\ufeffid,prompt\nTC-1,Why?\n".encode(),
        "id,prompt\nTC-1,Why?\n".encode("utf-16"),  # with its BOM
        "\ufeffid,prompt\nTC-1,Why?\n".encode("utf-16-be"),
    ],
    ids=["utf-8", "utf-8 with BOM", "utf-16 le", "utf-16 be"],
)
def test_utf8_and_utf16_with_a_bom_are_read(encoded):
    assert rows_of("t.csv", encoded) == EXPECTED


@pytest.mark.parametrize(
    ("encoded", "line"),
    [
        ("id,prompt\nTC-1,Why?\nTC-2,Caf\u00e9\n".encode("latin-1"), 3),
        ("id,prompt\nTC-1,Why?\n".encode("utf-16-le"), 1),  # no BOM: not UTF-8
        ("id,prompt\nTC-1,Why?\n".encode("utf-32"), 1),
    ],
    ids=["latin-1", "utf-16 without BOM", "utf-32"],
)
def test_other_encodings_are_refused_with_the_line(encoded, line):
    problem = refusal("t.csv", encoded)
    assert problem.line == line
    assert problem.message == (
        'The file is not UTF-8 text. Save it as "CSV UTF-8" and upload it again.'
    )
    assert str(problem).startswith(f"Line {line}: The file is not UTF-8 text.")


# --- Excel ------------------------------------------------------------------------------


def test_the_first_preferred_sheet_is_read_else_the_first_sheet():
    data = xlsx({"Notes": [["read me first"]], "Worksheet": [["id"], ["TC-1"]]})
    assert rows_of("w.xlsx", data, sheet_names=["worksheet"]) == [(1, ["id"]), (2, ["TC-1"])]
    assert rows_of("w.xlsx", data, sheet_names=["Other", "Worksheet"])[0] == (1, ["id"])
    assert rows_of("w.xlsx", data) == [(1, ["read me first"])]
    assert rows_of("w.xlsx", data, sheet_names=["Missing"]) == [(1, ["read me first"])]


def test_excel_cells_read_as_excel_shows_them():
    data = xlsx(
        {"S": [[5.0, 2.5, 7, True, date(2024, 3, 1), datetime(2024, 3, 1, 13, 30), "  x  "]]}
    )
    assert rows_of("w.xlsx", data) == [
        (1, ["5", "2.5", "7", "TRUE", "2024-03-01", "2024-03-01T13:30:00", "x"])
    ]


def test_a_formula_is_refused_at_its_cell_with_or_without_a_saved_value():
    data = with_sheet_xml(
        xlsx({"S": [[2, 3, None]]}),
        lambda xml: xml.replace(
            '<c r="B1" t="n"><v>3</v></c>',
            (
                '<c r="B1" t="n"><v>3</v></c><c r="C1"><f>A1+B1</f><v>5</v></c>'
                '<c r="D1"><f>SUM(A1:B1)</f></c>'
            ),
        ),  # fmt: skip
    )
    with pytest.raises(TableError) as caught:
        rows_of("w.xlsx", data)
    problems = caught.value.problems
    assert [(p.row, p.column) for p in problems] == [(1, 3), (1, 4)]
    assert all("a formula, which is not accepted" in p.message for p in problems)
    assert str(problems[0]).startswith("Row 1, column C: ")


def test_text_that_starts_with_an_equals_sign_is_read_as_text():
    workbook = Workbook()
    cell = workbook.active.cell(row=1, column=1, value="=not a formula")
    cell.data_type = "s"  # typed as text, as the worksheet export writes it
    workbook.active.cell(row=1, column=2, value=1)
    buffer = io.BytesIO()
    workbook.save(buffer)
    assert rows_of("w.xlsx", buffer.getvalue()) == [(1, ["=not a formula", "1"])]


def test_blank_rows_and_trailing_empty_cells_are_left_out_with_numbers_kept():
    data = xlsx({"S": [["a", None, "c", None, None], [], [None, None], ["d"]]})
    assert rows_of("w.xlsx", data) == [(1, ["a", "", "c"]), (4, ["d"])]


@pytest.mark.parametrize(
    "data",
    [
        b"not a zip at all",
        b"PK\x03\x04 broken",
        xlsx({"S": [["a"]]})[:-200],  # cut short
        with_sheet_xml(xlsx({"S": [["a"]]}), lambda xml: xml[:-40]),  # broken XML
    ],
    ids=["not a zip", "broken zip", "truncated", "broken sheet"],
)
def test_a_corrupt_workbook_is_a_clear_problem(data):
    problem = refusal("w.xlsx", data)
    assert problem.message.startswith("The file cannot be read as an Excel workbook (.xlsx).")


def test_a_zip_that_is_not_a_workbook_is_a_clear_problem():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("readme.txt", "hello")
    assert "Excel workbook" in refusal("w.xlsx", buffer.getvalue()).message


# --- Bounds -----------------------------------------------------------------------------


def test_each_bound_is_named_with_the_row_and_column_it_is_exceeded_on():
    data = b"a,b,c\n1,2,3\n4,5,six\n"
    assert refusal("t.csv", data, max_bytes=10).message == "The file is larger than 10 bytes."
    assert refusal("t.csv", data * 100_000, max_bytes=1024 * 1024).message == (
        "The file is larger than 1 MB."
    )
    rows = refusal("t.csv", data, max_rows=2)
    assert (rows.row, rows.column, rows.message) == (3, None, "The file has more than 2 rows.")
    columns = refusal("t.csv", data, max_columns=2)
    assert (columns.row, columns.column) == (1, 3)
    assert columns.message == "This row has more than 2 columns."
    cell = refusal("t.csv", data, max_cell_chars=2)
    assert (cell.row, cell.column, str(cell)) == (
        3, 3, "Row 3, column C: This cell holds more than 2 characters."
    )  # fmt: skip


def test_a_row_with_two_problems_is_refused_at_the_first_cell_that_has_one():
    # A row is tested whole first; one that fails is read cell by cell, in order.
    nul_then_long = b"a,b,c\n1,x\x00,long\n"
    problem = refusal("t.csv", nul_then_long, max_cell_chars=3)
    assert (problem.row, problem.column) == (2, 2)
    assert "NUL character" in problem.message
    long_then_nul = b"a,b,c\n1,long,x\x00\n"
    problem = refusal("t.csv", long_then_nul, max_cell_chars=3)
    assert (problem.row, problem.column) == (2, 2)
    assert "more than 3 characters" in problem.message
    assert refusal("t.csv", b"a,b\n1,2\x00\n").column == 2


def test_empty_cells_at_the_end_of_a_row_do_not_count_as_columns():
    data = b"a,b,,,,\n1,2,,,,\n"
    assert rows_of("t.csv", data, max_rows=2, max_columns=2) == [(1, ["a", "b"]), (2, ["1", "2"])]
    sheet = xlsx({"S": [["a", "b", None, None], ["1", "2"], [], [], []]})
    assert rows_of("w.xlsx", sheet, max_rows=2, max_columns=2) == [(1, ["a", "b"]), (2, ["1", "2"])]


@pytest.mark.parametrize(
    "data",
    [b"a,b\n" + b"\n" * 10_000_000, b"a,b\n" + b",,,,\n" * 2_000_000, b"a,b\n" + b"," * 10_000_000],
    ids=["blank lines", "empty cells", "one wide row"],
)
def test_a_text_file_full_of_nothing_is_refused_or_read(data):
    # How long these take is measured by benchmarks/imports.py, not asserted here.
    try:
        assert rows_of("t.csv", data, max_bytes=len(data)) == [(1, ["a", "b"])]
    except TableError as error:
        assert "more than 20,000 rows" in str(error)


def test_excel_bounds_are_the_same():
    data = xlsx({"S": [["a", "b", "c"], ["1", "2", "3"], ["4", "5", "six"]]})
    assert refusal("w.xlsx", data, max_rows=2).row == 3
    assert refusal("w.xlsx", data, max_columns=2).column == 3
    assert refusal("w.xlsx", data, max_cell_chars=2).column == 3


def test_one_huge_csv_field_is_read_within_the_bound_and_refused_beyond_it():
    huge = "x" * 300_000  # beyond csv's own default field limit of 131,072
    data = f'id,text\nTC-1,"{huge}"\n'.encode()
    assert rows_of("t.csv", data, max_cell_chars=300_000)[1] == (2, ["TC-1", huge])
    problem = refusal("t.csv", data, max_cell_chars=100_000)
    assert (problem.row, problem.column) == (2, 2)


def test_a_sheet_declaring_a_million_rows_and_columns_reads_only_its_cells():
    data = with_sheet_xml(
        xlsx({"S": [["a", "b"], ["1", "2"]]}),
        lambda xml: xml.replace('<dimension ref="A1:B2" />', '<dimension ref="A1:XFD1048576" />'),
    )
    assert rows_of("w.xlsx", data) == [(1, ["a", "b"]), (2, ["1", "2"])]


def test_a_cell_far_below_or_to_the_right_is_refused():
    far_down = with_sheet_xml(
        xlsx({"S": [["a"]]}),
        lambda xml: xml.replace(
            "</sheetData>", '<row r="1048576"><c r="A1048576" t="n"><v>1</v></c></row></sheetData>'
        ),
    )
    assert refusal("w.xlsx", far_down).message == "The file has more than 20,000 rows."
    past_excel = with_sheet_xml(
        xlsx({"S": [["a"]]}),
        lambda xml: xml.replace(
            "</sheetData>", '<row r="999999999"><c t="n"><v>1</v></c></row></sheetData>'
        ),
    )
    assert "Excel workbook" in refusal("w.xlsx", past_excel).message
    far_right = with_sheet_xml(
        xlsx({"S": [["a"]]}),
        lambda xml: xml.replace("</row>", '<c r="XFD1" t="n"><v>1</v></c></row>'),
    )
    assert refusal("w.xlsx", far_right).column == 501


def test_a_zip_bomb_is_refused_from_the_zip_directory():
    # 80 MB of one repeated row compresses to well under a megabyte.
    row = '<row><c t="n"><v>1</v></c></row>'
    body = row * (80 * 1024 * 1024 // len(row))
    data = with_sheet_xml(
        xlsx({"S": [["a"]]}), lambda xml: xml.replace("</sheetData>", body + "</sheetData>")
    )
    assert len(data) < 1024 * 1024
    assert refusal("w.xlsx", data).message.startswith("The workbook unpacks to more than 64 MB")


def with_shared_text(text: str, rows: int) -> bytes:
    """A workbook whose sheet has ``rows`` rows, each one cell showing one shared ``text``
    (as Excel stores text; openpyxl writes it inline)."""
    sst = (
        '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="1" '
        f'uniqueCount="1"><si><t>{text}</t></si></sst>'
    )
    parts = {
        "xl/sharedStrings.xml": lambda xml: sst,
        "xl/worksheets/sheet1.xml": lambda xml: xml.replace(
            "</sheetData>",
            "".join(
                f'<row r="{n}"><c r="A{n}" t="s"><v>0</v></c></row>' for n in range(1, rows + 1)
            )
            + "</sheetData>",
        ),
        "[Content_Types].xml": lambda xml: xml.replace(
            "</Types>",
            '<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
            'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>',
        ),
        "xl/_rels/workbook.xml.rels": lambda xml: xml.replace(
            "</Relationships>",
            '<Relationship Id="rIdShared" Type="http://schemas.openxmlformats.org/'
            'officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/>'
            "</Relationships>",
        ),
    }
    source = zipfile.ZipFile(io.BytesIO(xlsx({"S": []})))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for entry in source.infolist():
            content = source.read(entry).decode()
            target.writestr(entry.filename, parts.pop(entry.filename, lambda xml: xml)(content))
        for name, rewrite in parts.items():
            target.writestr(name, rewrite(""))
    return buffer.getvalue()


def test_one_huge_shared_text_shown_by_every_row_is_refused_before_any_row_is_read():
    # 150,000 rows that each show one shared text of 4 million characters: a small file
    # whose rows, read one by one, would each copy the text before being refused.
    data = with_shared_text("x" * 4_000_000, rows=150_000)
    assert len(data) < 3 * 1024 * 1024
    problem = refusal("w.xlsx", data)
    # The archive's check, not a row's bound (the first row, or row 20,001), refused it.
    assert (problem.row, problem.column) == (None, None)
    assert problem.message.startswith("The workbook holds a text of more than 200,000 characters")


def test_a_shared_text_a_cell_may_hold_is_read():
    data = with_shared_text("x" * 1_000, rows=2)
    assert read_table(filename="w.xlsx", data=data, max_cell_chars=1_000) == [
        TableRow(number=1, line=1, cells=["x" * 1_000]),
        TableRow(number=2, line=2, cells=["x" * 1_000]),
    ]
    assert "more than 999 characters" in refusal("w.xlsx", data, max_cell_chars=999).message


def test_a_shared_text_a_cell_may_hold_shown_by_every_row_is_refused_by_its_total():
    # 150,000 rows each showing one text of 150,000 characters (under a cell's bound): read
    # row by row, the 20,000 rows before the row bound cost each a copy and a check of the
    # text (about 50 s); the archive's scan counts the text once per cell showing it.
    data = with_shared_text("x" * 150_000, rows=150_000)
    problem = refusal("w.xlsx", data)
    assert (problem.row, problem.column) == (None, None)
    assert problem.message.startswith(
        "The workbook's cells show more than 67,108,864 characters in all"
    )


def test_the_total_of_shown_text_is_the_callers_bound():
    data = with_shared_text("x" * 1_000, rows=10)
    # Ten cells show it: 10,000 characters in all.
    assert len(read_table(filename="w.xlsx", data=data, max_expanded_chars=10_000)) == 10
    problem = refusal("w.xlsx", data, max_expanded_chars=9_999)
    assert "more than 9,999 characters in all" in problem.message


def test_a_row_wider_than_excel_allows_is_refused_before_it_is_built():
    cells = '<c t="n"><v>1</v></c>' * 20_000
    data = with_sheet_xml(
        xlsx({"S": [["a"]]}),
        lambda xml: xml.replace("</sheetData>", f"<row>{cells}</row></sheetData>"),
    )
    assert "Excel workbook" in refusal("w.xlsx", data).message


def test_a_workbook_with_a_document_type_is_refused():
    data = with_sheet_xml(
        xlsx({"S": [["a"]]}),
        lambda xml: '<!DOCTYPE x [<!ENTITY a "aaaa">]>' + xml,
    )
    assert "Excel workbook" in refusal("w.xlsx", data).message


def test_column_letters_are_as_spreadsheets_name_them():
    assert [column_letter(n) for n in (1, 26, 27, 52, 703)] == ["A", "Z", "AA", "AZ", "AAA"]


def test_other_file_types_are_refused():
    assert "not a table file" in refusal("t.pdf", b"%PDF").message
