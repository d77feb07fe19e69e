"""schemathesis against the served OpenAPI schema: generated requests to every endpoint,
with a study lead's token and the study's real slug, and never a server error."""

import pytest
import schemathesis
from django.core.signals import request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error

from config.wsgi import application
from studies.services import tokens
from tests.factories import make_study

# Bounded: a few dozen requests per endpoint keep the suite quick on a shared machine.
EXAMPLES = 25


@pytest.fixture
def served_schema(db):
    # The test runs in one transaction; Django's WSGI handler would close its connection
    # at each request start, as Django's own test client also prevents.
    request_started.disconnect(close_old_connections)
    yield schemathesis.openapi.from_wsgi("/api/v1/openapi.json", application)
    request_started.connect(close_old_connections)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_no_generated_request_is_a_server_error(served_schema, lead_user):
    """Every operation of the schema, each with its own bounded run of generated cases.

    (schemathesis' pytest plugin does not load under this pytest; its strategies do.)
    """
    study = make_study(lead=lead_user, slug="fuzz", cases=3, status="draft")
    _, secret = tokens.api_token_create(user=lead_user, name="fuzz")
    operations = [result.ok() for result in served_schema.get_all_operations()]
    assert len(operations) >= 20

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
                case.path_parameters["slug"] = study.slug
            response = case.call(headers={"Authorization": f"Bearer {secret}"})
            case.validate_response(response, checks=[not_a_server_error])

        run()


def test_the_schema_is_served_and_describes_every_endpoint(client):
    schema = client.get("/api/v1/openapi.json").json()
    assert schema["info"]["title"] == "Concord API"
    assert "/api/v1/studies/{slug}/cases/" in schema["paths"]
    assert schema["components"]["securitySchemes"]["token"]["scheme"] == "bearer"
    page = client.get("/api/v1/docs/")
    assert page.status_code == 200 and b"swagger" in page.content.lower()
