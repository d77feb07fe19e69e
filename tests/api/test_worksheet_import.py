"""The offline worksheet's import through the API, as on the results page: a check, then
"import the checked file", each a job whose URL gives how it ended; the page's form and
rule (all or nothing, every problem listed); the study's coordinators only."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Rating
from studies.models import Membership
from tests.annotation.support import consent_all
from tests.annotation.test_worksheets import GOOD_A, GOOD_B, HEADER, csv_bytes, snapshot
from tests.payloads import coordinator_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def consented(study):
    consent_all(study)
    return study


def post_file(api, study, data: bytes, *, rater="R-01", check=False):
    body = {"rater": rater, "file": SimpleUploadedFile("sheet.csv", data)}
    if check:
        body["check"] = "true"
    return api("POST", f"studies/{study.slug}/worksheet-import/", files=body)


def test_a_check_then_the_checked_worksheet_imported(consented, api_as):
    study = consented
    api = api_as(coordinator_of(study))
    before = snapshot()
    answer = post_file(api, study, csv_bytes(HEADER, GOOD_A, GOOD_B), check=True)
    assert answer.status_code == 202, answer.content
    body = answer.json()
    assert answer["Location"] == body["job"]
    # The tests run jobs inside the request: it has ended already, and wrote nothing.
    assert body["state"] == "done" and body["check_only"] is True
    assert body["result"]["rater"] == "R-01" and body["result"]["cases"] == 1
    assert snapshot() == before
    assert api("GET", body["job"].removeprefix("http://testserver")).json() == body
    job_uuid = body["job"].rstrip("/").rsplit("/", 1)[1]
    answer = api("POST", f"studies/{study.slug}/worksheet-import/", {"check_job": job_uuid})
    assert answer.status_code == 202
    done = answer.json()
    assert done["state"] == "done" and done["check_only"] is False
    assert done["result"]["cases"] == 1 and done["result"]["filename"] == "sheet.csv"
    assert Rating.objects.filter(assignment__rater__pseudonym="R-01").count() == 2
    # A checked file is imported once.
    again = api("POST", f"studies/{study.slug}/worksheet-import/", {"check_job": job_uuid})
    assert again.status_code == 400 and "no longer kept" in again.json()["error"]["problems"][0]


def test_every_problem_is_in_the_jobs_answer_and_nothing_is_written(consented, api_as):
    study = consented
    before = snapshot()
    bad = csv_bytes(HEADER, GOOD_A.replace(",15,", ",14,"), "TC-404,A,1,1,1,1,1,5,High,")
    body = post_file(api_as(study.lead), study, bad).json()
    assert body["state"] == "failed" and body["result"] == {}
    rows = {problem["row"] for problem in body["problems"]}
    assert {2, 3} <= rows
    assert snapshot() == before


def test_a_check_flag_that_does_not_read_is_refused_and_imports_nothing(consented, api_as):
    """A check misspelt must not import the worksheet for real."""
    study = consented
    before = snapshot()
    body = {"rater": "R-01", "file": SimpleUploadedFile("sheet.csv", csv_bytes(HEADER, GOOD_A))}
    refused = api_as(study.lead)(
        "POST", f"studies/{study.slug}/worksheet-import/", files={**body, "check": "maybe"}
    )
    assert refused.status_code == 400
    assert refused.json()["error"]["problems"] == [
        "check: true or false (true checks the file only)."
    ]
    assert snapshot() == before


@pytest.mark.parametrize(
    "pseudonym, problem",
    [("R-99", "rater: Select a valid choice."), ("", "rater: This field is required.")],
)
def test_the_rater_is_checked_by_the_pages_form(consented, api_as, pseudonym, problem):
    before = snapshot()
    data = csv_bytes(HEADER, GOOD_A)
    answer = post_file(api_as(consented.lead), consented, data, rater=pseudonym)
    assert answer.status_code == 400
    assert any(line.startswith(problem) for line in answer.json()["error"]["problems"])
    assert snapshot() == before


def test_raters_and_outsiders_are_refused(consented, api_as, stranger):
    rater = consented.memberships.filter(role=Membership.Role.RATER).first().user
    data = csv_bytes(HEADER, GOOD_A, GOOD_B)
    assert post_file(api_as(rater), consented, data).status_code == 403
    assert post_file(api_as(stranger), consented, data).status_code == 404
    assert not Rating.objects.exists()
