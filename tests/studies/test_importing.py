"""The test-case file reader: formats, and every problem with its row/line and column."""

import io
import json
import zipfile
from pathlib import Path

import pytest
from openpyxl import Workbook

from studies.importing import case_checks
from studies.importing import cases as importing
from studies.importing.cases import parse_cases

SAMPLES = Path(__file__).resolve().parents[2] / "studies" / "samples"
HEADER = "id,prompt,context,stratum,response:baseline,response:improved"


def csv_file(*rows: str, header: str = HEADER) -> bytes:
    return ("\n".join([header, *rows]) + "\n").encode()


def xlsx_file(rows: list[list]) -> bytes:
    workbook = Workbook()
    for row in rows:
        workbook.active.append(row)
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def xlsx_with_a_lone_surrogate() -> bytes:
    """A workbook whose prompt cell is "P&#xD800;" in the sheet's XML."""
    data = xlsx_file([["id", "prompt", "response:a", "response:b"], ["TC-1", "PSUR", "a", "b"]])
    source, buffer = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as target:
        for item in source.infolist():
            target.writestr(item, source.read(item.filename).replace(b"PSUR", b"P&#xD800;"))
    return buffer.getvalue()


def jsonl_file(*records) -> bytes:
    return "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records).encode()


def problems(filename: str, data: bytes, **kwargs) -> list[str]:
    return [str(p) for p in parse_cases(filename=filename, data=data, **kwargs).problems]


def case(case_id="TC-001", prompt="Should we?", baseline="Yes.", improved="No.", **extra):
    return {"id": case_id, "prompt": prompt, "responses": {"baseline": baseline,
            "improved": improved}, **extra}  # fmt: skip


# --- Formats ----------------------------------------------------------------------------


def test_the_three_sample_files_hold_the_same_cases():
    parsed = {
        path.suffix: parse_cases(filename=path.name, data=path.read_bytes())
        for path in SAMPLES.iterdir()
    }
    assert set(parsed) == {".csv", ".jsonl", ".xlsx"}
    for result in parsed.values():
        assert result.ok, result.problem_lines()
        assert result.systems == ["baseline", "improved"]
        assert len(result.cases) == 3
    assert parsed[".csv"].cases == parsed[".jsonl"].cases == parsed[".xlsx"].cases
    assert parsed[".csv"].strata == [("allocation", 1), ("operations", 1), ("release", 1)]


def test_csv_reads_quoted_multiline_cells_and_a_utf8_bom():
    data = "\ufeff" + HEADER + '\nTC-1,"Line one\r\nline two",,s,"A **bold**\nanswer",B\n'
    result = parse_cases(filename="cases.CSV", data=data.encode())
    assert result.ok
    assert result.file_type == "CSV"
    assert result.cases == [
        {
            "id": "TC-1",
            "prompt": "Line one\nline two",
            "context": "",
            "stratum": "s",
            "responses": {"baseline": "A **bold**\nanswer", "improved": "B"},
        }
    ]


def test_columns_can_come_in_any_order_and_optional_ones_can_be_left_out():
    data = csv_file("No.,Yes.,TC-9,Why?", header="response:improved,response:baseline,id,prompt")
    result = parse_cases(filename="x.csv", data=data)
    assert result.ok
    assert result.cases[0] == case("TC-9", "Why?", context="", stratum="")


def test_blank_rows_and_lines_are_skipped():
    assert parse_cases(filename="x.csv", data=csv_file("", "TC-1,P,,,a,b", ",,,,,")).ok
    assert parse_cases(filename="x.jsonl", data=jsonl_file(case(), "", "  ")).ok
    assert parse_cases(filename="x.xlsx", data=xlsx_file([HEADER.split(","), [], ["TC-1", "P",
                       None, None, "a", "b"]])).ok  # fmt: skip


def test_jsonl_with_context_and_stratum_left_out():
    result = parse_cases(filename="x.jsonl", data=jsonl_file(case(), case("TC-002")))
    assert result.ok
    assert result.cases[0] == case(context="", stratum="")


def test_xlsx_numbers_become_text():
    data = xlsx_file([["id", "prompt", "response:a", "response:b"], [7, "P", 1.0, 2.5]])
    result = parse_cases(filename="x.xlsx", data=data)
    assert result.ok
    assert result.cases[0]["id"] == "7"
    assert result.cases[0]["responses"] == {"a": "1", "b": "2.5"}


