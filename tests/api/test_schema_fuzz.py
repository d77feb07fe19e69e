"""schemathesis against the served OpenAPI schema: generated requests to every endpoint,
with a study lead's token and the study's real slug. Every answer must be what the schema
says: never a server error, a status code the operation documents, a documented media
type, and a body that validates against the response schema for its status (the API's
error shape included)."""

import copy

import pytest
import schemathesis
from django.core.signals import request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from config.wsgi import application
from studies.services import tokens
from tests.factories import make_study

# Bounded: ten generated requests per operation (with every response checked against the
# schema) keep the suite quick on a two-core machine as the API grows.
EXAMPLES = 10
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.fixture
def served_schema(db):
    # The test runs in one transaction; Django's WSGI handler would close its connection
    # at each request start, as Django's own test client also prevents.
    request_started.disconnect(close_old_connections)
    yield schemathesis.openapi.from_wsgi("/api/v1/openapi.json", application)
    request_started.connect(close_old_connections)


def fuzz_failures(operations, *, slug: str, secret: str) -> list[str]:
    """Each operation's first failing answer, if any (hypothesis shrinks it), as text."""
    failures = []
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def run(case):
            if "slug" in (case.path_parameters or {}):
                case.path_parameters["slug"] = slug
            response = case.call(headers={"Authorization": f"Bearer {secret}"})
            case.validate_response(response, checks=CHECKS)

        try:
            run()
        except (AssertionError, BaseExceptionGroup) as failure:
            failures.append(f"{operation.method.upper()} {operation.path}: {failure}"[:2000])
    return failures


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_every_generated_request_is_answered_as_the_schema_says(served_schema, lead_user):
    """Every operation of the schema, each with its own bounded run of generated cases; the
    failures of all of them are listed together.

    (schemathesis' pytest plugin does not load under this pytest; its strategies do.)
    """
    study = make_study(lead=lead_user, slug="fuzz", cases=3, status="draft")
    _, secret = tokens.api_token_create(user=lead_user, name="fuzz")
    operations = [result.ok() for result in served_schema.get_all_operations()]
    assert len(operations) >= 20
    failures = fuzz_failures(operations, slug=study.slug, secret=secret)
    assert failures == [], "\n\n".join(failures)


def test_the_checks_see_an_answer_that_differs_from_its_schema(served_schema, lead_user):
    """Power: the same checks on a real answer fail once the schema says something else
    (a field retyped, a field required that the answer lacks, a status left out)."""
    study = make_study(lead=lead_user, slug="drift", cases=2, status="draft")
    _, secret = tokens.api_token_create(user=lead_user, name="drift")
    served = copy.deepcopy(served_schema.raw_schema)
    path = "/api/v1/studies/{slug}/progress/"

    def answers_as_described(raw) -> bool:
        schema = schemathesis.openapi.from_dict(raw)
        schema.app = application
        case = schema[path]["GET"].Case(path_parameters={"slug": study.slug})
        response = case.call(headers={"Authorization": f"Bearer {secret}"})
        assert response.status_code == 200
        try:
            case.validate_response(response, checks=CHECKS)
        except (AssertionError, BaseExceptionGroup):
            return False
        return True

    assert answers_as_described(served)
    retyped = copy.deepcopy(served)
    retyped["components"]["schemas"]["Progress"]["properties"]["submitted"] = {"type": "string"}
    required = copy.deepcopy(served)
    progress = required["components"]["schemas"]["Progress"]
    progress["properties"]["n_cases"] = {"type": "integer"}
    progress["required"] = [*progress.get("required", []), "n_cases"]
    undocumented = copy.deepcopy(served)
    undocumented["paths"][path]["get"]["responses"].pop("200")
    for drifted in (retyped, required, undocumented):
        assert not answers_as_described(drifted)


def test_the_schema_is_served_and_describes_every_endpoint(client):
    schema = client.get("/api/v1/openapi.json").json()
    assert schema["info"]["title"] == "Concord API"
    assert "/api/v1/studies/{slug}/cases/" in schema["paths"]
    assert schema["components"]["securitySchemes"]["token"]["scheme"] == "bearer"
    page = client.get("/api/v1/docs/")
    assert page.status_code == 200 and b"swagger" in page.content.lower()
