"""A problem message quotes at most the start of a cell: a garbage file (a heading or a
value of 150,000 characters) gets messages a person can read, from every import (test
cases, an offline worksheet, ratings by system), all through ``core.user_input.quoted``."""

import pytest

from core.errors import ApplicationError
from core.user_input import MAX_QUOTED_CHARS, quoted
from studies.importing.cases import parse_cases

from . import test_ratings_by_system as by_system
from . import test_worksheets as sheet

pytestmark = pytest.mark.django_db

CELL = "Q" * 150_000
# A message's own words, the place and the quoted start of the cell: well under this.
BOUND = 2 * MAX_QUOTED_CHARS + 300


def messages(call) -> list[str]:
    with pytest.raises(ApplicationError) as caught:
        call()
    return [str(problem) for problem in caught.value.problems] + [caught.value.message]


def assert_quoted(lines: list[str], *, expected_problems: int) -> None:
    quoting = [line for line in lines if "Q" * MAX_QUOTED_CHARS in line]
    # Each problem about a garbage cell quotes its start, with its length...
    assert len(quoting) >= expected_problems, lines
    assert all(" characters)" in line for line in quoting), quoting
    # ...and no message repeats the cell.
    assert all(len(line) < BOUND for line in lines), [len(line) for line in lines]


def test_the_helper_keeps_a_short_text_and_cuts_a_long_one():
    assert quoted("TC-001") == "TC-001"
    assert quoted("x" * MAX_QUOTED_CHARS) == "x" * MAX_QUOTED_CHARS
    assert quoted("x" * 150_000) == "x" * MAX_QUOTED_CHARS + "… (150,000 characters)"


def test_ratings_by_system_with_a_garbage_heading():
    study = by_system.likert_study()
    data = by_system.csv_bytes(by_system.HEADER + f",{CELL},{CELL}Z", "TC-001,x,y,4,4,4,High,,,,")
    lines = messages(lambda: by_system.run(study, data))
    assert_quoted(lines[:-1], expected_problems=2)


def test_ratings_by_system_with_garbage_values():
    study = by_system.likert_study()
    data = by_system.csv_bytes(
        by_system.HEADER,
        f"{CELL},Zephyr-Alpha-7,r1,4,4,4,High,,",
        f"TC-001,{CELL},r1,4,4,4,High,,",
        f"TC-001,Zephyr-Alpha-7,r2,{CELL},4,4,{CELL},,",
    )
    lines = messages(lambda: by_system.run(study, data))
    assert_quoted(lines[:-1], expected_problems=4)


def test_a_worksheet_with_a_garbage_heading_and_values(study):
    sheet.submit_all(study, limit=1)
    data = sheet.csv_bytes(
        sheet.HEADER + f",{CELL}", f"{CELL},A,4,2,4,3,2,15,{CELL},fine,", sheet.GOOD_B + ","
    )
    lines = messages(lambda: sheet.run_import(study, data))
    assert_quoted(lines[:-1], expected_problems=1)
    data = sheet.csv_bytes(
        sheet.HEADER, f"{CELL},A,4,2,4,3,2,15,High,fine", sheet.GOOD_A.replace("High", CELL)
    )
    lines = messages(lambda: sheet.run_import(study, data))
    assert_quoted(lines[:-1], expected_problems=2)


def test_a_case_file_with_a_garbage_heading_and_values():
    data = f"id,prompt,response:a,response:b,{CELL}\n{CELL},p,x,y,z\n{CELL},p,x,y,z\n".encode()
    parsed = parse_cases(filename="cases.csv", data=data)
    assert_quoted([str(problem) for problem in parsed.problems], expected_problems=2)
