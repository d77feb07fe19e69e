"""Bodies that used to cost a 500 or an HTML page: text PostgreSQL cannot store (a lone
surrogate, a NUL) on every endpoint that reads JSON, enumerated from the served schema so
that a new endpoint is covered without anyone remembering it; rubric dimensions of the wrong
JSON type; bodies over the documented limit; and Django's own error answers under /api/.
Each is a 400 (or 413, 500) in the API's error shape, and nothing is written."""

import hashlib
import json
from unittest import mock

import pytest
from django.apps import apps
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.test import Client, RequestFactory
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart

from core import api as core_api
from core.api_request import MAX_JSON_BODY_BYTES
from studies.models import Membership
from studies.rubric.definition import preset_definition
from studies.services import membership_add
from studies.services.participants import participant_link_save
from tests.annotation.support import make_item
from tests.factories import AdjudicationFactory, UserFactory, make_study
from tests.urls_enumeration import schema_operations

REF = "#/components/schemas/"
UNSTORABLE = {"lone surrogate": "a\ud800b", "NUL character": "a\x00b"}


def written() -> str:
    """Every row of every table, as one fingerprint."""
    state = [
        list(model.objects.order_by("pk").values_list())
        for model in apps.get_models()
        if model._meta.managed
    ]
    return hashlib.sha256(json.dumps(state, default=str).encode()).hexdigest()


def assert_error_shape(response, status: int) -> dict:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    error = json.loads(response.content)["error"]
    assert set(error) == {"status", "code", "message", "problems"}
    assert error["status"] == status and error["message"]
    return error


def json_body_operations(schema: dict) -> list[tuple[str, str, list[str]]]:
    """Every operation that reads a JSON body, with the fields its request schema names."""
    found = []
    for method, path, operation in schema_operations(schema):
        content = operation.get("requestBody", {}).get("content", {})
        if "application/json" not in content:
            continue
        body = content["application/json"]["schema"]
        if "$ref" in body:
            body = schema["components"]["schemas"][body["$ref"].removeprefix(REF)]
        found.append((method, path, list(body.get("properties", {})) or ["note"]))
    return found


class Callers:
    """Who may call each endpoint, and its URL with every path parameter filled in: the
    lead, or for an adjudicator's endpoint the study's adjudicator, with a case waiting."""

    def __init__(self, study, lead_api, adjudicator_api, admin_api, rater_api, adjudication):
        self.study, self.lead, self.adjudicator = study, lead_api, adjudicator_api
        self.admin, self.rater = admin_api, rater_api
        self.values = {"slug": study.slug, "adjudication_uuid": str(adjudication.uuid)}
        # A test case (its expected answers) and a training item (its edits and key).
        self.values["case_uuid"] = str(study.test_cases.order_by("position").first().uuid)
        item = study.training_items.first()
        self.values["item_uuid"] = str(item.uuid) if item else ""
        link = study.participant_links.first()
        self.values["link_uuid"] = str(link.uuid) if link else ""

    def __call__(self, path: str):
        if "/adjudication/" in path:
            api = self.adjudicator
        elif path.startswith("/api/v1/accounts/") or path.endswith("/qc/decisions/"):
            api = self.admin  # administrators make raters' accounts and decide about raters
        elif path.endswith("/consent/"):
            api = self.rater  # a rater consents for themselves
        else:
            api = self.lead
        for name, value in self.values.items():
            path = path.replace("{" + name + "}", value)
        assert "{" not in path, f"fill in the path parameter of {path}"
        return path, api


@pytest.fixture
def setup(client, lead_user, api_as):
    study = make_study(lead=lead_user, slug="bodies", cases=3, status="draft")
    participant_link_save(  # for the participant link's own endpoints
        study=study,
        actor=lead_user,
        values={"name": "bodies", "completion_code": "DONE1", "max_participants": "5"},
    )
    api = api_as(lead_user)
    assert api("GET", "studies/bodies/").status_code == 200  # the token's first use is written
    schema = client.get("/api/v1/openapi.json").json()
    return study, api, schema


