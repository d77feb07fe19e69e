"""Human labels collected in another tool, imported as a worksheet without confidence or
totals when the study allows it: kept blank and marked imported, never a default."""

import csv
import io

import pytest

from annotation import exports, worksheets
from annotation.models import Assignment
from annotation.worksheets import WorksheetError
from studies import services as study_services
from studies.models import Membership, Study
from studies.services import membership_add, study_create

from ..factories import UserFactory, make_cases

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    study = study_create(slug="labels", name="Labels", lead=UserFactory(), rubric_preset="pairwise")
    study_services.test_cases_add(study=study, systems=["x", "y"], cases=make_cases(2, ("x", "y")))
    membership_add(study=study, user=UserFactory(), role=Membership.Role.RATER)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    study.refresh_from_db()
    return study


SHEET = b"TC-ID,Response,Preference,Notes\nTC-001,A,-1,\nTC-001,B,-1,\nTC-002,A,2,\nTC-002,B,2,\n"


def test_without_the_option_confidence_and_total_are_required(study):
    with pytest.raises(WorksheetError) as error:
        worksheets.worksheet_import(study=study, pseudonym="R-01", filename="s.csv", data=SHEET)
    text = str(error.value.problems)
    assert "Total" in text and "Confidence" in text
    assert not Assignment.objects.filter(status="submitted").exists()


def test_with_the_option_they_stay_blank_and_exports_mark_them_imported(study):
    Study.objects.filter(pk=study.pk).update(imported_optional=True)
    study.refresh_from_db()
    worksheets.worksheet_import(study=study, pseudonym="R-01", filename="s.csv", data=SHEET)
    submitted = Assignment.objects.filter(status="submitted")
    assert submitted.count() == 2
    assert set(submitted.values_list("confidence", flat=True)) == {""}
    assert set(submitted.values_list("source", flat=True)) == {Assignment.Source.WORKSHEET}

    file = io.BytesIO()
    exports.export_write(study=study, fmt="long-csv", file=file)
    rows = list(csv.DictReader(io.StringIO(file.getvalue().decode("utf-8-sig"))))
    assert rows and all(row["imported"] in ("True", "true", "1", "yes") for row in rows)
    assert all(row["confidence"] == "" for row in rows)
    assert "Medium" not in file.getvalue().decode("utf-8-sig")
