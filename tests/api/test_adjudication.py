"""The adjudicators' API: the queue and a decision, through the screen's services."""

import pytest

from annotation.models import Adjudication
from tests.annotation.adjudication_support import adjudication_world, resolved_payload

pytestmark = pytest.mark.django_db


def test_queue_then_resolve_then_a_stale_version_is_409(api_as):
    world = adjudication_world()
    api = api_as(world.adjudicator.user)
    queue = api("GET", f"studies/{world.study.slug}/adjudication/")
    assert queue.status_code == 200
    [item] = queue.json()["waiting"]
    assert item["case_id"] == world.case.case_id and item["dimensions"] == ["depth"]
    payload = resolved_payload()
    body = {"version": item["version"], "responses": payload["responses"], "reason": "Four."}
    url = f"studies/{world.study.slug}/adjudication/{item['adjudication']}/resolve/"
    done = api("POST", url, body)
    assert done.status_code == 200, done.content
    assert done.json()["status"] == Adjudication.Status.DONE
    assert set(done.json()["answers"]["responses"]) == {"A", "B"}
    stale = api("POST", url, {**body, "reason": "Changed my mind."})
    assert stale.status_code == 409
    assert "another tab" in stale.json()["error"]["message"]


def test_unresolvable_and_refusals(api_as):
    world = adjudication_world()
    api = api_as(world.adjudicator.user)
    url = f"studies/{world.study.slug}/adjudication/{world.adjudication.uuid}/resolve/"
    missing = api("POST", url, {"version": 0, "unresolvable": True, "reason": ""})
    assert missing.status_code == 400
    marked = api("POST", url, {"version": 0, "unresolvable": True, "reason": "Ambiguous prompt."})
    assert marked.json()["status"] == Adjudication.Status.UNRESOLVABLE
    assert api_as(world.raters[0])("POST", url, {"version": 1}).status_code == 403
    other = adjudication_world(slug="api-other")
    assert api_as(other.adjudicator.user)("POST", url, {"version": 1}).status_code == 404
