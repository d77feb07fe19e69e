"""Import of filled-in worksheets: round trips, every error, all or nothing, the page, the CLI."""

import csv
import hashlib
import io
import json
import re
from collections import Counter

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from openpyxl import Workbook

from annotation import exports, worksheets
from annotation.models import Assignment, Rating, RatingRevision
from annotation.services import assignments_create_all
from studies.models import Membership, Study, StudyEvent
from studies.services import membership_add, rubric_replace_with_preset
from tests.payloads import coordinator_of, payload_for, submit, submit_all

from ..factories import UserFactory, make_study
from .support import consent_all

pytestmark = pytest.mark.django_db

HEADER = "TC-ID,Response,Depth,Evidence,Alternatives,Structure,Actionability,Total,Confidence,Notes"


def snapshot() -> str:
    """Everything an import could write, as one fingerprint."""
    state = {
        "assignments": list(
            Assignment.objects.order_by("pk").values_list(
                "pk", "status", "version", "confidence", "notes", "flipped", "case_scores"
            )
        ),
        "ratings": list(Rating.objects.order_by("pk").values_list("pk", "scores", "total")),
        "revisions": RatingRevision.objects.count(),
        "events": StudyEvent.objects.count(),
    }
    return hashlib.sha256(json.dumps(state, default=str).encode()).hexdigest()


def csv_bytes(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def run_import(study, data: bytes, *, filename="sheet.csv", rater="R-01", **kwargs):
    return worksheets.worksheet_import(
        study=study, pseudonym=rater, filename=filename, data=data, **kwargs
    )


def export_bytes(study, fmt, rater=None) -> bytes:
    file = io.BytesIO()
    exports.export_write(study=study, fmt=fmt, file=file, rater=rater)
    return file.getvalue()


def points(study, pseudonym) -> dict:
    """(case, label) -> (scores' points, total), plus the per-case answers."""
    out = {}
    for assignment in Assignment.objects.filter(
        test_case__study=study, rater__pseudonym=pseudonym, status="submitted"
    ).select_related("test_case"):
        for rating in assignment.ratings.all():
            out[assignment.test_case.case_id, rating.label] = (
                {k: v["points"] for k, v in rating.scores.items()},
                rating.total,
                assignment.confidence,
                assignment.notes,
            )
    return out


@pytest.fixture
def fresh_rater(study):
    """R-03: in the study, with no assignments yet (e.g. a rater who works offline)."""
    return membership_add(study=study, user=UserFactory(), role=Membership.Role.RATER)


# Round trips -----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["worksheet-csv", "worksheet-xlsx"])
def test_round_trip_into_a_twin_study_gives_the_same_scores(fmt):
    original = make_study(slug="original", cases=5, raters=[UserFactory()])
    twin = make_study(slug="twin", cases=5, raters=[UserFactory()])
    r01 = original.memberships.get(pseudonym="R-01")
    for n, assignment in enumerate(r01.assignments.order_by("position")):
        submit(assignment, payload_for(n, notes=f"=note {n}", confidence="high"))
    data = export_bytes(original, fmt, rater="R-01")
    result = run_import(twin, data, filename="w." + fmt.split("-")[1])
    # Five ratings stored, each new (the cases had been assigned, not yet rated).
    assert (result.cases, result.created, result.updated, result.assigned) == (5, 5, 0, 0)
    assert points(twin, "R-01") == points(original, "R-01")
    # The export's quote before "=" was taken off again.
    assert all(value[3].startswith("=note ") for value in points(twin, "R-01").values())
    # One stored shape: the kind's fields, with None for the items and criteria a
    # worksheet does not carry; the assignment, not the answer, says where it came from.
    rating = Rating.objects.filter(assignment__test_case__study=twin).first()
    assert rating.assignment.source == Assignment.Source.WORKSHEET
    assert rating.scores["depth"] == {
        "items": None,
        "points": rating.scores["depth"]["points"],
        "flagged": False,
        "flag_note": "",
    }
    assert rating.scores["evidence"]["checked"] is None
    assert all("imported" not in entry for entry in rating.scores.values())


# Notes a spreadsheet set to another delimiter would split into a formula cell.
SPLIT_FORMULAS = ["see;=1+1", "see,=HYPERLINK(1)", "a|@SUM(A1);b\t-2+3", "'=1, \"+1"]


def semicolon_csv(data: bytes) -> bytes:
    """The worksheet as a spreadsheet in a semicolon locale saves it."""
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    out = io.StringIO(newline="")
    csv.writer(out, delimiter=";").writerows(rows)
    return out.getvalue().encode()


@pytest.mark.parametrize("fmt", ["comma", "semicolon", "xlsx"])
def test_notes_with_a_formula_after_a_delimiter_are_quoted_and_come_back(fmt):
    original = make_study(slug="original", cases=4, raters=[UserFactory()])
    twin = make_study(slug="twin", cases=4, raters=[UserFactory()])
    r01 = original.memberships.get(pseudonym="R-01")
    for n, assignment in enumerate(r01.assignments.order_by("test_case__position")):
        submit(assignment, payload_for(n, notes=SPLIT_FORMULAS[n], confidence="low"))
    data = export_bytes(original, "worksheet-csv", rater="R-01")
    # Read with either delimiter, no cell of the file starts a formula.
    for delimiter in (",", ";"):
        text = data.decode("utf-8-sig")
        for row in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter):
            assert not [c for c in row if c.lstrip(' "')[:1] in ("=", "+", "-", "@")
                        and not re.fullmatch(r"-?\d+", c)], row  # fmt: skip
    filename = "w.csv"
    if fmt == "semicolon":
        data = semicolon_csv(data)
    elif fmt == "xlsx":
        data, filename = export_bytes(original, "worksheet-xlsx", rater="R-01"), "w.xlsx"
    run_import(twin, data, filename=filename)
    notes = {case: value[3] for (case, _), value in points(twin, "R-01").items()}
    assert sorted(notes.values()) == sorted(SPLIT_FORMULAS)
    assert points(twin, "R-01") == points(original, "R-01")