def test_files_are_read_as_the_worksheet_import_reads_them():
    """One reader for both imports: semicolons, tabs in UTF-16, pipes, a
    workbook whose only sheet has its own name, all give the cases of the comma CSV."""
    rows = [HEADER.split(","), ["TC-1", "Why?", "", "s", "Yes, **bold**", "No."],
            ["TC-2", "How?", "", "s", "Later; maybe", "Now."]]  # fmt: skip
    expected = parse_cases(filename="x.csv", data=csv_file("TC-1,Why?,,s,\"Yes, **bold**\",No.",
                           "TC-2,How?,,s,Later; maybe,Now."))  # fmt: skip
    assert expected.ok and len(expected.cases) == 2

    def text(delimiter):
        return "\n".join(delimiter.join(f'"{c}"' if delimiter in c else c for c in row)
                         for row in rows)  # fmt: skip

    workbook = Workbook()
    workbook.active.title = "Test cases"
    for row in rows:
        workbook.active.append(row)
    buffer = io.BytesIO()
    workbook.save(buffer)
    for name, data in [
        ("x.csv", text(";").encode()),
        ("x.csv", text("\t").encode("utf-16")),
        ("x.csv", text("|").encode()),
        ("x.xlsx", buffer.getvalue()),
    ]:
        result = parse_cases(filename=name, data=data)
        assert result.ok, result.problem_lines()
        assert result.cases == expected.cases, name


def test_systems_are_checked_against_the_study():
    data = csv_file("TC-1,P,,,a,b")
    assert parse_cases(filename="x.csv", data=data, study_systems=["improved", "baseline"]).ok
    assert problems("x.csv", data, study_systems=["baseline", "other"]) == [
        "Row 1: the study's systems are baseline, other, but this file has responses for "
        "baseline, improved. Every test case needs a response from the same systems."
    ]


