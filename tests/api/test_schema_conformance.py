"""The schema describes what the API returns: each GET endpoint's real answer, on a study
with raters, ratings, a computed result and an Assign job, validates against the response
the served OpenAPI schema declares for it, with no field the schema does not list.

The serializers exist for the schema only (the views build their answers themselves), so
without this a view could change its answer and the schema, and scripts written from it,
would not know.
"""

import copy
import json
import re

import jsonschema
import pytest

from agreement.services.recompute import agreement_recompute
from annotation import assignment_jobs
from annotation.export_jobs import export_job_start
from jobs.models import Job
from studies.services import invitations
from tests.annotation.support import make_item
from tests.payloads import close_and_unblind, payload_for, study_with_systems, submit_all

REF = "#/components/schemas/"


def json_schema(node, components: dict, seen: tuple = ()):
    """An OpenAPI 3.0 schema as plain JSON Schema: references inlined, ``nullable`` as a
    null alternative, and an object that lists its properties closed to any other."""
    if isinstance(node, list):
        return [json_schema(item, components, seen) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = node["$ref"].removeprefix(REF)
        assert name not in seen, f"a schema that contains itself: {name}"
        return json_schema(components[name], components, (*seen, name))
    out = {key: json_schema(value, components, seen) for key, value in node.items()}
    if out.pop("nullable", False):
        out = {"anyOf": [out, {"type": "null"}]}
    elif "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


def response_schema(schema: dict, path: str) -> dict:
    content = schema["paths"][path]["get"]["responses"]["200"]["content"]
    return json_schema(content["application/json"]["schema"], schema["components"]["schemas"])


@pytest.fixture
def served(client, lead_user, api_as):
    """The served schema, a token of the lead, and a study with everything to show."""
    study = study_with_systems(lead=lead_user, slug="shown", cases=3, consented=True)
    submit_all(study)
    agreement_recompute(study_id=study.pk)
    invitations.invitation_create(
        study=study, created_by=lead_user, role="rater", note="for a colleague", days=7
    )
    job = assignment_jobs.assignment_job_start(study=study, actor=lead_user, inline=True)
    judge = _judge_with_a_tie(study)
    link = _participant_link_with_a_participant(study)
    close_and_unblind(study)
    webhook = _webhook_with_deliveries(study)
    schema = client.get("/api/v1/openapi.json").json()
    # A check of ratings by system that passed (what its job keeps once done).
    ratings_check = Job.objects.create(
        kind=Job.Kind.WORKSHEET_IMPORT, study_id=study.pk, name="ratings-check",
        requested_by=lead_user, state=Job.State.DONE, result={"rows": 4, "ratings": 4},
    )  # fmt: skip
    values = {
        "slug": study.slug,
        "job_uuid": str(job.uuid),
        "judge_uuid": str(judge.uuid),
        "webhook_uuid": str(webhook.uuid),
        "link_uuid": str(link.uuid),
        "case_uuid": str(study.test_cases.order_by("position").first().uuid),
        "item_uuid": str(make_item(study, key=payload_for(1)).uuid),
    }
    PATH_VALUES[RATINGS_JOB_PATH] = {**values, "job_uuid": str(ratings_check.uuid)}
    # A worksheet check that passed.
    worksheet_check = Job.objects.create(
        kind=Job.Kind.WORKSHEET_IMPORT, study_id=study.pk, name="check", requested_by=lead_user,
        state=Job.State.DONE, result={"rater": "R-01", "cases": 3, "created": 0, "updated": 3,
                                      "skipped": 0, "skips": 0, "dry_run": True},
    )  # fmt: skip
    PATH_VALUES[WORKSHEET_JOB_PATH] = {**values, "job_uuid": str(worksheet_check.uuid)}
    # A prepared export, its file ready.
    export = export_job_start(study=study, key="long-csv", actor=lead_user)
    PATH_VALUES[EXPORT_JOB_PATH] = {**values, "job_uuid": str(export.uuid)}
    return schema, api_as(lead_user), values


def _judge_with_a_tie(study):
    """A judge's outputs on the study's cases, one of them a tie its template allows."""
    from agreement.services import judge_outputs_import

    lines = [
        {"case_id": case_id, "order": order, "judge": "judge", "output": f"Because.\n[[{v}]]"}
        for case_id in study.test_cases.values_list("case_id", flat=True)
        for order, v in (("AB", "A"), ("BA", "C"))
    ]
    data = "\n".join(map(json.dumps, lines)).encode()
    judge_outputs_import(study=study, filename="j.jsonl", data=data, allow_tie=True)
    return study.judges.get()


def _participant_link_with_a_participant(study):
    """A Prolific link, linked to no study, with one participant who joined through it."""
    from studies.services.participants import participant_join, participant_link_save

    link = participant_link_save(
        study=study,
        actor=study.lead,
        values={"name": "Prolific", "completion_code": "DONE1", "max_participants": 5,
                "bonus_rule": "per_case", "bonus_amount": "0.10"},
    )  # fmt: skip
    participant_join(link=link, params={"PROLIFIC_PID": "PID1", "SESSION_ID": "S1"})
    return link


def _webhook_with_deliveries(study):
    """A webhook with a delivered event, a failed attempt before it, and its replay."""
    from django.utils import timezone

    from studies.models import Webhook, WebhookDelivery

    webhook = Webhook.objects.create(
        study=study, url="https://example.org/hook", events=["study.closed"], secret="whsec_s"
    )
    now = timezone.now()
    attempts = [
        {"at": now.isoformat(), "status_code": 500, "error": "HTTP 500", "ms": 12},
        {"at": now.isoformat(), "status_code": None, "error": "TimeoutError", "ms": 5000},
        {"at": now.isoformat(), "status_code": 200, "error": "", "ms": 8},
    ]
    first = WebhookDelivery.objects.create(
        webhook=webhook,
        event="study.closed",
        payload={"id": "x", "event": "study.closed", "data": {}},
        status=WebhookDelivery.Status.DELIVERED,
        attempts=attempts,
        delivered_at=now,
    )
    WebhookDelivery.objects.create(
        webhook=webhook, event="study.closed", event_id=first.event_id, replay_of=first
    )
    return webhook


# Endpoints whose job is of another kind than Assign's, with the values they are asked with.
RATINGS_JOB_PATH = "/api/v1/studies/{slug}/ratings-import/{job_uuid}/"
WORKSHEET_JOB_PATH = "/api/v1/studies/{slug}/worksheet-import/{job_uuid}/"
EXPORT_JOB_PATH = "/api/v1/studies/{slug}/export-jobs/{job_uuid}/"
PATH_VALUES: dict[str, dict] = {}


# Endpoints that answer another role than the lead's, and the fixture whose token asks them.
OTHER_ROLE_PATHS = {
    "/api/v1/studies/{slug}/adjudication/": "adjudicator",
    "/api/v1/studies/{slug}/onboarding/": "rater",
    "/api/v1/studies/{slug}/participant-links/{link_uuid}/payments/": "admin",
}


@pytest.fixture
def adjudicator_api(served, api_as):
    """An adjudicator of the served study, with a case waiting in their queue."""
    from annotation.models import Adjudication
    from studies.models import Membership, Study
    from studies.services import membership_add
    from tests.factories import AdjudicationFactory, UserFactory

    study = Study.objects.get(slug=served[2]["slug"])
    user = UserFactory(username="api-adjudicator")
    membership_add(study=study, user=user, role=Membership.Role.ADJUDICATOR)
    cases = study.test_cases.in_sample().order_by("position")
    AdjudicationFactory(test_case=cases[0])
    AdjudicationFactory(test_case=cases[1], status=Adjudication.Status.UNRESOLVABLE)
    return api_as(user)


def json_get_paths(schema: dict) -> list[str]:
    return sorted(
        path
        for path, operations in schema["paths"].items()
        if "application/json"
        in operations.get("get", {}).get("responses", {}).get("200", {}).get("content", {})
    )


@pytest.fixture
def rater_api(served, api_as):
    """A rater of the served study (who consented), with their own token."""
    from studies.models import Membership, Study

    study = Study.objects.get(slug=served[2]["slug"])
    rater = study.memberships.filter(role=Membership.Role.RATER).order_by("pseudonym").first()
    return api_as(rater.user)


@pytest.fixture
def admin_api(served, api_as):
    """An administrator (the payments file of a participant link is theirs)."""
    from tests.factories import UserFactory

    return api_as(UserFactory(username="api-admin", is_staff=True, is_superuser=True))


def test_every_get_endpoint_answers_as_its_schema_says(
    served, adjudicator_api, rater_api, admin_api
):
    schema, lead_api, values = served
    apis = {
        "lead": lead_api,
        "adjudicator": adjudicator_api,
        "rater": rater_api,
        "admin": admin_api,
    }
    paths = json_get_paths(schema)
    # The endpoints the brief of this check names, at least: a study, its cases, its
    # agreement, its raters and progress.
    for wanted in ("", "cases/", "agreement/", "raters/", "progress/"):
        assert f"/api/v1/studies/{{slug}}/{wanted}" in paths
    problems = []
    for path in paths:
        given = PATH_VALUES.get(path, values)
        url = re.sub(r"\{(\w+)\}", lambda m, given=given: given[m.group(1)], path)
        response = apis[OTHER_ROLE_PATHS.get(path, "lead")]("GET", url)
        assert response.status_code == 200, (url, response.content[:300])
        # A file the page streams (the protocol document) is read whole.
        body = (
            json.loads(b"".join(response.streaming_content))
            if response.streaming
            else response.json()
        )
        errors = sorted(
            jsonschema.Draft7Validator(response_schema(schema, path)).iter_errors(body),
            key=lambda error: list(error.absolute_path),
        )
        problems += [
            f"{path} at {'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message}"
            for error in errors[:5]
        ]
    assert problems == [], "\n".join(problems)


def test_the_check_sees_an_answer_that_drifted_from_the_schema(served):
    """Power: the same check on a real answer with a field renamed, one retyped and one
    added, each as a view that changed its answer without its serializer would."""
    schema, api, values = served
    path = "/api/v1/studies/{slug}/progress/"
    body = api("GET", f"/api/v1/studies/{values['slug']}/progress/").json()
    validator = jsonschema.Draft7Validator(response_schema(schema, path))
    assert list(validator.iter_errors(body)) == []
    renamed = copy.deepcopy(body)
    renamed["n_cases"] = renamed.pop("cases")
    retyped = {**copy.deepcopy(body), "submitted": str(body["submitted"])}
    added = copy.deepcopy(body)
    added["raters"][0]["email"] = "someone@example.org"
    for drifted in (renamed, retyped, added):
        assert list(validator.iter_errors(drifted)), drifted


def test_nullable_and_references_are_read_as_openapi_means_them():
    components = {"Pair": {"type": "object", "properties": {"a": {"type": "integer"}}}}
    schema = json_schema(
        {"type": "array", "items": {"$ref": REF + "Pair"}, "nullable": True}, components
    )
    validator = jsonschema.Draft7Validator(schema)
    assert validator.is_valid(None) and validator.is_valid([{"a": 1}])
    assert not validator.is_valid([{"a": "1"}]) and not validator.is_valid([{"b": 1}])
