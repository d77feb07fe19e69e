"""Every write of the API refuses a field it does not take, by name, and writes nothing.

The writes (POST, PUT, PATCH) come from the served OpenAPI schema, so a new one is tried
here as soon as it is described. Each is sent, by someone its access rule lets in, a body
holding only ``zz_misspelt`` (as JSON, and as a form where the schema takes one, which is
how a file is uploaded): the answer is a 400 in the API's shape naming the field and the
fields to use, which are exactly the ones the schema documents for it, and no row
changed. A misspelt field left out unseen would take its default (``core.api.body_object``
reads every body against the fields its endpoint states).
"""

import json
import re

import pytest
from django.test.client import BOUNDARY, MULTIPART_CONTENT, encode_multipart

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
