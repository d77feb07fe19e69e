"""The report's checklist item "Rater number, recruitment, expertise, training and pay",
filled from the app's data: on the demo study, and what it says when something is missing."""

import io

import pytest
from django.core.management import call_command

from agreement.report.sections import study_report
from annotation.models import RaterProfile
from studies.models import Study

from ..factories import UserFactory, make_study

ITEM = "Rater number, recruitment, expertise, training and pay"


def raters_row(report):
    return next(item for item in report["checklist"] if item["key"] == "raters")


@pytest.mark.django_db
def test_the_demo_fills_the_raters_item(client):
    call_command("load_demo", stdout=io.StringIO())
    study = Study.objects.get(slug="reference-demo")
    report = study_report(study=study)
    row = raters_row(report)
    assert row == {"key": "raters", "item": ITEM, "done": True, "missing": ""}
    item = report["raters_item"]
    assert item["number"] == 3 and item["by_status"]["active"] == 3
    assert item["recruitment"].startswith("Three external raters")
    # Two raters answered the profile: every count is under 5, so suppressed.
    assert item["expertise"]["consented"] == 2
    language = item["expertise"]["questions"][0]
    assert language["label"] == "First language"
    assert all(row["count"] in (None, 0) for row in language["rows"])
    assert item["training"]["calibration_calls"][0]["attended"] == 2
    pay = item["pay"]
    assert (pay["basis"], pay["amount"], pay["currency"], pay["phase"]) == (
        "case",
        "6.00",
        "EUR",
        "main",
    )
    assert pay["summary"].startswith("6.00 EUR per case; hourly equivalent ")
    assert pay["warnings"] == []
    # The page shows it.
    assert client.login(username="coordinator", password="concord-demo")
    html = client.get(f"/s/{study.slug}/report/").content.decode()
    assert 'data-checklist="raters" data-done="yes"' in html
    assert ITEM in html and "Three external raters" in html
    assert "6.00 EUR per case; hourly equivalent" in html
    # Loading the demo again changes nothing.
    call_command("load_demo", stdout=io.StringIO())
    assert RaterProfile.objects.filter(rater__study=study).count() == 2


@pytest.mark.django_db
def test_the_item_says_what_is_missing():
    study = make_study(raters=[UserFactory()], status=Study.Status.DRAFT)
    row = raters_row(study_report(study=study))
    assert not row["done"]
    assert row["missing"] == (
        "needs the recruitment text (Rater welfare page); expertise: profile questions "
        "answered by raters; training: training examples, a qualification test or a "
        "calibration call; the pay (Rater welfare page)"
    )
