"""Exports: the worksheet, the long table, the dictionary and the key; blinding and safety."""

import csv
import io
import itertools
import zipfile

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.http import StreamingHttpResponse
from django.urls import reverse
from openpyxl import load_workbook

from annotation import export_xlsx, exports
from annotation.models import Assignment, Rating
from annotation.worksheets import unneutralise
from annotation.worksheets.columns import FORMULA_START, PLAIN_NUMBER, neutralise
from studies.models import BlindedLabel, Study
from tests.payloads import (
    SYSTEMS,
    close_and_unblind,
    coordinator_of,
    payload_for,
    study_with_systems,
    submit,
    submit_all,
)

from ..factories import UserFactory, make_study

pytestmark = pytest.mark.django_db

# The validator instructions' worksheet template, in its order, then the rater.
REFERENCE_HEADER = [
    "TC-ID", "Response", "Depth", "Evidence", "Alternatives", "Structure",
    "Actionability", "Total", "Confidence", "Notes", "Rater",
]  # fmt: skip
TEXT_FORMATS = ["worksheet-csv", "long-csv", "dictionary-md"]


def export_url(study, fmt, **query):
    url = reverse("annotation:export", args=[study.slug, fmt])
    if query:
        url += "?" + "&".join(f"{k}={v}" for k, v in query.items())
    return url


def body(response) -> bytes:
    if response.streaming:
        return b"".join(response.streaming_content)
    return response.content


def read_csv(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))


def xlsx_rows(data: bytes) -> list[list]:
    sheet = load_workbook(io.BytesIO(data)).active
    return [list(row) for row in sheet.iter_rows(values_only=True)]


def every_byte(data: bytes) -> bytes:
    """The file, and for an .xlsx also every part inside its zip archive."""
    if data[:2] == b"PK":
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return data + b"".join(archive.read(name) for name in archive.namelist())
    return data


@pytest.fixture
def rated(study):
    """The shared study (4 cases, R-01 and R-02), with R-01's first two cases submitted."""
    r01 = study.memberships.get(pseudonym="R-01")
    for n, assignment in enumerate(r01.assignments.order_by("position")[:2]):
        submit(assignment, payload_for(n, notes=f"note {n}"), active_seconds=40)
    return study


# The worksheet ---------------------------------------------------------------------------


def test_worksheet_has_the_instructions_columns_in_order_then_the_rater(rated):
    rows = list(exports.worksheet_rows(study=rated))
    assert rows[0] == REFERENCE_HEADER


def test_the_excel_worksheet_has_a_frozen_bold_header_and_sized_columns(rated):
    file = io.BytesIO()
    exports.export_write(study=rated, fmt="worksheet-xlsx", file=file)
    sheet = load_workbook(io.BytesIO(file.getvalue())).active
    assert [cell.value for cell in sheet[1]] == REFERENCE_HEADER
    assert sheet.freeze_panes == "A2" and all(cell.font.b for cell in sheet[1])
    widths = {sheet.cell(1, n).value: sheet.column_dimensions[sheet.cell(1, n).column_letter].width
              for n in range(1, sheet.max_column + 1)}  # fmt: skip
    assert widths["Notes"] >= 50 and widths["TC-ID"] >= 10
    assert widths["Actionability"] >= len("Actionability")


def test_worksheet_lists_every_assigned_case_and_response_blank_until_submitted(rated):
    rows = list(exports.worksheet_rows(study=rated))[1:]
    assert len(rows) == 2 * 4 * 2  # raters x cases x responses
    # Ordered by rater, test case position and label: nothing depends on the system.
    assert [[r[10], *r[:2]] for r in rows[:4]] == [
        ["R-01", "TC-001", "A"], ["R-01", "TC-001", "B"],
        ["R-01", "TC-002", "A"], ["R-01", "TC-002", "B"],
    ]  # fmt: skip
    submitted = {
        (a.test_case.case_id, r.label): r
        for a in Assignment.objects.filter(rater__pseudonym="R-01", status="submitted")
        for r in a.ratings.all()
    }
    for row in rows:
        rating = submitted.get((row[0], row[1])) if row[10] == "R-01" else None
        if rating is None:
            assert row[2:10] == [""] * 8
            continue
        keys = ["depth", "evidence", "alternatives", "structure", "actionability"]
        assert row[2:7] == [rating.scores[k]["points"] for k in keys]
        assert row[7] == rating.total == sum(row[2:7])
        assert row[8] == "Medium"
        assert row[9].startswith("note ")


