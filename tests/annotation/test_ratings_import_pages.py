"""The lead's page of the import by system: the rule stated, check, Import now, problems;
and the report's deviation line."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from agreement.report.sections import study_report
from studies.models import StudyEvent

from .test_ratings_by_system import (
    HEADER,
    SYSTEMS,
    csv_bytes,
    full_file,
    likert_study,
    rating_made_in_concord,
)

pytestmark = pytest.mark.django_db


def test_the_lead_checks_then_imports_and_the_history_and_report_say_so(client):
    study = likert_study()
    client.force_login(study.lead)
    url = reverse("annotation:ratings_import", args=[study.slug])
    page = client.get(url)
    assert page.status_code == 200
    assert "Not blinded by Concord" in page.text
    checked = client.post(
        url, {"file": SimpleUploadedFile("r.csv", full_file()), "action": "check"}, follow=True
    )
    assert "The file is fine: 18 ratings in 18 rows, of 3 test cases by 2 raters" in checked.text
    token = checked.context["checked_token"]
    imported = client.post(url, {"checked": token}, follow=True)
    assert "Imported 18 ratings of 2 raters (2 new) from elsewhere" in imported.text
    assert "This study holds 18 ratings imported from elsewhere." in imported.text
    assert study.events.filter(kind=StudyEvent.Kind.RATINGS_IMPORTED).exists()
    deviations = study_report(study=study)["deviations"]
    assert {
        "when": None,
        "what": "Ratings imported from elsewhere",
        "reason": "18 ratings imported from elsewhere, not blinded by Concord",
    } in deviations


def test_problems_are_listed_on_the_page(client):
    study = likert_study()
    client.force_login(study.lead)
    data = csv_bytes(HEADER, f"TC-001,{SYSTEMS[0]},Ann,7,5,5,,,")
    page = client.post(
        reverse("annotation:ratings_import", args=[study.slug]),
        {"file": SimpleUploadedFile("r.csv", data), "action": "import"},
        follow=True,
    )
    assert "Nothing was imported." in page.text
    assert "Row 2, column Helpfulness: 7 is not allowed" in page.text


def test_the_page_says_why_a_study_with_concord_raters_cannot_import(client):
    study = likert_study()
    rating_made_in_concord(study)
    client.force_login(study.lead)
    page = client.get(reverse("annotation:ratings_import", args=[study.slug]))
    assert "holds ratings made in Concord" in page.text
    assert 'name="file"' not in page.text


def test_the_results_page_links_the_lead_to_it(client):
    study = likert_study()
    client.force_login(study.lead)
    page = client.get(reverse("annotation:results", args=[study.slug]))
    assert reverse("annotation:ratings_import", args=[study.slug]) in page.text