def test_exporting_an_imported_worksheet_gives_the_same_file(study):
    submit_all(study, limit=3)
    before = export_bytes(study, "worksheet-csv", rater="R-02")
    run_import(study, before, rater="R-02")
    assert export_bytes(study, "worksheet-csv", rater="R-02") == before
    # The replaced answers are kept as revisions, as for a resubmission on screen.
    assert RatingRevision.objects.filter(assignment__rater__pseudonym="R-02").count() == 3


def test_round_trip_of_a_pairwise_rubric_on_flipped_screens():
    """Pairwise answers are exported in key order, so flipped screens survive the trip."""
    studies = []
    for slug in ("pair-one", "pair-two"):
        study = make_study(slug=slug, raters=[UserFactory()], status=Study.Status.DRAFT)
        Assignment.objects.filter(test_case__study=study).delete()
        rubric_replace_with_preset(study=study, preset="pairwise", actor=None)
        Study.objects.filter(pk=study.pk).update(side_mode="balanced", status="open")
        study.refresh_from_db()
        studies.append(study)
    original, twin = studies
    rater = original.memberships.get(pseudonym="R-01")
    assignments_create_all(study=original, rater=rater)
    for n, assignment in enumerate(rater.assignments.order_by("position")):
        submit(assignment, {"responses": {}, "case": {"preference": {"choice": n % 5 - 2}},
                            "confidence": "low", "notes": ""})  # fmt: skip
    assert rater.assignments.filter(flipped=True).exists()
    data = export_bytes(original, "worksheet-csv", rater="R-01")
    header = data.decode("utf-8-sig").splitlines()[0]
    assert header == "TC-ID,Response,Preference,Total,Confidence,Notes,Skipped,Rater"
    run_import(twin, data)
    assert export_bytes(twin, "worksheet-csv", rater="R-01") == data
    imported = Assignment.objects.filter(test_case__study=twin, rater__pseudonym="R-01")
    assert not imported.filter(flipped=True).exists()  # read offline, in key order
    flipped = rater.assignments.filter(flipped=True).first()
    twin_case = imported.get(test_case__case_id=flipped.test_case.case_id)
    assert (
        twin_case.case_scores["preference"]["choice"]
        == -flipped.case_scores["preference"]["choice"]
    )


def test_the_template_from_the_instructions_imports_and_creates_assignments(study, fresh_rater):
    """A pipe table as in the validator instructions, with a case left blank."""
    sheet = "\n".join([
        "TC-ID | Response | Depth | Evidence | Alternatives | Structure | Actionability | Total | Confidence | Notes",
        "------|----------|-------|----------|--------------|-----------|---------------|-------|------------|------",
        "TC-001| A        | 4     | 2        | 4            | 3         | 2             | 15    | High       | Clear premises",
        "TC-001| B        | 2     | 1        | 2            | 2         | 0             | 7     |            |",
        "TC-002| A        |       |          |              |           |               |       |            |",
        "TC-002| B        |       |          |              |           |               |       |            |",
        "TC-003| A        | 5     | 3        | 5            | 3         | 4             | 20    | low        |",
        "TC-003| B        | 0     | 0        | 0            | 0         | 0             | 0     | Low        |",
    ])  # fmt: skip
    result = run_import(study, sheet.encode(), filename="worksheet.md", rater="R-03")
    assert (result.cases, result.created, result.assigned, result.skipped) == (2, 2, 2, ["TC-002"])
    scores = points(study, "R-03")
    assert scores["TC-001", "A"] == (
        {"depth": 4, "evidence": 2, "alternatives": 4, "structure": 3, "actionability": 2},
        15, "high", "Clear premises",
    )  # fmt: skip
    assert scores["TC-003", "B"][1] == 0 and scores["TC-003", "B"][2] == "low"
    assigned = fresh_rater.assignments.order_by("position")
    assert {a.test_case.case_id for a in assigned} == {"TC-001", "TC-003"}
    assert {a.status for a in assigned} == {"submitted"}
    event = StudyEvent.objects.get(kind="worksheet_imported")
    assert event.membership == fresh_rater and event.detail["cases"] == 2


