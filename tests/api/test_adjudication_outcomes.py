"""The decided adjudications through the API, and making one a gold item, as on the
adjudicated cases' page: coordinators read the list, the lead makes a resolved case a gold
item before the study opens, refused (with why) after."""

import json

import pytest
from django.urls import reverse

from annotation.models import Adjudication
from studies.models import Study, StudyEvent
from tests.annotation.adjudication_support import adjudication_world, resolved_payload
from tests.payloads import coordinator_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def resolved(client):
    world = adjudication_world(status=Study.Status.PILOT)
    client.force_login(world.adjudicator.user)
    screen = reverse("annotation:adjudicate", args=[world.study.slug, world.adjudication.uuid])
    client.post(screen, {"payload": json.dumps(resolved_payload()), "version": "0"})
    world.adjudication.refresh_from_db()
    assert world.adjudication.status == Adjudication.Status.DONE
    return world


def test_coordinators_read_the_decided_cases(resolved, api_as):
    study = resolved.study
    body = api_as(coordinator_of(study))("GET", f"studies/{study.slug}/adjudications/")
    assert body.status_code == 200
    assert body.json()["results"] == [
        {
            "adjudication": str(resolved.adjudication.uuid),
            "case_id": resolved.case.case_id,
            "status": "done",
            "adjudicator": "A-01",
            "reason": resolved.adjudication.reason,
            "resolved_at": body.json()["results"][0]["resolved_at"],
            "gold_refusal": "",
        }
    ]
    assert resolved.adjudication.reason and body.json()["results"][0]["resolved_at"]
    # No answer and no system in the list.
    text = body.content.decode()
    for name in study.systems.values_list("name", flat=True):
        assert name not in text


def test_the_lead_makes_a_gold_item_once_and_only_before_opening(resolved, api_as):
    study = resolved.study
    url = f"studies/{study.slug}/adjudications/{resolved.adjudication.uuid}/gold/"
    assert api_as(coordinator_of(study))("POST", url).status_code == 403
    api = api_as(study.lead)
    answer = api("POST", url)
    assert answer.status_code == 200, answer.content
    assert (
        answer.json()["gold_refusal"]
        == "This case is not a sample case: a gold item, an attention check, or left out."
    )
    resolved.case.refresh_from_db()
    assert resolved.case.purpose == "gold"
    assert study.events.filter(kind=StudyEvent.Kind.ADJUDICATION_MADE_GOLD).count() == 1
    again = api("POST", url)
    assert again.status_code == 400 and "not a sample case" in again.json()["error"]["message"]
    assert study.events.filter(kind=StudyEvent.Kind.ADJUDICATION_MADE_GOLD).count() == 1


def test_making_a_gold_item_is_refused_once_the_study_opens(resolved, api_as):
    study = resolved.study
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    api = api_as(study.lead)
    listed = api("GET", f"studies/{study.slug}/adjudications/").json()["results"][0]
    assert "frozen protocol" in listed["gold_refusal"]
    url = f"studies/{study.slug}/adjudications/{resolved.adjudication.uuid}/gold/"
    answer = api("POST", url)
    assert answer.status_code == 400 and "frozen protocol" in answer.json()["error"]["message"]
    resolved.case.refresh_from_db()
    assert resolved.case.purpose == "sample"


def test_another_studys_adjudication_is_not_found(resolved, api_as):
    other = adjudication_world(slug="adj-other", status=Study.Status.PILOT)
    url = f"studies/{resolved.study.slug}/adjudications/{other.adjudication.uuid}/gold/"
    assert api_as(resolved.study.lead)("POST", url).status_code == 404
