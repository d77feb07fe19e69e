"""Skips in the files: kept apart in the exports, and marked in an offline worksheet."""

import csv
import io

import pytest

from annotation import exports
from annotation.models import Assignment
from annotation.services.skipping import case_skip
from annotation.worksheets import WorksheetError
from tests.payloads import payload_for, submit

from .test_skipping import balanced, first_assignment
from .test_worksheets import export_bytes, run_import, snapshot

pytestmark = pytest.mark.django_db


def rows(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))


def test_a_skip_is_in_the_skips_file_and_in_no_rating_file():
    study = balanced(raters=2, cases=3, k=2)
    skipped = first_assignment(study)
    other = first_assignment(study, "R-02")
    submit(other, payload_for(1))
    case_skip(assignment=skipped, reason="distressing", note="Not today.")
    skips = rows(export_bytes(study, exports.SKIPS_CSV))
    assert skips[0][:3] == ["rater", "rater_status", "test_case"]
    (row,) = skips[1:]
    assert row[0] == "R-01" and row[2] == skipped.test_case.case_id
    assert row[5:7] == ["distressing", "Not today."]
    long = rows(export_bytes(study, exports.LONG_CSV))
    assert {r[long[0].index("rater")] for r in long[1:]} == {"R-02"}
    sheet = rows(export_bytes(study, exports.WORKSHEET_CSV))
    rater_column = sheet[0].index("Rater")
    assert not [
        r for r in sheet[1:] if r[0] == skipped.test_case.case_id and r[rater_column] == "R-01"
    ]
    assert "## Skips (`skips.csv`)" in export_bytes(study, exports.DICTIONARY_MD).decode()


def test_a_rater_worksheet_marks_skips_and_a_row_marked_skipped_is_imported_as_a_skip():
    study = balanced(raters=3, cases=3, k=2)
    rater = study.memberships.get(pseudonym="R-01")
    first, second = rater.assignments.select_related("test_case").order_by("position")[:2]
    sheet = rows(export_bytes(study, exports.WORKSHEET_CSV, rater="R-01"))
    header = sheet[0]
    mark = header.index(exports.SKIPPED_HEADING)
    assert header[mark + 1] == "Rater"
    marked = [list(row) for row in sheet]
    for row in marked:
        if row[0] == first.test_case.case_id:
            row[mark] = "expertise"
            row[header.index("Notes")] = "Beyond me."
    out = io.StringIO()
    csv.writer(out).writerows(marked)
    result = run_import(study, out.getvalue().encode())
    assert result.skips == 1
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.status == Assignment.Status.SKIPPED
    assert (first.skip_reason, first.skip_note) == ("expertise", "Beyond me.")
    assert second.status == Assignment.Status.TODO  # left blank: untouched
    assert first.test_case.assignments.exclude(status="skipped").count() == 2  # handed on
    again = rows(export_bytes(study, exports.WORKSHEET_CSV, rater="R-01"))
    assert {r[mark] for r in again[1:] if r[0] == first.test_case.case_id} == {"yes"}
    # The same file again changes nothing: the case is skipped already.
    before = snapshot()
    run_import(study, out.getvalue().encode())
    assert snapshot() == before


def test_a_row_marked_skipped_with_scores_or_an_unknown_mark_imports_nothing():
    study = balanced(raters=3, cases=3, k=2)
    rater = study.memberships.get(pseudonym="R-01")
    case_id = rater.assignments.select_related("test_case").order_by("position")[0]
    case_id = case_id.test_case.case_id
    sheet = rows(export_bytes(study, exports.WORKSHEET_CSV, rater="R-01"))
    header = sheet[0]
    column = header.index(exports.SKIPPED_HEADING)
    for mark, scored in (("yes", True), ("maybe", False)):
        edited = [list(row) for row in sheet]
        for row in edited[1:]:
            if row[0] == case_id:
                row[column] = mark
                if scored:
                    row[header.index("Confidence")] = "High"
        out = io.StringIO()
        csv.writer(out).writerows(edited)
        before = snapshot()
        with pytest.raises(WorksheetError) as error:
            run_import(study, out.getvalue().encode())
        assert "Skipped" in str(error.value)
        assert snapshot() == before


def test_a_worksheet_whose_skip_fails_after_its_ratings_records_nothing(monkeypatch):
    # A worksheet with scores and a skip is one import, all or nothing: should the skip be
    # refused once the scores are written (here the rater is paused in between, as another
    # request could), the scores are undone with it.
    from annotation import worksheets
    from studies.models import Membership

    study = balanced(raters=3, cases=3, k=2)
    rater = study.memberships.get(pseudonym="R-01")
    first, second = rater.assignments.select_related("test_case").order_by("position")[:2]
    submit(second, payload_for(1))
    sheet = rows(export_bytes(study, exports.WORKSHEET_CSV, rater="R-01"))
    header = sheet[0]
    marked = [list(row) for row in sheet]
    for row in marked:
        if row[0] == first.test_case.case_id:
            row[header.index(exports.SKIPPED_HEADING)] = "yes"
        if row[0] == second.test_case.case_id:
            row[header.index("Notes")] = "Revised offline."
    out = io.StringIO()
    csv.writer(out).writerows(marked)
    real_skip = worksheets.case_skip

    def paused_meanwhile(**kwargs):
        Membership.objects.filter(pk=rater.pk).update(status=Membership.Status.PAUSED)
        return real_skip(**kwargs)

    monkeypatch.setattr(worksheets, "case_skip", paused_meanwhile)
    before = snapshot()
    with pytest.raises(WorksheetError):
        run_import(study, out.getvalue().encode())
    Membership.objects.filter(pk=rater.pk).update(status=Membership.Status.ACTIVE)
    assert snapshot() == before
    second.refresh_from_db()
    assert second.notes != "Revised offline."
