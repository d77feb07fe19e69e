"""The API of the import of ratings by system: a check, then "import the checked file", each
a job whose URL gives how it ended; every problem in the answer; the blinding refusal."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Rating
from annotation.services import CONCORD_HELD_MESSAGE
from studies.models import StudyEvent
from studies.services import tokens
from tests.annotation.test_ratings_by_system import (
    HEADER,
    SYSTEMS,
    csv_bytes,
    full_file,
    rating_made_in_concord,
)
from tests.annotation.test_ratings_by_system import likert_study as make_likert_study

pytestmark = pytest.mark.django_db


def post_file(client, study, data: bytes, *, check=False, name="ratings.csv"):
    _, secret = tokens.api_token_create(user=study.lead, name="pipeline")
    body = {"file": SimpleUploadedFile(name, data)}
    if check:
        body["check"] = "true"
    return client.post(
        f"/api/v1/studies/{study.slug}/ratings-import/",
        body,
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )


def get(client, study, url):
    _, secret = tokens.api_token_create(user=study.lead, name="poll")
    return client.get(url, HTTP_AUTHORIZATION=f"Bearer {secret}")


def test_a_check_then_the_checked_file_imported():
    from django.test import Client

    client = Client()
    study = make_likert_study()
    answer = post_file(client, study, full_file(), check=True)
    assert answer.status_code == 202
    body = answer.json()
    assert answer["Location"] == body["job"]
    # The tests run jobs inside the request: it has ended already.
    assert body["state"] == "done" and body["check_only"] is True
    assert body["result"]["ratings"] == 18 and body["result"]["new_raters"] == 2
    assert not Rating.objects.exists()
    polled = get(client, study, body["job"]).json()
    assert polled == body
    job_uuid = body["job"].rstrip("/").rsplit("/", 1)[1]
    _, secret = tokens.api_token_create(user=study.lead, name="again")
    answer = client.post(
        f"/api/v1/studies/{study.slug}/ratings-import/",
        {"check_job": job_uuid},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )
    assert answer.status_code == 202
    done = answer.json()
    assert done["state"] == "done" and done["check_only"] is False
    assert (done["result"]["created"], done["result"]["ratings"]) == (6, 18)
    assert Rating.objects.filter(assignment__source="imported").count() == 18
    assert study.events.filter(kind=StudyEvent.Kind.RATINGS_IMPORTED).count() == 1


def test_every_problem_is_in_the_jobs_answer_and_nothing_is_written(client):
    study = make_likert_study()
    data = csv_bytes(HEADER, f"TC-001,{SYSTEMS[0]},Ann,7,5,5,,,", "TC-404,x,Ann,1,1,1,,,")
    body = post_file(client, study, data).json()
    assert body["state"] == "failed"
    messages = [(p["row"], p["column"], p["message"][:20]) for p in body["problems"]]
    assert (2, "Helpfulness", "7 is not allowed; He") in messages
    assert (3, "Case ID", "There is no test cas") in messages
    assert not Rating.objects.exists()


def test_no_file_is_a_400_in_the_apis_shape(client):
    study = make_likert_study()
    _, secret = tokens.api_token_create(user=study.lead, name="pipeline")
    answer = client.post(
        f"/api/v1/studies/{study.slug}/ratings-import/",
        {},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )
    assert answer.status_code == 400
    assert answer.json()["error"]["problems"][0].startswith("file: upload the ratings")


def test_a_study_with_ratings_made_in_concord_refuses_and_says_why(client):
    study = make_likert_study()
    rating_made_in_concord(study)
    body = post_file(client, study, full_file()).json()
    assert body["state"] == "failed"
    assert body["problems"][0]["message"] == CONCORD_HELD_MESSAGE


@pytest.mark.parametrize("check", ["maybe", "check only", "2", "tru"])
def test_a_check_flag_that_does_not_read_is_refused_and_imports_nothing(client, check):
    """A pipeline that meant a check but spelt it otherwise must not import for real: the
    import is final for the study, which then takes no rating made in Concord."""
    study = make_likert_study()
    _, secret = tokens.api_token_create(user=study.lead, name="pipeline")
    answer = client.post(
        f"/api/v1/studies/{study.slug}/ratings-import/",
        {"file": SimpleUploadedFile("ratings.csv", full_file()), "check": check},
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )
    assert answer.status_code == 400
    assert answer.json()["error"]["problems"] == [
        "check: true or false (true checks the file only)."
    ]
    assert not Rating.objects.exists()
    assert not study.events.filter(kind=StudyEvent.Kind.RATINGS_IMPORTED).exists()


@pytest.mark.parametrize(
    "check, check_only", [("false", False), ("0", False), ("", False), ("yes", True), ("Y", True)]
)
def test_the_check_flag_reads_as_a_boolean_does(client, check, check_only):
    study = make_likert_study()
    _, secret = tokens.api_token_create(user=study.lead, name="pipeline")
    answer = client.post(
        f"/api/v1/studies/{study.slug}/ratings-import/",
        {"file": SimpleUploadedFile("ratings.csv", full_file()), "check": check},
        HTTP_AUTHORIZATION=f"Bearer {secret}",
    )
    assert answer.status_code == 202
    assert answer.json()["check_only"] is check_only
    assert Rating.objects.exists() is not check_only