def test_semicolons_and_an_xlsx_from_a_spreadsheet_program_are_read(study, fresh_rater):
    semicolons = csv_bytes(
        HEADER.replace(",", ";"),
        "TC-004;A;2;0;0;1;0;3;Medium;",
        "TC-004;B;4;3;5;3;4;19;Medium;",
    )
    assert run_import(study, semicolons, rater="R-03").cases == 1
    workbook = Workbook()
    sheet = workbook.active
    sheet.append(HEADER.split(","))
    sheet.append(["TC-001", "A", 5.0, 3, 5, 3, 4, 20, "High", None])  # floats, as Excel stores
    sheet.append(["TC-001", "B", 0, 0, 0, 0, 0, 0, None, None])
    file = io.BytesIO()
    workbook.save(file)
    assert run_import(study, file.getvalue(), filename="w.xlsx", rater="R-03").cases == 1
    assert points(study, "R-03")["TC-001", "A"][1] == 20


def test_files_are_read_as_the_test_case_import_reads_them(study, fresh_rater):
    """One reader for both imports: a named sheet, UTF-16 tabs and semicolons read alike."""
    rows = [HEADER.split(","), ["TC-001", "A", 5.0, 3, 5, 3, 4, 20, "High", None],
            ["TC-001", "B", 0, 0, 0, 0, 0, 0, None, None]]  # fmt: skip
    workbook = Workbook()
    workbook.active.title = "Instructions"
    workbook.active.append(["Fill in the sheet named Worksheet."])
    sheet = workbook.create_sheet("Worksheet")
    for row in rows:
        sheet.append(row)
    file = io.BytesIO()
    workbook.save(file)
    shown = [["" if value is None else f"{value:g}" if isinstance(value, float) else str(value)
              for value in row] for row in rows]  # fmt: skip
    text = "\n".join("\t".join(row) for row in shown)
    for name, data in [
        ("w.xlsx", file.getvalue()),
        ("w.txt", text.encode("utf-16")),  # Excel's "Unicode Text"
        ("w.csv", text.replace("\t", ";").encode()),
    ]:
        assert run_import(study, data, filename=name, rater="R-03").cases == 1, name
        assert points(study, "R-03")["TC-001", "A"][:3] == (
            {"depth": 5, "evidence": 3, "alternatives": 5, "structure": 3, "actionability": 4},
            20, "high",
        ), name  # fmt: skip


def test_check_only_writes_nothing(study, fresh_rater):
    before = snapshot()
    data = csv_bytes(HEADER, "TC-001,A,0,0,0,0,0,0,Low,", "TC-001,B,0,0,0,0,0,0,Low,")
    result = run_import(study, data, rater="R-03", dry_run=True)
    assert (result.cases, result.created, result.assigned, result.dry_run) == (1, 1, 1, True)
    assert snapshot() == before


# Every problem, and nothing written ------------------------------------------------------