# --- Every problem, with where it is --------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "data", "expected"),
    [
        (
            "cases.xls",
            b"whatever",
            "File: 'cases.xls' is not a file type Concord reads. Upload a .csv, .jsonl or "
            ".xlsx file (an old .xls workbook must first be saved as .xlsx).",
        ),
        ("cases.txt", b"id,prompt", "File: 'cases.txt' is not a file type"),
        ("cases.csv", b"", "File: the file is empty."),
        ("cases.csv", b"  \n\n", "File: the file is empty."),
        ("cases.csv", csv_file(), "File: the file has no test cases, only column names."),
        (
            "cases.csv",
            csv_file("TC-1,Caf\xe9,,,a,b").replace(b"\xc3\xa9", b"\xe9"),
            'Line 2: the file is not UTF-8 text. Save it as "CSV UTF-8" and upload it again.',
        ),
        (
            "cases.jsonl",
            "\n".join([json.dumps(case()), '{"id": "caf\u00e9"}']).encode("latin-1"),
            "Line 2: the file is not UTF-8 text",
        ),
        (
            "cases.csv",
            csv_file(",P,,,a,b"),
            "Row 2, column A 'id': the id is missing.",
        ),
        (
            "cases.csv",
            csv_file("TC-1,P,,,a,b", "TC-2,P,,,a,b", "TC-1,Q,,,a,b"),
            "Row 4, column A 'id': the id 'TC-1' is used twice (also row 2).",
        ),
        (
            "cases.csv",
            csv_file("TC-1,  ,,,a,b"),
            "Row 2, column B 'prompt': the prompt is empty.",
        ),
        (
            "cases.csv",
            csv_file("TC-1,P,,,a,b", header=HEADER + ",score"),
            "Row 1, column G 'score': unknown column. Use id, prompt, context, stratum, "
            "content_warning, systems, or response:<system name> for each system.",
        ),
        (
            "cases.csv",
            csv_file("TC-1,P,,,a,b,c", header=HEADER + ",response:baseline"),
            "Row 1, column G 'response:baseline': this column repeats column E.",
        ),
        (
            "cases.csv",
            csv_file("TC-1,P,,,a,b,extra"),
            "Row 2, column G: this cell has a value but its column has no name in row 1.",
        ),
        (
            "cases.csv",
            csv_file("P,a,b", header="prompt,response:a,response:b"),
            "Row 1: there is no 'id' column.",
        ),
        (
            "cases.csv",
            csv_file("TC-1,P", header="id,prompt"),
            "Row 1: there is no response column. Add one column per system, named "
            "'response:<system name>', e.g. 'response:baseline'.",
        ),
        (
            "cases.csv",
            csv_file("TC-1,P,a", header="id,prompt,response:"),
            "Row 1, column C 'response:': a response column needs a system name",
        ),
        (
            "cases.csv",
            csv_file('TC-1,"P,,,a,b'),
            "Row 2: the CSV cannot be read (unexpected end of data); check the quotes",
        ),
        (
            "cases.csv",
            csv_file("TC-1,P,,,a,b\x00c"),
            "Row 2, column F: this cell holds a NUL character (\\u0000), which cannot be stored",
        ),
        (
            "cases.csv",
            csv_file("TC-\x001,P,,,a,b"),
            "Row 2, column A: this cell holds a NUL character",
        ),
        (
            "cases.jsonl",
            jsonl_file(case(), case("TC-2", prompt="P\x00")),
            'Line 2: this line cannot be read: the field "prompt" contains a NUL character '
            "(\\u0000), which cannot be stored.",
        ),
        (
            # JSON's escape for half of a UTF-16 pair, alone: PostgreSQL cannot store it.
            "cases.jsonl",
            jsonl_file(case(), case("TC-2", responses={"baseline": "a\ud800", "improved": "b"})),
            'Line 2: this line cannot be read: the field "responses.baseline" contains a lone '
            "surrogate (\\ud800), which cannot be stored.",
        ),
        (
            # The same half pair as UTF-16 bytes: strict decoding refuses it.
            "cases.csv",
            "\ufeffid,prompt,response:a,response:b\nTC-1,P\ud800,a,b\n".encode(
                "utf-16-le", "surrogatepass"
            ),
            "Line 2: the file is not UTF-8 text.",
        ),
        (
            # In an .xlsx a half pair can only be an XML character reference, which is not
            # well-formed XML.
            "cases.xlsx",
            xlsx_with_a_lone_surrogate(),
            "File: the file cannot be read as an Excel workbook (.xlsx).",
        ),
        (
            "cases.jsonl",
            jsonl_file(case(), case("TC-2", stratum="s\x00")),
            'Line 2: this line cannot be read: the field "stratum" contains a NUL character',
        ),
        (
            "cases.csv",
            csv_file(f"{'X' * 51},P,,,a,b"),
            "Row 2, column A 'id': an id must be one line of at most 50 characters.",
        ),
        (
            "cases.csv",
            csv_file(f"TC-1,P,,{'s' * 101},a,b"),
            "Row 2, column D 'stratum': a stratum is limited to 100 characters.",
        ),
        (
            "cases.csv",
            csv_file(f"TC-1,P,,,a,{'b' * 100_001}"),
            "Row 2, column F 'response:improved': the text is longer than 100,000 characters.",
        ),
        (
            "cases.jsonl",
            jsonl_file(case(), '{"id": "TC-002", "prompt": }'),
            "Line 2: this line is not valid JSON (Expecting value at character 28). Each line "
            "must be one complete JSON object.",
        ),
        ("cases.jsonl", jsonl_file(case(), "[1, 2]"), "Line 2: each line must be a JSON object"),
        (
            "cases.jsonl",
            jsonl_file(case(), case("TC-2", score=3)),
            "Line 2, field 'score': unknown field. Use id, prompt, context, stratum, "
            "content_warning and responses.",
        ),
        (
            "cases.jsonl",
            jsonl_file(case(), case("TC-2", stratum=["a"])),
            "Line 2, field 'stratum': must be text (in double quotes).",
        ),
        (
            "cases.jsonl",
            jsonl_file(case(), {"id": "TC-2", "prompt": "P", "responses": {"baseline": "a"}}),
            "Line 2: this test case has a response from 'baseline' only; a case needs responses "
            "from at least two systems to be compared.",
        ),
        (
            "cases.jsonl",
            jsonl_file(case(), {"id": "TC-2", "prompt": "P"}),
            "Line 2, field 'responses': there are no responses: give one per system",
        ),
        (
            "cases.jsonl",
            jsonl_file(case(), case("TC-001")),
            "Line 2, field 'id': the id 'TC-001' is used twice (also line 1).",
        ),
        (
            "cases.xlsx",
            b"PK\x03\x04 not really a workbook",
            "File: the file cannot be read as an Excel workbook (.xlsx).",
        ),
        (
            "cases.xlsx",
            xlsx_file(
                [["id", "prompt", "response:a", "response:b"], [], [], [None, "P", "a", "b"]]
            ),  # fmt: skip
            "Row 4, column A 'id': the id is missing.",
        ),
    ],
)
def test_each_problem_is_reported_with_its_place(filename, data, expected):
    found = problems(filename, data)
    assert any(line.startswith(expected) for line in found), found