@pytest.fixture
def callers(setup, api_as) -> Callers:
    study, api, _ = setup
    adjudicator = UserFactory(username="bodies-adjudicator")
    membership_add(study=study, user=adjudicator, role=Membership.Role.ADJUDICATOR)
    adjudication = AdjudicationFactory(test_case=study.test_cases.order_by("position").first())
    adjudicator_api = api_as(adjudicator)
    assert adjudicator_api("GET", "studies/bodies/adjudication/").status_code == 200
    admin_api = api_as(UserFactory(username="bodies-admin", is_staff=True, is_superuser=True))
    assert admin_api("GET", "studies/bodies/").status_code == 200
    rater = UserFactory(username="bodies-rater")
    membership_add(study=study, user=rater, role=Membership.Role.RATER)
    rater_api = api_as(rater)
    assert rater_api("GET", "me/assignments/").status_code == 200
    make_item(study)
    return Callers(study, api, adjudicator_api, admin_api, rater_api, adjudication)


def test_every_json_endpoint_is_enumerated(setup):
    _, _, schema = setup
    operations = {(method, path) for method, path, _ in json_body_operations(schema)}
    # The endpoints issue 27 found answering 500, at least.
    for wanted in [
        ("POST", "/api/v1/studies/"),
        ("PATCH", "/api/v1/studies/{slug}/"),
        ("POST", "/api/v1/studies/{slug}/cases/"),
        ("POST", "/api/v1/studies/{slug}/invitations/"),
        ("PUT", "/api/v1/studies/{slug}/rubric/"),
    ]:
        assert wanted in operations
    assert len(operations) >= 8


@pytest.mark.parametrize("what", UNSTORABLE)
def test_unstorable_text_is_refused_on_every_json_endpoint_with_its_field(setup, callers, what):
    _, _, schema = setup
    before = written()
    for method, path, fields in json_body_operations(schema):
        url, api = callers(path)
        field = fields[0]
        # json.dumps writes the surrogate as JSON's own escape, "\ud800", as a script would.
        response = api(method, url, {field: UNSTORABLE[what]})
        error = assert_error_shape(response, 400)
        assert error["code"] == "parse_error", (method, path, error)
        assert f'the field "{field}" contains a {what}' in error["message"], (method, path)
        # Deeper in the body, the place is named as a script would write it.
        response = api(method, url, {field: [{"text": UNSTORABLE[what]}]})
        assert f'"{field}[0].text" contains' in assert_error_shape(response, 400)["message"]
    assert written() == before


def test_a_nul_in_a_form_body_is_refused_on_every_endpoint_with_its_field(client, setup, callers):
    """The endpoints read multipart bodies too (for a file); a form's field with a NUL is
    refused by the same rule. (A lone surrogate cannot come this way: Django decodes a form
    body with errors replaced.)"""
    _, _, schema = setup
    before = written()
    operations = [
        (method, path, fields)
        for method, path, fields in json_body_operations(schema)
        if "multipart/form-data" in schema["paths"][path][method.lower()]["requestBody"]["content"]
    ]
    assert len(operations) >= 8
    for method, path, fields in operations:
        body = encode_multipart(BOUNDARY, {fields[0]: "a\x00b"})
        url, api = callers(path)
        response = client.generic(
            method,
            url,
            body,
            MULTIPART_CONTENT,
            HTTP_AUTHORIZATION=f"Bearer {api.secret}",
        )
        error = assert_error_shape(response, 400)
        assert f'the field "{fields[0]}" contains a NUL character' in error["message"], path
    assert written() == before


def test_the_fingerprint_sees_a_write(setup):
    """Power: the check above would see a change an endpoint made."""
    _, api, _ = setup
    before = written()
    assert api("PATCH", "studies/bodies/", {"name": "Renamed"}).status_code == 200
    assert written() != before


# The rubric: every field of a dimension of the wrong JSON type ----------------------------


LIKERT = preset_definition("likert")["dimensions"][0]


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("kind", {"a": 1}, "kind must be one of"),
        ("kind", ["scale"], "kind must be one of"),
        ("kind", 3, "kind must be one of"),
        ("kind", None, "kind must be one of"),
        ("name", {"a": 1}, "name must be a non-empty text"),
        ("name", ["x"], "name must be a non-empty text"),
        ("key", {"a": 1}, "key must be 1 to 50"),
        ("key", [LIKERT["key"]], "key must be 1 to 50"),
        ("config", ["min", 1], "config must be an object"),
        ("config", "min=1", "config must be an object"),
        ("level", {"a": 1}, "level must be one of"),
        ("level", ["ordinal"], "level must be one of"),
    ],
)
def test_a_dimension_field_of_the_wrong_json_type_is_a_400(setup, field, value, problem):
    _, api, _ = setup
    before = api("GET", "studies/bodies/rubric/").json()
    stored = written()
    body = {"name": "Mine", "dimensions": [{**LIKERT, field: value}]}
    error = assert_error_shape(api("PUT", "studies/bodies/rubric/", body), 400)
    assert any(line.startswith("Dimension 1") and problem in line for line in error["problems"])
    assert api("GET", "studies/bodies/rubric/").json() == before
    assert written() == stored


