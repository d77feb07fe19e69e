"""Every write of the API refuses a field it does not take, by name, at every level of its
body, and writes nothing.

The writes (POST, PUT, PATCH) come from the served OpenAPI schema, so a new one is tried
here as soon as it is described. Each is sent, by someone its access rule lets in, a body
holding only ``zz_misspelt`` (as JSON, and as a form where the schema takes one, which is
how a file is uploaded): the answer is a 400 in the API's shape naming the field and the
fields to use, which are exactly the ones the schema documents for it, and no row
changed. A misspelt field left out unseen would take its default (``core.api.body_object``
reads every body against the fields its endpoint states).

Then every object nested in a body (a rubric's dimension, a welfare stratum), found by
walking the schema's request components, gets ``zz_misspelt`` in turn: refused by name,
nothing written. An object the schema leaves open (any key) is listed in ``FREE_FORM``
with the reason its keys are data, not fields.
"""

import json
import re
import sys

import pytest
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart
from django.urls import resolve

from tests import test_api_access_matrix as matrix
from tests.test_access_matrix import _tables, rolled_back
from tests.test_access_matrix import world as world  # the shared fixture
from tests.test_api_access_matrix import api_world as api_world  # the shared fixture
from tests.urls_enumeration import api_urls, schema_operations

from .test_parity import schema_path

UNKNOWN = "zz_misspelt"
WRITES = {"POST", "PUT", "PATCH"}
# Who sends each write: the first of these its rule lets in.
SENDERS = ("lead", "admin", "coordinator", "rater", "adjudicator", "outside_coordinator")
REFUSED = {401, 403, 404, 405}
PROBLEM = re.compile(rf"^{UNKNOWN}: not [^;]+; (?:use (?P<fields>.+)|this request takes none)\.$")
FORM = "multipart/form-data"


def sender(name: str, method: str) -> str:
    rule = matrix.RULES[name]
    for role in SENDERS:
        if not set(matrix.expected(name, rule, role, method)) <= REFUSED:
            return role
    raise AssertionError(f"{name} {method}: no one may send it")


def documented_fields(operation: dict, components: dict) -> set[str]:
    """The top-level fields the schema documents for a write's body, in any content type."""
    fields: set[str] = set()
    for content in operation.get("requestBody", {}).get("content", {}).values():
        node = content["schema"]
        if "$ref" in node:
            node = components[node["$ref"].rsplit("/", 1)[1]]
        fields |= set(node.get("properties", {}))
    return fields


def send(client, method, url, *, secret, content_type):
    headers = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
    if content_type == FORM:
        # The test client writes a multipart body, as a form with a file would be sent.
        body = encode_multipart(BOUNDARY, {UNKNOWN: "1"})
        return client.generic(method, url, body, MULTIPART_CONTENT, **headers)
    return client.generic(method, url, json.dumps({UNKNOWN: 1}), "application/json", **headers)


def unknown_field_problems(client, world, schema) -> list[str]:
    patterns = {schema_path(pattern): (name, pattern) for name, pattern in api_urls()}
    components = schema["components"]["schemas"]
    tables = _tables()
    problems, tried = [], 0
    for method, path, operation in schema_operations(schema):
        if method not in WRITES:
            continue
        name, pattern = patterns[path]
        url = matrix._url(world, name, pattern)
        role = sender(name, method)
        documented = documented_fields(operation, components)
        content_types = ["application/json"]
        if FORM in operation.get("requestBody", {}).get("content", {}):
            content_types.append(FORM)
        for content_type in content_types:
            tried += 1
            where = f"{method} {path} ({content_type}, as {role})"
            response, changed = rolled_back(
                tables, send, client, method, url,
                secret=world["secrets"][role], content_type=content_type,
            )  # fmt: skip
            if changed:
                problems.append(f"{where}: wrote")
            if response.status_code != 400:
                problems.append(f"{where}: {response.status_code}, want 400")
                continue
            error = response.json()["error"]
            named = [p for p in error["problems"] if p.startswith(f"{UNKNOWN}:")]
            match = PROBLEM.match(named[0]) if len(named) == 1 else None
            if match is None:
                problems.append(f"{where}: the field is not named as refused: {error}")
                continue
            accepted = set(match["fields"].split(", ")) if match["fields"] else set()
            if accepted != documented:
                problems.append(
                    f"{where}: takes {sorted(accepted)}, the schema documents {sorted(documented)}"
                )
    assert tried > 40, "the schema's writes were not enumerated"
    return problems


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_every_write_refuses_an_unknown_field_and_writes_nothing(client, api_world):
    schema = client.get("/api/v1/openapi.json").json()
    assert unknown_field_problems(client, api_world, schema) == []


# Nested objects -----------------------------------------------------------------------------

# Objects of a request body whose keys are data, not fields (the schema says any key), by
# operation and place in the body ("[]" an array's item), with the reason.
ANSWERS = "answers keyed by the rubric's dimension keys, read by each dimension's kind"
FREE_FORM = {
    "POST /api/v1/studies/{slug}/adjudication/{adjudication_uuid}/resolve/ responses": ANSWERS,
    "POST /api/v1/studies/{slug}/adjudication/{adjudication_uuid}/resolve/ case": ANSWERS,
    "PUT /api/v1/studies/{slug}/training-items/{item_uuid}/key/ responses": ANSWERS,
    "PUT /api/v1/studies/{slug}/training-items/{item_uuid}/key/ case": ANSWERS,
    "PATCH /api/v1/studies/{slug}/analysis-plan/ aggregation": "a method keyed by each "
    "dimension's key",
    "POST /api/v1/studies/{slug}/cases/ cases[].responses": "a response's text keyed by its "
    "system's name",
    "PUT /api/v1/studies/{slug}/rubric/ dimensions[].config": "a dimension's settings, "
    "which its kind reads and refuses by its own rules (the rubric's clean step)",
}