def test_worksheet_for_one_rater_is_their_offline_template(rated):
    rows = list(exports.worksheet_rows(study=rated, rater="R-02"))[1:]
    assert {r[-1] for r in rows} == {"R-02"}
    assert len(rows) == 8 and all(r[2] == "" for r in rows)


def test_worksheet_columns_follow_another_rubric():
    study = make_study(raters=[UserFactory()])
    from studies.services import rubric_replace_with_preset

    Study.objects.filter(pk=study.pk).update(status=Study.Status.DRAFT)
    study.refresh_from_db()
    Assignment.objects.filter(test_case__study=study).delete()
    rubric_replace_with_preset(study=study, preset="likert", actor=None)
    study.refresh_from_db()
    header = next(exports.worksheet_rows(study=study))
    assert header == ["TC-ID", "Response", "Helpfulness", "Clarity", "Accuracy",
                      "Total", "Confidence", "Notes", "Rater"]  # fmt: skip


# The long table --------------------------------------------------------------------------


def test_long_table_has_one_row_per_rating_and_dimension(rated):
    rows = list(exports.long_rows(study=rated))
    header, data = rows[0], rows[1:]
    assert header[:8] == ["rater", "rater_status", "phase", "test_case", "stratum",
                          "response_label", "shown_label", "flipped"]  # fmt: skip
    assert len(data) == Rating.objects.count() * 5
    column = {name: i for i, name in enumerate(header)}
    first = Assignment.objects.filter(rater__pseudonym="R-01").order_by("test_case__position")
    first = first.filter(status="submitted").first()
    rating = first.ratings.get(label="A")
    depth = next(
        r for r in data
        if r[column["test_case"]] == first.test_case.case_id
        and r[column["response_label"]] == "A" and r[column["dimension"]] == "depth"
    )  # fmt: skip
    items = rating.scores["depth"]["items"]
    assert depth[column["points"]] == rating.scores["depth"]["points"]
    assert depth[column["items"]].count(" | ") == max(0, len(items) - 1)
    halves = sum(1 for item in items if item["half"])
    assert depth[column["items"]].count("½ ") == halves
    count = len(items) - halves / 2
    assert depth[column["value"]] == (f"{count:g}")
    assert depth[column["stratum"]] == first.test_case.stratum
    assert depth[column["confidence"]] == "Medium"
    assert depth[column["active_seconds"]] == 40
    assert depth[column["version"]] == first.version
    assert depth[column["submitted_at"]].endswith("Z")
    assert depth[column["phase"]] == "main"
    evidence = next(
        r for r in data
        if r[column["test_case"]] == first.test_case.case_id
        and r[column["response_label"]] == "B" and r[column["dimension"]] == "evidence"
    )  # fmt: skip
    checked = first.ratings.get(label="B").scores["evidence"]["checked"]
    assert evidence[column["value"]] == ";".join("yes" if c else "no" for c in checked)


def test_long_table_records_flags_and_the_label_shown_on_flipped_screens():
    rater = UserFactory()
    study = make_study(raters=[])
    Study.objects.filter(pk=study.pk).update(side_mode="balanced")
    study.refresh_from_db()
    from annotation.services import assignments_create_all
    from studies.services import membership_add

    membership = membership_add(study=study, user=rater, role="rater")
    assignments_create_all(study=study, rater=membership)
    flipped = membership.assignments.filter(flipped=True).first()
    submit(flipped, payload_for(2))
    rows = list(exports.long_rows(study=study))
    column = {name: i for i, name in enumerate(rows[0])}
    for row in rows[1:]:
        assert row[column["flipped"]] == "yes"
        assert row[column["shown_label"]] == {"A": "B", "B": "A"}[row[column["response_label"]]]
    flagged = [r for r in rows[1:] if r[column["flagged"]] == "yes"]
    assert flagged and flagged[0][column["flag_note"]] == "Hard to separate factors."