def test_ids_already_in_the_study_are_refused():
    assert problems("x.csv", csv_file("TC-1,P,,,a,b"), existing_ids={"TC-1"}) == [
        "Row 2, column A 'id': the study already has a test case with the id 'TC-1'."
    ]


def test_a_file_over_the_limit_is_refused_before_it_is_read(monkeypatch):
    monkeypatch.setattr(importing, "MAX_FILE_BYTES", 1024)
    assert problems("x.csv", csv_file("TC-1,P,,,a," + "b" * 2000)) == [
        "File: the file is 0.0 MB; the limit is 0 MB. Split it into smaller files."
    ]
    assert str(importing.size_problem(11 * 1024 * 1024 + 1)).startswith("File: the file is 11.0")


def test_rows_are_numbered_as_a_spreadsheet_shows_them_with_the_line_when_different():
    data = csv_file('TC-1,"two\nlines",,,a,b', "TC-2,,,,a,b")
    assert problems("x.csv", data) == ["Row 3 (line 4), column B 'prompt': the prompt is empty."]


def test_every_problem_is_listed_in_file_order():
    data = csv_file("TC-1,,,,a,b", ",P,,,a,b", "TC-1,P,,,,b", header=HEADER + ",notes")
    assert problems("x.csv", data) == [
        "Row 1, column G 'notes': unknown column. Use id, prompt, context, stratum, "
        "content_warning, systems, or response:<system name> for each system.",
        "Row 2, column B 'prompt': the prompt is empty.",
        "Row 3, column A 'id': the id is missing.",
        "Row 4, column A 'id': the id 'TC-1' is used twice (also row 2).",
    ]


def test_a_long_list_of_problems_is_cut_short_with_a_count():
    data = csv_file(*[f"TC-{n},,,,a,b" for n in range(500)])
    result = parse_cases(filename="x.csv", data=data)
    lines = result.problem_lines()
    assert len(lines) == importing.MAX_REPORTED_PROBLEMS + 1
    assert lines[-1].startswith("... and ")


def test_too_many_cases_are_refused(monkeypatch):
    monkeypatch.setattr(case_checks, "MAX_CASES", 2)
    data = csv_file("TC-1,P,,,a,b", "TC-2,P,,,a,b", "TC-3,P,,,a,b")
    assert problems("x.csv", data) == ["Row 4: a file can hold at most 2 test cases."]


# --- Per-case systems (arena-style studies) and empty responses ----------------------------

ARENA = "id,prompt,systems,response:alpha,response:beta,response:gamma"


def test_a_systems_column_gives_each_case_its_own_systems():
    data = csv_file("T1,P,alpha; gamma,a,,c", "T2,P,beta;alpha;,a,b,", header=ARENA)
    result = parse_cases(filename="x.csv", data=data)
    assert result.ok, result.problem_lines()
    assert [case["responses"] for case in result.cases] == [
        {"alpha": "a", "gamma": "c"},
        {"alpha": "a", "beta": "b"},
    ]
    assert result.systems == ["alpha", "beta", "gamma"]