def _deref(node: dict, components: dict) -> dict:
    while "$ref" in node:
        node = components[node["$ref"].rsplit("/", 1)[1]]
    return node


def nested_objects(node: dict, components: dict, where: tuple = ()):
    """(place, open) of every object below the body's top level: ``place`` a tuple of
    field names and "[]" for an array's item; ``open`` when the schema takes any key."""
    node = _deref(node, components)
    for key in ("allOf", "oneOf", "anyOf"):
        for part in node.get(key, []):
            yield from nested_objects(part, components, where)
    if node.get("type") == "array" and "items" in node:
        yield from nested_objects(node["items"], components, (*where, "[]"))
    if "properties" in node or node.get("type") == "object":
        if where:
            yield where, "additionalProperties" in node and not node.get("properties")
        for name, field in node.get("properties", {}).items():
            yield from nested_objects(field, components, (*where, name))


def place_name(where: tuple) -> str:
    return ".".join(where).replace(".[]", "[]")


def planted_body(where: tuple):
    """A body with ``zz_misspelt`` in the object at ``where`` and nothing else."""
    if not where:
        return {UNKNOWN: 1}
    first, rest = where[0], where[1:]
    inner = planted_body(rest)
    return [inner] if first == "[]" else {first: inner}


def _names_unknown(line: str) -> bool:
    """The line refuses ``zz_misspelt`` by name (the body's checks say "not a field of",
    the rubric's and the case import's their own "unknown field")."""
    return UNKNOWN in line and ("not a field" in line or "unknown field" in line)


def nested_unknown_problems(client, world, schema) -> list[str]:
    patterns = {schema_path(pattern): (name, pattern) for name, pattern in api_urls()}
    components = schema["components"]["schemas"]
    tables = _tables()
    problems, tried, free = [], 0, set()
    for method, path, operation in schema_operations(schema):
        content = operation.get("requestBody", {}).get("content", {})
        if method not in WRITES or "application/json" not in content:
            continue
        name, pattern = patterns[path]
        url = matrix._url(world, name, pattern)
        role = sender(name, method)
        places = dict(nested_objects(content["application/json"]["schema"], components))
        for where, is_open in places.items():
            key = f"{method} {path} {place_name(where)}"
            if is_open:
                free.add(key)
                if key not in FREE_FORM:
                    problems.append(f"{key}: open to any key, and not in FREE_FORM")
                continue
            tried += 1
            body = json.dumps(planted_body(where))
            response, changed = rolled_back(
                tables, client.generic, method, url, body, "application/json",
                HTTP_AUTHORIZATION=f"Bearer {world['secrets'][role]}",
            )  # fmt: skip
            where_sent = f"{key} (as {role})"
            if changed:
                problems.append(f"{where_sent}: wrote")
            if response.status_code != 400:
                problems.append(f"{where_sent}: {response.status_code}, want 400")
                continue
            error = response.json()["error"]
            if not any(_names_unknown(line) for line in [error["message"], *error["problems"]]):
                problems.append(
                    f"{where_sent}: the field is not named as refused: {response.json()}"
                )
    problems += [f"{key}: in FREE_FORM, but no such open object" for key in set(FREE_FORM) - free]
    assert tried >= 5, "the schema's nested objects were not enumerated"
    return problems


def test_every_nested_object_refuses_an_unknown_field_and_writes_nothing(client, api_world):
    schema = client.get("/api/v1/openapi.json").json()
    problems = nested_unknown_problems(client, api_world, schema)
    assert problems == [], "\n".join(problems)


# Power: an endpoint that reads a nested object without refusing an unknown key ------------


def test_a_nested_unknown_field_taken_unseen_is_caught(client, api_world, monkeypatch):
    """Planted: the welfare settings read their strata rows without refusing an unknown key
    (as they did before this check); and a schema that opens the rows to any key."""
    welfare = matrix._url(api_world, "api:welfare", dict(api_urls())["api:welfare"])
    module = sys.modules[resolve(welfare).func.cls.__module__]
    monkeypatch.setattr(module, "row_fields_refuse", lambda *args, **kwargs: None)
    schema = client.get("/api/v1/openapi.json").json()
    problems = nested_unknown_problems(client, api_world, schema)
    assert [p.split(": ")[0] for p in problems] == [
        "PUT /api/v1/studies/{slug}/welfare/ strata[] (as lead)"
    ]
    assert "the field is not named as refused" in problems[0]

    rows = schema["components"]["schemas"]["WelfareStratumRequest"]
    rows.pop("properties"), rows.pop("required", None)
    rows["additionalProperties"] = {}
    problems = nested_unknown_problems(client, api_world, schema)
    assert "PUT /api/v1/studies/{slug}/welfare/ strata[]: open to any key, and not in " in (
        "\n".join(problems)
    )
