"""A gold round trip in the pilot gives no sample case's key (issue 38).

The route, as reported: a sample case with pilot ratings is made a gold item with its
expected answers given by system (``PUT .../quality/{case}/``), the gold CSV export is
read (expected answers per ``response_label``: it names A's system), and the case goes
back (``DELETE .../quality/{case}/``). Before, it was a sample case again with its key
known. The rule now: a case whose key has been shown by system (it became a quality item,
by any route) is recorded so (``key_shown_at``, an event) and never counts as a sample
case again; taken back, it is left out of the sample for good, and the cases page and
the report's deviations say so.
"""

import csv
import io

import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse

from studies.models import Study, StudyEvent, TestCase
from studies.services.lifecycle import study_open
from tests.factories import UserFactory, make_study
from tests.payloads import submit_all

BASE = "studies/round-trip/quality/"
CELLS = [
    {"response": "baseline", "dimension": "depth", "expected": "5 ±1 band"},
    {"response": "improved", "dimension": "depth", "expected": "0"},
]


@pytest.fixture
def pilot(lead_user):
    study = make_study(
        lead=lead_user, slug="round-trip", cases=3, status=Study.Status.PILOT,
        raters=[UserFactory(), UserFactory()],
    )  # fmt: skip
    submit_all(study)
    return study


def _gold_rows(api) -> list[dict]:
    export = api("GET", "studies/round-trip/exports/gold-csv/")
    assert export.status_code == 200
    text = b"".join(export.streaming_content).decode("utf-8-sig")
    return list(csv.DictReader(io.StringIO(text)))


def test_a_gold_round_trip_leaves_the_case_out_of_the_sample_for_good(
    client, pilot, lead_user, api_as
):
    api = api_as(lead_user)
    case = pilot.test_cases.get(case_id="TC-001")
    assert case.assignments.filter(ratings__isnull=False).exists()  # it holds pilot ratings
    made = api("PUT", f"{BASE}{case.uuid}/", {"purpose": "gold", "expected": CELLS})
    assert made.status_code == 200, made.content
    # The gold export names each expected answer by label: with the answers entered by
    # system, the coordinator now knows this case's key. By design, for a quality item.
    rows = _gold_rows(api)
    assert {row["test_case"] for row in rows} == {"TC-001"}
    back = api("DELETE", f"{BASE}{case.uuid}/")
    assert back.status_code == 200 and back.json()["purpose"] == "left_out"
    case.refresh_from_db()
    assert case.key_shown_at is not None
    assert not pilot.test_cases.in_sample().filter(pk=case.pk).exists()
    assert not pilot.test_cases.quality_items().filter(pk=case.pk).exists()
    shown = pilot.events.filter(kind=StudyEvent.Kind.CASE_KEY_SHOWN)
    assert [event.detail["case"] for event in shown] == ["TC-001"]
    # Made gold again and taken back again: still out, and the key was shown once.
    api("PUT", f"{BASE}{case.uuid}/", {"purpose": "gold", "expected": CELLS})
    assert api("DELETE", f"{BASE}{case.uuid}/").json()["purpose"] == "left_out"
    assert shown.count() == 1
    # The study opens with the case still out, and every page says so.
    study_open(study=pilot, actor=lead_user, acknowledge_warnings=True)
    assert pilot.test_cases.in_sample().count() == 2
    client.force_login(lead_user)
    cases_page = client.get(reverse("studies:cases", args=[pilot.slug])).text
    assert "1 case left out of the sample for good" in cases_page
    assert "left out: key shown" in cases_page
    report = api("GET", "studies/round-trip/report/").json()
    (left,) = [d for d in report["deviations"] if d["what"] == "Cases left out of the sample"]
    assert "TC-001" in left["reason"]


def test_every_route_to_a_quality_item_shows_the_key_for_good(client, pilot, lead_user, api_as):
    """The browser form and the gold file as well as the API; the database holds it too."""
    api = api_as(lead_user)
    client.force_login(lead_user)
    by_form = pilot.test_cases.get(case_id="TC-002")
    page = client.get(reverse("studies:quality_item", args=[pilot.slug, by_form.uuid]))
    data = {"purpose": "gold"}
    for index, row in enumerate(page.context["rows"]):
        if row["dimension"] == "depth":
            data[f"expected-{index}"] = "0"
    url = reverse("studies:quality_item", args=[pilot.slug, by_form.uuid])
    assert client.post(url, data).status_code == 302
    assert client.post(url, {"purpose": "sample"}).status_code == 302
    by_form.refresh_from_db()
    assert by_form.purpose == TestCase.Purpose.LEFT_OUT
    page = client.get(url).text
    assert "left out of the sample for good" in page

    gold_file = "case_id,response,dimension,expected\nTC-003,baseline,depth,0\n"
    upload = {"file": _upload("gold.csv", gold_file.encode())}
    assert api("POST", f"{BASE}gold-file/", files=upload).status_code in (200, 201)
    by_file = pilot.test_cases.get(case_id="TC-003")
    assert api("DELETE", f"{BASE}{by_file.uuid}/").json()["purpose"] == "left_out"
    # A case whose key was shown cannot be written back into the sample, even past the
    # services.
    with pytest.raises(IntegrityError), transaction.atomic():
        TestCase.objects.filter(pk=by_file.pk).update(purpose=TestCase.Purpose.SAMPLE)


def test_a_sample_case_sent_back_to_the_sample_stays_in_it(pilot, lead_user, api_as):
    case = pilot.test_cases.get(case_id="TC-001")
    assert api_as(lead_user)("DELETE", f"{BASE}{case.uuid}/").json()["purpose"] == "sample"
    case.refresh_from_db()
    assert case.key_shown_at is None and pilot.test_cases.in_sample().count() == 3


def _upload(name: str, data: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, data, content_type="text/csv")
