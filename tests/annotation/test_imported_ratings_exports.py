"""Ratings imported by system do not come back under key labels before unblinding (issue 38).

The route, as reported: the lead imports ratings with one system scored 5 and the other 1
(``POST .../ratings-import/``); the long export and the worksheet then listed the values
per ``response_label``, so each case's key could be read off them. Before unblinding the
label-keyed exports (worksheet, long table, gold file, the bundle that holds them) now
leave imported ratings out; the results page and the data dictionary say so; after
unblinding they are exported like any rating.
"""

import csv
import io

import pytest
from django.urls import reverse

from annotation import ratings_by_system
from annotation.exports import export_write
from studies.models import Study
from studies.services import study_create
from studies.services import test_cases_add as cases_add
from tests.factories import UserFactory, make_cases

pytestmark = pytest.mark.django_db

SYSTEMS = ("Zephyr-Alpha-7", "Quokka-Omega-3")
HEADER = "Case ID,System,Rater,Helpfulness,Clarity,Accuracy,Confidence,Notes,Timestamp"


@pytest.fixture
def imported():
    lead = UserFactory()
    study = study_create(slug="imported-x", name="x", lead=lead, rubric_preset="likert")
    cases_add(study=study, systems=list(SYSTEMS), cases=make_cases(4, SYSTEMS))
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    study.refresh_from_db()
    lines = [HEADER]
    for n in range(1, 5):
        for rater in ("Ann Example", "Bo Example"):
            for system, value in zip(SYSTEMS, (5, 1), strict=True):
                lines.append(f"TC-{n:03d},{system},{rater},{value},{value},{value},high,,")
    ratings_by_system.ratings_file_import(
        study=study, filename="r.csv", data=("\n".join(lines) + "\n").encode(), actor=lead
    )
    return study


def _export(study, fmt) -> list[list[str]]:
    out = io.BytesIO()
    export_write(study=study, fmt=fmt, file=out)
    return list(csv.reader(io.StringIO(out.getvalue().decode("utf-8-sig"))))


def test_imported_ratings_stay_out_of_label_keyed_exports_until_unblinding(client, imported):
    for fmt in ("long-csv", "worksheet-csv", "gold-csv"):
        header, *rows = _export(imported, fmt)
        assert rows == [], (fmt, rows[:3])
    dictionary = _dictionary(imported)
    assert "16 ratings were imported from elsewhere by system name" in dictionary
    client.force_login(imported.lead)
    page = client.get(reverse("annotation:results", args=[imported.slug])).text
    assert "16 ratings imported from elsewhere by system name are left out" in page
    # Unblinded, the key is no secret: every imported rating is exported, with its system.
    Study.objects.filter(pk=imported.pk).update(status=Study.Status.UNBLINDED)
    imported.refresh_from_db()
    header, *rows = _export(imported, "long-csv")
    assert len({(r[header.index("rater")], r[header.index("test_case")]) for r in rows}) == 8
    by_system = {r[header.index("system")] for r in rows}
    assert by_system == set(SYSTEMS)


def _dictionary(study) -> str:
    out = io.BytesIO()
    export_write(study=study, fmt="dictionary-md", file=out)
    return out.getvalue().decode()