GOOD_A = "TC-001,A,4,2,4,3,2,15,High,fine"
GOOD_B = "TC-001,B,2,1,2,2,0,7,High,"
BAD_FILES = {
    "unknown column": (csv_bytes(HEADER + ",Mood", GOOD_A + ",x", GOOD_B + ","), (1, "Mood", "Unknown column")),
    "missing column": (csv_bytes(HEADER.replace("Evidence,", ""), "TC-001,A,4,4,3,2,13,High,"), (1, "Evidence", "missing")),
    "column twice": (csv_bytes(HEADER + ",Depth", GOOD_A + ",4", GOOD_B + ",2"), (1, "Depth", "twice")),
    "unknown test case": (csv_bytes(HEADER, GOOD_A, GOOD_B, "TC-999,A,0,0,0,0,0,0,Low,"), (4, "TC-ID", "no test case TC-999")),
    "empty test case": (csv_bytes(HEADER, GOOD_A, GOOD_B, ",A,0,0,0,0,0,0,Low,"), (4, "TC-ID", "empty")),
    "unknown label": (csv_bytes(HEADER, GOOD_A, GOOD_B, "TC-001,C,0,0,0,0,0,0,High,"), (4, "Response", "has responses A, B")),
    "second row": (csv_bytes(HEADER, GOOD_A, GOOD_B, GOOD_B), (4, "Response", "first is row 3")),
    "missing response": (csv_bytes(HEADER, GOOD_A), (2, "Response", "no row for response B")),
    "points out of band": (csv_bytes(HEADER, GOOD_A.replace("A,4,2", "A,3,2").replace(",15,", ",14,"), GOOD_B), (2, "Depth", "takes 0, 2, 4, 5")),
    "points above the maximum": (csv_bytes(HEADER, GOOD_A, GOOD_B.replace("B,2,1", "B,2,4").replace(",7,", ",10,")), (3, "Evidence", "takes 0 to 3")),
    "not a number": (csv_bytes(HEADER, GOOD_A.replace("A,4,", "A,four,"), GOOD_B), (2, "Depth", "not a whole number")),
    "fraction": (csv_bytes(HEADER, GOOD_A, GOOD_B.replace("B,2,1,2,2,0", "B,2,1,2,2,0.5")), (3, "Actionability", "not a whole number")),
    "empty score": (csv_bytes(HEADER, GOOD_A, GOOD_B.replace("B,2,1,2", "B,2,,2")), (3, "Evidence", "empty")),
    "total off": (csv_bytes(HEADER, GOOD_A.replace(",15,", ",16,"), GOOD_B), (2, "Total", "add up to 15")),
    "total empty": (csv_bytes(HEADER, GOOD_A.replace(",15,", ",,"), GOOD_B), (2, "Total", "empty")),
    "confidence unknown": (csv_bytes(HEADER, GOOD_A.replace("High", "Very"), GOOD_B.replace("High", "Very")), (2, "Confidence", "Low, Medium or High")),
    "confidence missing": (csv_bytes(HEADER, GOOD_A.replace("High", ""), GOOD_B.replace("High", "")), (2, "Confidence", "Low, Medium or High")),
    "confidence differs": (csv_bytes(HEADER, GOOD_A, GOOD_B.replace("High", "Low")), (3, "Confidence", "different values")),
    "another rater's row": (csv_bytes("Rater," + HEADER, "R-02," + GOOD_A, "R-01," + GOOD_B), (2, "Rater", "not R-01")),
    "notes without scores": (csv_bytes(HEADER, GOOD_A, GOOD_B, "TC-002,A,,,,,,,,a note", "TC-002,B,,,,,,,,"), (4, "Notes", "notes but no scores")),
    "value without heading": (csv_bytes(HEADER + ",", GOOD_A + ",stray", GOOD_B + ","), (2, "#11", "without a heading")),
    "not utf-8": (HEADER.encode() + b"\nTC-001,A,4,2,4,3,2,15,High,caf\xe9\n", (2, None, "not UTF-8")),
    "empty file": (b"", (None, None, "no rows")),
    # Numbers that cost a minute, raise, or pass Python's int-string limit if converted.
    "huge exponent": (csv_bytes(HEADER, GOOD_A.replace("A,4,", "A,1E+1000000,"), GOOD_B), (2, "Depth", "1E+1000000 is not a whole number")),
    "signalling NaN": (csv_bytes(HEADER, GOOD_A.replace("A,4,2", "A,4,sNaN"), GOOD_B), (2, "Evidence", "sNaN is not a whole number")),
    "NaN": (csv_bytes(HEADER, GOOD_A, GOOD_B.replace("B,2,1,2", "B,2,1,NaN")), (3, "Alternatives", "NaN is not a whole number")),
    "Infinity": (csv_bytes(HEADER, GOOD_A, GOOD_B.replace("B,2,1,2,2", "B,2,1,2,-Infinity")), (3, "Structure", "-Infinity is not a whole number")),
    "ten thousand digits": (csv_bytes(HEADER, GOOD_A.replace("A,4,", "A," + "4" * 10_000 + ","), GOOD_B), (2, "Depth", "4444444444…")),
    "total of ten thousand digits": (csv_bytes(HEADER, GOOD_A.replace(",15,", "," + "1" * 10_000 + ","), GOOD_B), (2, "Total", "whole number of 0 or more")),
    "total as an exponent": (csv_bytes(HEADER, GOOD_A.replace(",15,", ",1E+1000000,"), GOOD_B), (2, "Total", "whole number")),
    "total NaN": (csv_bytes(HEADER, GOOD_A, GOOD_B.replace(",7,", ",sNaN,")), (3, "Total", "whole number")),
    "total negative": (csv_bytes(HEADER, GOOD_A, GOOD_B.replace(",7,", ",-7,")), (3, "Total", "whole number of 0 or more")),
    # PostgreSQL stores no NUL character: the reader refuses the cell.
    "NUL in notes": (csv_bytes(HEADER, GOOD_A.replace("fine", "fi\x00ne"), GOOD_B), (2, "J", "NUL character")),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_every_problem_names_row_and_column_and_writes_nothing(study, case):
    submit_all(study, limit=1)
    data, (row, column, text) = BAD_FILES[case]
    before = snapshot()
    with pytest.raises(worksheets.WorksheetError) as caught:
        run_import(study, data)
    problems = caught.value.problems
    assert any(
        p.row == row and p.column == column and text.lower() in p.message.lower() for p in problems
    ), [str(p) for p in problems]
    assert snapshot() == before


def test_numbers_in_an_xlsx_are_read_with_the_same_bounds(study):
    submit_all(study, limit=1)
    book = Workbook()
    book.active.append(HEADER.split(","))
    book.active.append(["TC-001", "A", "1E+1000000", 2, 4, 3, 2, 1e300, "High", ""])
    book.active.append(["TC-001", "B", 2, "sNaN", 2, 2, 0, float(7), "High", ""])
    buffer = io.BytesIO()
    book.save(buffer)
    before = snapshot()
    with pytest.raises(worksheets.WorksheetError) as caught:
        run_import(study, buffer.getvalue(), filename="sheet.xlsx")
    found = {(p.row, p.column) for p in caught.value.problems}
    assert {(2, "Depth"), (2, "Total"), (3, "Evidence")} <= found, caught.value.problems
    assert snapshot() == before


@pytest.mark.parametrize(
    ("filename", "data", "text"),
    [
        ("sheet.pdf", b"%PDF", "as .csv or .xlsx"),
        ("sheet.xlsx", b"not a zip at all", "Excel workbook"),
        ("sheet.csv", b"x" * (worksheets.MAX_BYTES + 1), "larger than 5 MB"),
    ],
)
def test_unreadable_files_are_refused(study, filename, data, text):
    before = snapshot()
    with pytest.raises(worksheets.WorksheetError) as caught:
        run_import(study, data, filename=filename)
    assert text in str(caught.value)
    assert snapshot() == before


def test_a_later_problem_stops_the_whole_file(study, fresh_rater):
    """Ten good cases and one bad one: not even the good ones are recorded."""
    lines = [HEADER]
    for n in range(1, 5):
        lines += [f"TC-{n:03d},A,0,0,0,0,0,0,Low,", f"TC-{n:03d},B,0,0,0,0,0,0,Low,"]
    lines[-1] = "TC-004,B,0,0,0,0,0,1,Low,"
    before = snapshot()
    with pytest.raises(worksheets.WorksheetError) as caught:
        run_import(study, csv_bytes(*lines), rater="R-03")
    assert [str(p) for p in caught.value.problems] == [
        "Row 9, column Total: The total is 1 but the scores add up to 0."
    ]
    assert snapshot() == before
    assert not fresh_rater.assignments.exists()


def test_raters_who_cannot_rate_and_closed_studies_are_refused(study):
    data = csv_bytes(HEADER, GOOD_A, GOOD_B)
    with pytest.raises(worksheets.WorksheetError, match="No rater R-09"):
        run_import(study, data, rater="R-09")
    Membership.objects.filter(study=study, pseudonym="R-02").update(status="excluded")
    with pytest.raises(worksheets.WorksheetError, match="R-02 is excluded"):
        run_import(study, data, rater="R-02")
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    study.refresh_from_db()
    with pytest.raises(worksheets.WorksheetError, match="closed"):
        run_import(study, data)
    assert not Rating.objects.exists()


# The page --------------------------------------------------------------------------------


def upload(client, study, data, *, rater="R-01", action="import", name="sheet.csv"):
    return client.post(
        reverse("annotation:worksheet_import", args=[study.slug]),
        {"rater": rater, "action": action, "file": SimpleUploadedFile(name, data)},
    )


def test_import_page_permissions(client, study, lead, rater, stranger):
    data = csv_bytes(HEADER, GOOD_A, GOOD_B)
    response = upload(client, study, data)
    assert response.status_code == 302 and reverse("login") in response["Location"]
    client.force_login(rater)
    assert upload(client, study, data).status_code == 403
    client.force_login(stranger)
    assert upload(client, study, data).status_code == 404
    client.force_login(coordinator_of(make_study(slug="elsewhere")))
    assert upload(client, study, data).status_code == 404
    assert not Rating.objects.exists()
    client.force_login(coordinator_of(study))
    assert client.get(reverse("annotation:worksheet_import", args=[study.slug])).status_code == 405
    response = upload(client, study, data)
    assert response.status_code == 302
    assert Rating.objects.filter(assignment__rater__pseudonym="R-01").count() == 2


def job_page(client, response):
    """The page of the job a POST started (it ran inside the request: ``JOBS_RUN`` inline)."""
    assert response.status_code == 302, response.status_code
    assert "/results/import/" in response["Location"]
    return client.get(response["Location"])


def test_import_page_lists_problems_and_checks_before_importing(client, study, lead):
    client.force_login(lead)
    page = job_page(client, upload(client, study, BAD_FILES["total off"][0]))
    assert page.status_code == 200
    assert "Nothing was imported." in page.text
    assert "Row 2, column Total: The total is 16 but the scores add up to 15." in page.text
    page = job_page(
        client, upload(client, study, csv_bytes(HEADER, GOOD_A, GOOD_B), action="check")
    )
    assert page.status_code == 200
    assert "is fine: 1 test case for R-01" in page.text
    assert not Rating.objects.exists()
    page = job_page(client, upload(client, study, csv_bytes(HEADER, GOOD_A, GOOD_B)))
    assert page.status_code == 302
    assert "Imported 1 test case for R-01" in client.get(page["Location"]).text


def test_check_only_keeps_the_file_for_import_now_which_checks_it_again(client, study, lead):
    client.force_login(lead)
    page = job_page(
        client, upload(client, study, csv_bytes(HEADER, GOOD_A, GOOD_B), action="check")
    )
    token = page.context["checked_token"]
    assert token and f'name="checked" value="{token}"' in page.text
    assert "Import this file now for R-01" in page.text and not Rating.objects.exists()
    url = reverse("annotation:worksheet_import", args=[study.slug])
    # Another coordinator cannot use the token; nor can a made-up one.
    other = coordinator_of(study)
    client.force_login(other)
    assert client.post(url, {"checked": token}).status_code == 400
    assert not Rating.objects.exists()
    client.force_login(lead)
    response = client.post(url, {"checked": "made-up"})
    assert response.status_code == 400 and "no longer kept" in response.text
    # Checked again on import: a rater paused since the check is refused.
    Membership.objects.filter(study=study, pseudonym="R-01").update(status="paused")
    page = job_page(client, client.post(url, {"checked": token}))
    assert "Nothing was imported." in page.text and "R-01 is paused" in page.text
    assert not Rating.objects.exists()
    Membership.objects.filter(study=study, pseudonym="R-01").update(status="active")
    assert job_page(client, client.post(url, {"checked": token})).status_code == 302
    assert Rating.objects.filter(assignment__rater__pseudonym="R-01").count() == 2
    assert client.post(url, {"checked": token}).status_code == 400  # used once


def test_a_file_in_the_old_order_with_the_rater_first_still_imports(study):
    data = csv_bytes("Rater," + HEADER, "R-01," + GOOD_A, "R-01," + GOOD_B)
    assert run_import(study, data).cases == 1


def test_a_formula_in_an_uploaded_excel_worksheet_is_refused_at_its_cell(study):
    workbook = Workbook()
    sheet = workbook.active
    sheet.append(HEADER.split(","))
    sheet.append(["TC-001", "A", 5, 3, 5, 3, 4, "=SUM(C2:G2)", "High", None])
    sheet.append(["TC-001", "B", 0, 0, 0, 0, 0, 0, "High", None])
    file = io.BytesIO()
    workbook.save(file)
    with pytest.raises(worksheets.WorksheetError) as caught:
        run_import(study, file.getvalue(), filename="w.xlsx")
    [problem] = caught.value.problems
    assert (problem.row, problem.column) == (2, "H")
    assert "formula, which is not accepted" in problem.message
    assert not Rating.objects.exists()


# Command line ----------------------------------------------------------------------------


def test_import_worksheet_command(study, tmp_path, capsys):
    good = tmp_path / "good.csv"
    good.write_bytes(csv_bytes(HEADER, GOOD_A, GOOD_B))
    call_command("import_worksheet", study.slug, str(good), "--rater", "R-01", "--check")
    assert "Checked 1 test cases for R-01" in capsys.readouterr().out
    assert not Rating.objects.exists()
    bad = tmp_path / "bad.csv"
    bad.write_bytes(BAD_FILES["total off"][0])
    before = snapshot()
    with pytest.raises(CommandError) as caught:
        call_command("import_worksheet", study.slug, str(bad), "--rater", "R-01")
    assert "Row 2, column Total" in str(caught.value)
    assert "1 problem; nothing was imported" in str(caught.value)
    assert snapshot() == before
    with pytest.raises(CommandError, match="no study"):
        call_command("import_worksheet", "nope", str(good), "--rater", "R-01")
    with pytest.raises(CommandError, match="no file"):
        call_command(
            "import_worksheet", study.slug, str(tmp_path / "missing.csv"), "--rater", "R-01"
        )
    call_command("import_worksheet", study.slug, str(good), "--rater", "R-01")
    assert "Imported 1 test cases for R-01" in capsys.readouterr().out
    assert Rating.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_the_commands_exit_non_zero_with_the_errors_and_write_nothing(tmp_path):
    """As a script runs them: a real process, its exit status and stderr."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("the subprocess reaches the test database by its PostgreSQL URL")
    from tests.processes import manage

    study = make_study(slug="cli-results", raters=[UserFactory()])
    out = tmp_path / "worksheet.csv"
    exported = manage("export_results", study.slug, "--format", "worksheet-csv", "-o", str(out))
    assert exported.returncode == 0, exported.stderr
    key = manage("export_results", study.slug, "--format", "key-csv", "-o", str(tmp_path / "k.csv"))
    assert key.returncode == 1 and "only after the study is unblinded" in key.stderr
    assert not (tmp_path / "k.csv").exists()
    bad = tmp_path / "bad.csv"
    bad.write_bytes(BAD_FILES["confidence differs"][0])
    failed = manage("import_worksheet", study.slug, str(bad), "--rater", "R-01")
    assert failed.returncode == 1
    assert "Row 3, column Confidence" in failed.stderr and "nothing was imported" in failed.stderr
    assert not Rating.objects.filter(assignment__test_case__study=study).exists()
    filled = out.read_text(encoding="utf-8-sig").replace(",,,,,,,,", ",0,0,0,0,0,0,Low,")
    out.write_text(filled, encoding="utf-8")
    imported = manage("import_worksheet", study.slug, str(out), "--rater", "R-01")
    assert imported.returncode == 0, imported.stderr
    assert Rating.objects.filter(assignment__test_case__study=study).count() == 8


# One write path -------------------------------------------------------------------------


def answers_for(study, n: int) -> dict:
    """A payload choosing, per dimension, the option that ``n`` picks among its choices."""
    responses, case = {}, {}
    for dimension in study.rubric.dimensions.all():
        kind = dimension.scoring()
        choices = list(kind.cell_choices)
        answer = {"choice": choices[n % len(choices)]}
        if kind.scope == "case":
            case[dimension.key] = answer
        else:
            for offset, label in enumerate(("A", "B")):
                answer = {"choice": choices[(n + offset) % len(choices)]}
                responses.setdefault(label, {})[dimension.key] = answer
    return {"responses": responses, "case": case, "confidence": "medium", "notes": f"n{n}"}


def recorded(study) -> list:
    """Every stored row of the study's ratings, by case and label, without ids or times."""
    rows = []
    for assignment in Assignment.objects.filter(test_case__study=study).order_by(
        "test_case__case_id"
    ):
        rows.append(
            (
                assignment.test_case.case_id,
                assignment.status,
                assignment.flipped,
                assignment.case_scores,
                assignment.confidence,
                assignment.notes,
                assignment.draft,
                [
                    (r.label, r.shown_label, r.scores, r.total)
                    for r in assignment.ratings.order_by("label")
                ],
                [revision.submitted for revision in assignment.revisions.order_by("pk")],
            )
        )
    return rows


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("preset", ["likert", "harm", "pairwise", "correctness"])
def test_the_screen_and_a_worksheet_store_the_same_answers_identically(client, preset):
    """Answers given on screen in one study and by worksheet in its twin are stored alike,
    revisions included, and give the same agreement result."""
    from tests.agreement.oracle import result_from_scratch

    twins = []
    for slug in (f"{preset}-screen", f"{preset}-sheet"):
        users = [UserFactory(), UserFactory()]
        study = make_study(slug=slug, cases=4, raters=users, status=Study.Status.DRAFT)
        Assignment.objects.filter(test_case__study=study).delete()
        rubric_replace_with_preset(study=study, preset=preset, actor=None)
        Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
        study.refresh_from_db()
        for rater in study.memberships.filter(role=Membership.Role.RATER):
            assignments_create_all(study=study, rater=rater)
        twins.append((study, users))
    (screen, screen_users), (sheet, _) = twins
    consent_all(screen)

    for round_ in range(2):  # the second round revises every answer
        for pseudonym, user in zip(("R-01", "R-02"), screen_users, strict=True):
            rater = screen.memberships.get(pseudonym=pseudonym)
            client.force_login(user)
            for n, assignment in enumerate(rater.assignments.order_by("test_case__case_id")):
                response = client.post(
                    reverse("annotation:rate", args=[assignment.uuid]),
                    {
                        "payload": json.dumps(answers_for(screen, n + round_ + len(pseudonym))),
                        "version": str(Assignment.objects.get(pk=assignment.pk).version),
                    },
                )
                assert response.status_code == 302, response.content[:500]
        for pseudonym in ("R-01", "R-02"):
            data = export_bytes(screen, "worksheet-csv", rater=pseudonym)
            run_import(sheet, data, rater=pseudonym)

    assert recorded(sheet) == recorded(screen)
    assert RatingRevision.objects.filter(assignment__test_case__study=sheet).count() == 8
    assert set(
        Assignment.objects.filter(test_case__study=sheet).values_list("source", flat=True)
    ) == {Assignment.Source.WORKSHEET}
    # The same statistics; only quality control differs: worksheet cases have no time.
    (from_sheet, n_sheet), (from_screen, n_screen) = (
        result_from_scratch(study=sheet),
        result_from_scratch(study=screen),
    )
    assert n_sheet == n_screen
    assert {**from_sheet, "qc": None} == {**from_screen, "qc": None}


def test_cases_imported_from_a_worksheet_are_untimed_in_quality_control(study, fresh_rater):
    from agreement.qc.checks import rater_checks
    from agreement.selectors import qc_case_records

    submit_all(study, limit=2)
    data = export_bytes(study, "worksheet-csv", rater="R-01").replace(b"R-01", b"R-03")
    run_import(study, data, rater="R-03")
    checks = rater_checks(cases=qc_case_records(study=study), agreement=None)
    assert (checks["R-03"]["median_seconds"], checks["R-03"]["untimed"]) == (None, 2)
    assert checks["R-01"]["untimed"] == 0 and checks["R-01"]["median_seconds"] > 0


# The k-raters design -------------------------------------------------------------------


def test_an_import_that_would_give_a_case_more_raters_than_the_design_is_refused():
    """k = 2: a worksheet naming a case that already has its two raters imports nothing,
    and the message names the cases; the check-only run says the same."""
    from annotation.services.assignment import study_assign

    study = make_study(cases=4, raters=[], status=Study.Status.OPEN)
    Study.objects.filter(pk=study.pk).update(raters_per_item=2)
    study.refresh_from_db()
    for _ in range(3):
        membership_add(study=study, user=UserFactory(), role=Membership.Role.RATER)
    study_assign(study=study, actor=study.lead)
    r01 = study.memberships.get(pseudonym="R-01")
    theirs = set(r01.assignments.values_list("test_case__case_id", flat=True))
    others = sorted({f"TC-00{n}" for n in range(1, 5)} - theirs)
    assert others  # every case has two of the three raters, so R-01 lacks some
    rows = [HEADER]
    for case_id in [*sorted(theirs)[:1], *others]:
        rows += [f"{case_id},A,4,2,4,3,2,15,High,", f"{case_id},B,2,1,2,2,0,7,High,"]
    before = snapshot()
    for dry_run in (True, False):
        with pytest.raises(worksheets.WorksheetError) as caught:
            run_import(study, csv_bytes(*rows), rater="R-01", dry_run=dry_run)
        message = str(caught.value)
        assert "2 raters" in message and all(case_id in message for case_id in others)
        assert sorted(theirs)[0] not in message
        assert snapshot() == before
    per_case = Counter(
        Assignment.objects.filter(test_case__study=study).values_list("test_case_id", flat=True)
    )
    assert set(per_case.values()) == {2}
    # The rater's own cases import as before.
    own = [HEADER] + [row for row in rows[1:] if row.split(",")[0] in theirs]
    assert run_import(study, csv_bytes(*own), rater="R-01").assigned == 0


def test_an_import_may_add_a_case_that_has_room_in_the_design(fresh_rater):
    """A withdrawn rater's place is free again: the import takes it."""
    study = fresh_rater.study
    Study.objects.filter(pk=study.pk).update(raters_per_item=2)
    study.refresh_from_db()
    study.memberships.filter(pseudonym="R-02").update(status=Membership.Status.WITHDRAWN)
    data = csv_bytes(HEADER, "TC-001,A,0,0,0,0,0,0,Low,", "TC-001,B,0,0,0,0,0,0,Low,")
    assert run_import(study, data, rater="R-03").assigned == 1


def test_an_unknown_confidence_is_reported_at_its_own_cell(study):
    data = csv_bytes(
        HEADER,
        "TC-001,A,0,0,0,0,0,0,High,",
        "TC-001,B,0,0,0,0,0,0,Very high,",
    )
    with pytest.raises(worksheets.WorksheetError) as caught:
        run_import(study, data)
    problems = [(p.row, p.column, p.message) for p in caught.value.problems]
    assert problems == [(3, "Confidence", "The confidence is Very high; give Low, Medium or High.")]


def test_the_result_counts_every_stored_rating_as_new_or_replacing():
    """Issue 41: 9,999 ratings stored were reported as "created 0, updated 0" (the cases had
    been assigned, not rated). Each case recorded is new or replaces a submitted rating."""
    study = make_study(slug="counted", cases=4, raters=[UserFactory()])
    r01 = study.memberships.get(pseudonym="R-01")
    first = r01.assignments.order_by("position").first()
    submit(first, payload_for(1))
    rows = [HEADER]
    for case_id in study.test_cases.order_by("pk").values_list("case_id", flat=True):
        rows += [f"{case_id},A,4,2,4,3,2,15,High,", f"{case_id},B,2,1,2,2,0,7,High,"]
    checked = run_import(study, csv_bytes(*rows), rater="R-01", dry_run=True)
    done = run_import(study, csv_bytes(*rows), rater="R-01")
    for result in (checked, done):
        assert (result.cases, result.created, result.updated, result.assigned) == (4, 3, 1, 0)
    assert r01.assignments.filter(status="submitted").count() == 4