def test_long_table_marks_answers_from_a_worksheet_and_gives_their_points():
    from annotation.worksheets import worksheet_import

    study = make_study(cases=2, raters=[UserFactory(), UserFactory()])
    submit_all(study, limit=1)
    sheet = "".join(exports.export_text(study=study, fmt="worksheet-csv", rater="R-02"))
    worksheet_import(study=study, pseudonym="R-02", filename="r02.csv", data=sheet.encode())
    rows = list(exports.long_rows(study=study))
    column = {name: i for i, name in enumerate(rows[0])}
    by_rater = {}
    for row in rows[1:]:
        by_rater.setdefault(row[column["rater"]], []).append(row)
    assert {row[column["imported"]] for row in by_rater["R-01"]} == {""}
    assert {row[column["imported"]] for row in by_rater["R-02"]} == {"yes"}
    depth = [row for row in by_rater["R-02"] if row[column["dimension"]] in ("depth", "evidence")]
    # Only the points came back from the worksheet: what was counted is not known.
    assert {(row[column["items"]], row[column["value"]]) for row in depth} == {("", "")}
    assert all(isinstance(row[column["points"]], int) for row in depth)
    screen = [row for row in by_rater["R-01"] if row[column["dimension"]] == "evidence"]
    assert all(row[column["value"]].count(";") == 2 for row in screen)


def test_data_dictionary_describes_every_column(rated):
    text = exports.data_dictionary(study=rated)
    for name, _ in exports.LONG_COLUMNS:
        assert f"| {name} |" in text
    assert (
        "| Depth | `depth` | Depth of Analysis | counted | per response | required "
        "| points: 0, 2, 4, 5 |" in text
    )
    assert "never counts as 0 points" in text and "the Total included" in text
    assert " | ".join(REFERENCE_HEADER) in text


# Blinding --------------------------------------------------------------------------------


def test_before_unblinding_no_export_contains_a_system_name(client):
    study = study_with_systems()
    submit_all(study)
    client.force_login(study.lead)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    seen = []
    for fmt in ["worksheet-csv", "worksheet-xlsx", "long-csv", "dictionary-md"]:
        response = client.get(export_url(study, fmt))
        assert response.status_code == 200
        data = every_byte(body(response)) + response["Content-Disposition"].encode()
        for name in SYSTEMS:
            for form in {name, name.lower(), name.upper()}:
                assert form.encode() not in data, (fmt, form)
        seen.append(fmt)
    # The seed with the public procedure and guessable names would give the key away.
    assert f"seed: {study.blinding_seed}" not in exports.data_dictionary(study=study).lower()
    assert client.get(export_url(study, "key-csv")).status_code == 403
    with pytest.raises(exports.ExportNotAllowedError):
        exports.key_rows(study=study)
    assert len(seen) == 4


def test_blinded_row_order_does_not_follow_the_systems():
    """The same study with the systems' names swapped exports byte for byte the same rows."""
    first = study_with_systems(slug="order-one")
    second = make_study(slug="order-two", systems=tuple(reversed(SYSTEMS)),
                        raters=[UserFactory(), UserFactory()])  # fmt: skip
    for study in (first, second):
        submit_all(study, limit=2)
    one = list(exports.worksheet_rows(study=first))
    two = list(exports.worksheet_rows(study=second))
    assert one == two


def test_after_unblinding_exports_name_the_systems_and_the_key(client):
    study = study_with_systems()
    submit_all(study, limit=3)
    close_and_unblind(study)
    client.force_login(study.lead)
    truth = {
        (b.test_case.case_id, b.label): b.response.system.name
        for b in BlindedLabel.objects.filter(test_case__study=study).select_related(
            "test_case", "response__system"
        )
    }
    worksheet = read_csv(body(client.get(export_url(study, "worksheet-csv"))))
    assert worksheet[0][-1] == "System"
    assert worksheet[0][-2:] == ["Rater", "System"]
    assert all(truth[row[0], row[1]] == row[-1] for row in worksheet[1:])
    xlsx = xlsx_rows(body(client.get(export_url(study, "worksheet-xlsx"))))
    assert xlsx[0][-1] == "System" and {row[-1] for row in xlsx[1:]} == set(SYSTEMS)
    long = read_csv(body(client.get(export_url(study, "long-csv"))))
    assert long[0][-1] == "system"
    index = long[0].index
    assert all(truth[r[index("test_case")], r[index("response_label")]] == r[-1] for r in long[1:])
    key = read_csv(body(client.get(export_url(study, "key-csv"))))
    assert key[0] == ["TC-ID", "Response", "System"]
    assert {(r[0], r[1]): r[2] for r in key[1:]} == truth
    dictionary = body(client.get(export_url(study, "dictionary-md"))).decode()
    assert "| system |" in dictionary and "Blinding seed: 42" in dictionary