def test_jsonl_responses_are_the_case_systems_and_the_study_systems_their_union():
    data = jsonl_file(
        {"id": "T1", "prompt": "P", "responses": {"alpha": "a", "beta": "b"}},
        {"id": "T2", "prompt": "P", "responses": {"gamma": "c", "beta": "b"}},
    )
    result = parse_cases(filename="x.jsonl", data=data)
    assert result.ok, result.problem_lines()
    assert [sorted(case["responses"]) for case in result.cases] == [
        ["alpha", "beta"],
        ["beta", "gamma"],
    ]
    assert result.systems == ["alpha", "beta", "gamma"]


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        (
            "T1,P,alpha,a,,",
            "Row 2, column C 'systems': name at least two of the case's systems, separated by "
            "';', e.g. 'baseline; improved'.",
        ),
        ("T1,P,,a,b,", "Row 2, column C 'systems': name at least two"),
        (
            "T1,P,alpha;delta,a,,",
            "Row 2, column C 'systems': the system 'delta' has no column 'response:delta' in "
            "row 1.",
        ),
        ("T1,P,alpha;alpha;beta,a,b,", "Row 2, column C 'systems': the system 'alpha' is named"),
        (
            "T1,P,alpha;beta,a,b,c",
            "Row 2, column F 'response:gamma': system 'gamma' is not in this row's systems "
            "(alpha, beta), so its response must be blank; or add it to the systems cell.",
        ),
    ],
)
def test_a_systems_cell_is_checked(row, expected):
    found = problems("x.csv", csv_file(row, header=ARENA))
    assert any(line.startswith(expected) for line in found), found


def test_per_case_systems_must_be_among_the_study_systems():
    data = csv_file("T1,P,alpha;beta,a,b,", header=ARENA)
    assert parse_cases(filename="x.csv", data=data, study_systems=["alpha", "beta", "x"]).ok
    assert problems("x.csv", data, study_systems=["alpha", "x"]) == [
        "File: the study's systems are alpha, x, but this file also has responses for beta. "
        "A later file can only use the study's systems."
    ]
    # A study with two systems: a case with one of them only is refused.
    one = jsonl_file({"id": "T1", "prompt": "P", "responses": {"alpha": "a"}})
    assert parse_cases(filename="x.jsonl", data=one).ok  # a study of one system
    assert problems("x.jsonl", one, study_systems=["alpha", "beta"]) == [
        "Line 1: this test case has a response from 'alpha' only; a case needs responses from "
        "at least two systems to be compared."
    ]


@pytest.mark.parametrize(
    ("filename", "data", "expected"),
    [
        (
            "x.csv",
            csv_file("TC-1,P,,,a,", "TC-2,P,,,a,b", "TC-3,P,,,   ,b"),
            [
                "Row 2, column F 'response:improved': the response of system 'improved' is "
                "empty; it is imported as that system's output.",
                "Row 4, column E 'response:baseline': the response of system 'baseline' is "
                "empty; it is imported as that system's output.",
            ],
        ),
        (
            "x.jsonl",
            jsonl_file(case(), case("TC-2", improved=""), case("TC-3", baseline=None)),
            [
                "Line 2, field 'responses.improved': the response of system 'improved' is "
                "empty; it is imported as that system's output.",
                "Line 3, field 'responses.baseline': the response of system 'baseline' is "
                "empty; it is imported as that system's output.",
            ],
        ),
        (
            "x.xlsx",
            xlsx_file([["id", "prompt", "response:a", "response:b"], ["T1", "P", "a", None]]),
            [
                "Row 2, column D 'response:b': the response of system 'b' is empty; it is "
                "imported as that system's output."
            ],
        ),
    ],
)
def test_empty_responses_are_kept_with_a_warning_naming_the_rows(filename, data, expected):
    result = parse_cases(filename=filename, data=data)
    assert result.ok, result.problem_lines()
    assert result.warning_lines() == expected
    assert result.warning_count == len(expected)
    assert (
        "" in result.cases[0]["responses"].values() or "" in result.cases[1]["responses"].values()
    )


def test_a_long_list_of_warnings_is_cut_short_with_a_count():
    data = csv_file(*[f"TC-{n},P,,,a," for n in range(300)])
    result = parse_cases(filename="x.csv", data=data)
    assert result.ok and result.warning_count == 300
    lines = result.warning_lines()
    assert len(lines) == importing.MAX_REPORTED_PROBLEMS + 1
    assert lines[-1] == f"... and {300 - importing.MAX_REPORTED_PROBLEMS} more."