def test_the_same_dimension_of_the_right_types_is_accepted(setup):
    """Power: the refusals above come from the one wrong field."""
    _, api, _ = setup
    body = {"name": "Mine", "dimensions": [LIKERT]}
    response = api("PUT", "studies/bodies/rubric/", body)
    assert response.status_code == 200, response.content[:300]


# Body limits -------------------------------------------------------------------------------


def test_the_documented_limit_is_the_setting_and_the_parser(settings_module=settings):
    with open(settings_module.BASE_DIR / "docs" / "api.md", encoding="utf-8") as docs:
        assert "A JSON body may be at most 12 MB" in " ".join(docs.read().split())
    assert MAX_JSON_BODY_BYTES == 12 * 1024 * 1024
    assert settings_module.DATA_UPLOAD_MAX_MEMORY_SIZE == MAX_JSON_BODY_BYTES


def test_a_json_body_over_the_limit_is_a_413_in_the_error_shape(setup):
    _, api, _ = setup
    before = written()
    response = api("PATCH", "studies/bodies/", {"name": "x" * (MAX_JSON_BODY_BYTES + 1)})
    assert assert_error_shape(response, 413)["code"] == "too_large"
    assert written() == before


def test_a_json_body_over_django_s_default_is_read_by_the_api(setup):
    """3 MB: over Django's default 2.5 MB, under the API's 12 MB; the form refuses the name
    for its length, in the API's shape, rather than Django with an HTML 400."""
    _, api, _ = setup
    response = api("PATCH", "studies/bodies/", {"name": "x" * (3 * 1024 * 1024)})
    error = assert_error_shape(response, 400)
    assert error["code"] == "invalid" and error["problems"][0].startswith("name:")


def test_a_form_body_django_refuses_is_a_413_in_the_error_shape(client, setup, settings):
    """Django's own RequestDataTooBig, raised while a multipart body's fields are read."""
    _, api, _ = setup
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1024
    response = client.post(
        "/api/v1/studies/bodies/cases/",
        {"note": "x" * 2048},
        HTTP_AUTHORIZATION=f"Bearer {api.secret}",
    )
    error = assert_error_shape(response, 413)
    assert error["code"] == "too_large" and "larger than 1,024 bytes" in error["message"]


# Django's own error answers under /api/ ----------------------------------------------------


def test_django_s_own_400_is_in_the_error_shape_under_api_only():
    factory = RequestFactory()
    too_big = RequestDataTooBig("too big")
    response = core_api.bad_request(factory.post("/api/v1/studies/"), too_big)
    assert assert_error_shape(response, 413)["code"] == "too_large"
    response = core_api.bad_request(factory.post("/api/v1/studies/"), ValueError("odd"))
    assert assert_error_shape(response, 400)["code"] == "parse_error"
    page = core_api.bad_request(factory.post("/studies/new/"), too_big)
    assert page.status_code == 400 and not page["Content-Type"].startswith("application/json")


def test_an_unknown_address_under_api_is_a_404_in_the_error_shape(client):
    assert_error_shape(client.get("/api/v2/studies/"), 404)
    assert not client.get("/no/such/page/")["Content-Type"].startswith("application/json")


def test_a_server_error_under_api_is_a_500_in_the_error_shape(setup, lead_user):
    """A programming error stays a logged 500, but the script reads it as JSON."""
    _, api, _ = setup
    quiet = Client(raise_request_exception=False)
    headers = {"HTTP_AUTHORIZATION": f"Bearer {api.secret}"}
    with mock.patch("studies.selectors.coordinated_studies", side_effect=RuntimeError("bug")):
        response = quiet.get("/api/v1/studies/", **headers)
    assert assert_error_shape(response, 500)["code"] == "server_error"
    assert "bug" not in response.content.decode()