# Formula injection -----------------------------------------------------------------------

DANGEROUS = ['=HYPERLINK("http://x")', "+1+1", "-2+3", "@SUM(A1)", "\tTAB", "\rCR"]


def test_cells_that_would_run_as_formulas_are_quoted_in_csv_and_xlsx(study):
    r01 = study.memberships.get(pseudonym="R-01")
    assignments = list(r01.assignments.order_by("test_case__position"))
    for n, danger in enumerate(DANGEROUS[:4]):
        payload = payload_for(n, notes=danger)
        payload["responses"]["A"]["depth"]["items"] = [
            {"text": "=cmd|' /C calc'!A0", "half": False}
        ]
        submit(assignments[n], payload)
    notes = {
        row[0]: row[9]
        for row in read_csv(b"".join(s.encode() for s in exports.export_text(study=study, fmt="worksheet-csv")))[1:]
        if row[10] == "R-01" and row[1] == "A"
    }  # fmt: skip
    for n, danger in enumerate(DANGEROUS[:4]):
        assert notes[f"TC-{n + 1:03d}"] == "'" + danger
    long = read_csv(b"".join(s.encode() for s in exports.export_text(study=study, fmt="long-csv")))
    items = {
        row[long[0].index("items")]
        for row in long[1:]
        if row[long[0].index("dimension")] == "depth"
    }
    assert "'=cmd|' /C calc'!A0" in items
    file = io.BytesIO()
    export_xlsx.xlsx_write(exports.worksheet_rows(study=study), file)
    sheet = load_workbook(io.BytesIO(file.getvalue())).active
    cells = [cell for row in sheet.iter_rows() for cell in row if isinstance(cell.value, str)]
    assert all(cell.data_type == "s" for cell in cells)  # no formula anywhere
    # Typed as text, the cells hold exactly what the rater wrote, with no visible quote;
    # Excel's hidden quote prefix keeps them text when edited.
    texts = {cell.value: cell for cell in cells}
    for danger in DANGEROUS[:4]:
        assert danger in texts and "'" + danger not in texts
        assert texts[danger].quotePrefix
    with zipfile.ZipFile(io.BytesIO(file.getvalue())) as archive:
        assert b"<f>" not in archive.read("xl/worksheets/sheet1.xml")


@pytest.mark.parametrize("danger", DANGEROUS)
def test_neutralise_quotes_each_dangerous_start(danger):
    assert neutralise(danger) == "'" + danger
    assert neutralise("R-01") == "R-01" and neutralise(5) == 5
    assert neutralise("-2.5") == "-2.5"  # a number stays a number
    assert neutralise("-\u0663") == "'-\u0663"  # not with another script's digit


# Opened with another delimiter, these cells would split into one starting a formula.
SPLIT = ["see;=1+1", "see,=1+1", "a\t=1", "a|@SUM(A1)", 'x; "-2+3', "x, +1", "see;'=1+1"]


@pytest.mark.parametrize("text", SPLIT)
def test_a_formula_after_a_delimiter_is_quoted_where_it_would_start_a_cell(text):
    out = neutralise(text)
    assert out != text
    for delimiter in (",", ";", "\t", "|"):
        for cell in out.split(delimiter)[1:]:
            assert cell.lstrip(' "')[:1] not in ("=", "+", "-", "@"), (delimiter, out)
    assert unneutralise(out) == text


def test_every_short_text_comes_back_from_neutralise_exactly_and_starts_no_formula():
    alphabet = [",", ";", "\t", "|", "=", "+", "-", "@", "\r", "'", '"', " ", "a", "1"]
    for length in range(5):
        for chars in itertools.product(alphabet, repeat=length):
            text = "".join(chars)
            out = neutralise(text)
            assert unneutralise(out) == text, repr(text)
            if PLAIN_NUMBER.fullmatch(text):
                continue  # a number such as -1 stays a number
            assert not FORMULA_START.match(out), repr(out)
            for delimiter in (",", ";", "\t", "|"):
                for cell in out.split(delimiter)[1:]:
                    assert cell.lstrip(' "')[:1] not in ("=", "+", "-", "@"), repr(out)


# Streaming and memory --------------------------------------------------------------------


def test_csv_exports_stream(client, rated, lead):
    client.force_login(lead)
    for fmt in ("worksheet-csv", "long-csv"):
        response = client.get(export_url(rated, fmt))
        assert isinstance(response, StreamingHttpResponse)
        assert response["Content-Type"] == "text/csv; charset=utf-8"
        assert response["Cache-Control"] == "no-store"
        assert f'filename="{rated.slug}-' in response["Content-Disposition"]
    xlsx = client.get(export_url(rated, "worksheet-xlsx"))
    assert xlsx.streaming  # a FileResponse over the temporary file


def test_export_queries_do_not_grow_with_the_number_of_rows(django_assert_max_num_queries):
    small = make_study(slug="small", cases=2, raters=[UserFactory()])
    large = make_study(slug="large", cases=12, raters=[UserFactory(), UserFactory()])
    for study in (small, large):
        submit_all(study)
    counts = {}
    for study in (small, large):
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as queries:
            list(exports.worksheet_rows(study=study))
            list(exports.long_rows(study=study))
        counts[study.slug] = len(queries)
    assert counts["large"] == counts["small"]


# Permissions -----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["worksheet-csv", "worksheet-xlsx", "long-csv", "dictionary-md"])
def test_export_permissions(client, study, lead, rater, stranger, fmt):
    url = export_url(study, fmt)
    response = client.get(url)
    assert response.status_code == 302 and reverse("login") in response["Location"]
    client.force_login(rater)
    assert client.get(url).status_code == 403
    client.force_login(stranger)
    assert client.get(url).status_code == 404
    other = make_study(slug="elsewhere")
    client.force_login(coordinator_of(other))
    assert client.get(url).status_code == 404
    client.force_login(coordinator_of(study))
    assert client.get(url).status_code == 200
    client.force_login(lead)
    assert client.get(url).status_code == 200


def test_results_page_permissions(client, study, lead, rater, stranger):
    url = reverse("annotation:results", args=[study.slug])
    assert client.get(url).status_code == 302
    client.force_login(rater)
    assert client.get(url).status_code == 403
    client.force_login(stranger)
    assert client.get(url).status_code == 404
    client.force_login(coordinator_of(make_study(slug="elsewhere")))
    assert client.get(url).status_code == 404
    client.force_login(lead)
    response = client.get(url)
    assert response.status_code == 200
    assert "TC-004" in response.text and rater.username not in response.text


def test_unknown_format_and_rater_are_not_found(client, study, lead):
    client.force_login(lead)
    assert client.get(export_url(study, "pdf")).status_code == 404
    assert client.get(export_url(study, "worksheet-csv", rater="R-09")).status_code == 404
    assert client.get(export_url(study, "long-csv", rater="R-01")).status_code == 404
    response = client.get(export_url(study, "worksheet-csv", rater="R-02"))
    assert response.status_code == 200
    assert {row[-1] for row in read_csv(body(response))[1:]} == {"R-02"}


# Command line ----------------------------------------------------------------------------


def test_export_results_writes_each_format(rated, tmp_path, capsys):
    for fmt in ("worksheet-csv", "worksheet-xlsx", "long-csv", "dictionary-md"):
        path = tmp_path / f"out-{fmt}"
        call_command("export_results", rated.slug, "--format", fmt, "-o", str(path))
        assert path.stat().st_size > 0
        assert f"Wrote {fmt}" in capsys.readouterr().out
    assert read_csv((tmp_path / "out-worksheet-csv").read_bytes())[0] == REFERENCE_HEADER
    assert xlsx_rows((tmp_path / "out-worksheet-xlsx").read_bytes())[0] == REFERENCE_HEADER


def test_export_results_refuses_what_it_cannot_do(rated, tmp_path):
    out = str(tmp_path / "x.csv")
    with pytest.raises(CommandError, match="no study 'nope'"):
        call_command("export_results", "nope", "--format", "long-csv", "-o", out)
    with pytest.raises(CommandError, match="only after the study is unblinded"):
        call_command("export_results", rated.slug, "--format", "key-csv", "-o", out)
    with pytest.raises(CommandError, match="no rater R-09"):
        call_command("export_results", rated.slug, "--format", "worksheet-csv", "-o", out,
                     "--rater", "R-09")  # fmt: skip
    with pytest.raises(CommandError):
        call_command("export_results", rated.slug, "--format", "pdf", "-o", out)
    assert not (tmp_path / "x.csv").exists()
