"""Every output of a study before unblinding, as each role gets it, in comparable form.

The pages come from the URL resolver and the API operations from the served schema
(``tests.urls_enumeration``), so a new page or endpoint is fetched without being named
here. What is volatile and says nothing of the key (CSRF tokens, CSP nonces, the zip
members' dates) is normalised; see docs/blinding.md for the relation the outputs are
compared by.
"""

import contextlib
import difflib
import io
import json
import re
import zipfile
from dataclasses import dataclass
from itertools import product

from django.contrib import admin
from django.contrib.contenttypes.models import ContentType
from django.test import Client
from django.urls import reverse

from annotation.exports import FORMATS, WORKSHEET_CSV, WORKSHEET_XLSX
from studies.models import Study
from studies.rubric import KINDS
from studies.services.lifecycle import TRANSITIONS
from studies.views.setup import SAMPLE_FILES

from ..urls_enumeration import (
    ADMIN_NAMESPACE,
    API_NAMESPACE,
    admin_url_model,
    pattern_args,
    project_urls,
    schema_operations,
)
from .world import World

ROLES = ("lead", "admin", "rater", "adjudicator")
SCHEMA_URL = "/api/v1/openapi.json"
# Path arguments that do not come from the study: every value the URL takes.
STATIC_ARGS = {
    "kind": sorted(KINDS),
    "fmt": list(FORMATS),
    "name": list(SAMPLE_FILES),
    "action": sorted(TRANSITIONS),
}
# Every resolver URL is fetched with GET, the POST-only ones too (they answer 405, an
# output like any other), except the API's: those are fetched per operation of the served
# schema, with a token. Its operations other than GET are writes, not outputs: skipped.
SKIPPED_SCHEMA_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# The buttons that compute a page's statistics (kept for the data as they are).
COMPUTE_BUTTONS = (
    "agreement:ranking_compute",
    "agreement:judge_calibration_compute",
    "agreement:robustness_compute",
)
# Query parameters of the exports: a rater's own worksheet.
WORKSHEET_FORMATS = (WORKSHEET_CSV, WORKSHEET_XLSX)

VOLATILE = (
    (re.compile(r'(name="csrfmiddlewaretoken" value=")[^"]*"'), r'\1<csrf>"'),
    (re.compile(r'(nonce=")[^"]*"'), r'\1<nonce>"'),
)
ZIP_TYPES = ("application/zip", "application/vnd.openxmlformats")
COMPARED_HEADERS = ("Content-Type", "Content-Disposition", "Location")


@dataclass(frozen=True)
class Fetched:
    """The outputs of one build: {(role, what): text}, and what was fetched."""

    outputs: dict[tuple[str, str], str]
    url_names: frozenset[str]
    operations: frozenset[tuple[str, str]]
    schema: dict


def _body(response) -> bytes:
    if response.streaming:
        return b"".join(response.streaming_content)
    return response.content


def _members(data: bytes) -> str:
    """A zip as its members, one after another: names and contents, not dates."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        parts = []
        for info in sorted(archive.infolist(), key=lambda i: i.filename):
            content = archive.read(info.filename)
            parts.append(f"--- member {info.filename}\n{_text(content)}")
    return "\n".join(parts)


def _text(data: bytes) -> str:
    try:
        return data.decode()
    except UnicodeDecodeError:
        return f"<{len(data)} bytes> {data.hex()}"


def normalised(response, world: World, role: str) -> str:
    """One response as compared: status, the headers that carry content, the body."""
    body = _body(response)
    content_type = response.get("Content-Type", "")
    text = _members(body) if content_type.startswith(ZIP_TYPES) else _text(body)
    if content_type.startswith("application/json"):
        with contextlib.suppress(ValueError):  # JSON lines stay as they are
            # One value a line, so that a difference is shown where it is.
            text = json.dumps(json.loads(body), indent=1, ensure_ascii=False)
    for pattern, replacement in VOLATILE:
        text = pattern.sub(replacement, text)
    # The fingerprint commits to the protocol document, key included, without revealing
    # it: a SHA-256 over a text that holds the hidden secret (docs/blinding.md).
    fingerprint = world.study.protocol_fingerprint
    if fingerprint:
        # Whole, and as the event log shortens it.
        text = text.replace(fingerprint, "<fingerprint>").replace(fingerprint[:12], "<fingerprint>")
    if role in ("rater", "adjudicator"):
        # A rater (and an adjudicator, who reads the pair as the key orders it) reads each
        # response under its label: which text that is is the key.
        for response_text in world.response_texts:
            text = text.replace(response_text, "<response text>")
    headers = "".join(f"{h}: {response[h]}\n" for h in COMPARED_HEADERS if response.has_header(h))
    return f"{response.status_code}\n{headers}\n{text}"


def _admin_args(name: str, world: World) -> dict:
    """Values for the admin's path arguments: the first object of the model a URL names."""
    model = admin_url_model(name)
    first = model._default_manager.order_by("pk").first() if model else None
    return {
        "app_label": sorted({m._meta.app_label for m in admin.site._registry}),
        "content_type_id": [ContentType.objects.get_for_model(Study).pk],
        "id": [world.people["rater"].pk],
        # "View on site" takes any object; a model with no row is asked for one that is not.
        "object_id": [first.pk if first else (world.study.pk if model is None else 0)],
    }


def _values(known: dict, args: list[str], what: str) -> list[list]:
    missing = [a for a in args if a not in known]
    assert not missing, f"{what}: give {missing} values in tests/blinding (STATIC_ARGS or world)"
    return [known[a] for a in args]


def _pattern_urls(name, pattern, world: World) -> list[str]:
    if name == f"{ADMIN_NAMESPACE}:":
        return ["/admin/no-such-page/"]  # the admin's unnamed catch-all
    args = pattern_args(pattern)
    known = {**STATIC_ARGS, **world.args}
    if name.startswith(f"{ADMIN_NAMESPACE}:"):
        known.update(_admin_args(name, world))
    values = _values(known, args, name)
    urls = [reverse(name, kwargs=dict(zip(args, combo, strict=True))) for combo in product(*values)]
    if name == "annotation:export":
        for fmt, rater in product(WORKSHEET_FORMATS, world.pseudonyms):
            urls.append(reverse(name, args=[world.study.slug, fmt]) + f"?rater={rater}")
    return urls


def _operation_urls(path: str, operation: dict, world: World) -> list[str]:
    params = operation.get("parameters", [])
    in_path = [p["name"] for p in params if p["in"] == "path"]
    values = _values({**STATIC_ARGS, **world.args}, in_path, path)
    urls = []
    for combo in product(*values):
        url = path
        for arg, value in zip(in_path, combo, strict=True):
            url = url.replace("{" + arg + "}", str(value))
        urls.append(url)
        takes_rater = any(p["name"] == "rater" and p["in"] == "query" for p in params)
        if takes_rater and dict(zip(in_path, combo, strict=True)).get("fmt") in WORKSHEET_FORMATS:
            urls += [f"{url}?rater={rater}" for rater in world.pseudonyms]
    return urls


def _statistics_computed(client, world: World, only) -> None:
    """The statistics pages show what their Compute button computed (a GET computes
    nothing): pressed first, by the lead, so that what the pages show is compared too."""
    for name, pattern in project_urls():
        if name in COMPUTE_BUTTONS and (only is None or name in only):
            for url in _pattern_urls(name, pattern, world):
                assert client.post(url).status_code == 302, url


def outputs_collect(world: World, *, only=None) -> Fetched:
    """Every page and API GET operation as every role; ``only`` keeps some URL names."""
    outputs = {}
    url_names, operations = set(), set()
    clients = {}
    for role in ROLES:
        clients[role] = Client()
        clients[role].force_login(world.people[role])
    _statistics_computed(clients["lead"], world, only)
    for name, pattern in project_urls():
        if name.startswith(f"{API_NAMESPACE}:") or (only is not None and name not in only):
            continue
        # The admin site is staff's only (the access matrix holds everyone else to that).
        roles = ("admin",) if name.startswith(f"{ADMIN_NAMESPACE}:") else ROLES
        for url in _pattern_urls(name, pattern, world):
            for role in roles:
                response = clients[role].get(url)
                outputs[(role, f"{name} GET {url}")] = normalised(response, world, role)
                url_names.add(name)
    api = Client()
    schema_response = api.get(SCHEMA_URL)
    schema = schema_response.json()
    if only is None:
        outputs[("anyone", SCHEMA_URL)] = normalised(schema_response, world, "anyone")
    for method, path, operation in schema_operations(schema):
        if method in SKIPPED_SCHEMA_METHODS or only is not None:
            continue
        for url in _operation_urls(path, operation, world):
            for role in ROLES:
                headers = {"HTTP_AUTHORIZATION": f"Bearer {world.secrets[role]}"}
                response = api.get(url, **headers)
                outputs[(role, f"API {method} {url}")] = normalised(response, world, role)
                operations.add((method, path))
    return Fetched(outputs, frozenset(url_names), frozenset(operations), schema)


def differences(first: Fetched, second: Fetched, *, context_lines: int = 12) -> list[str]:
    """Each output that differs between two builds: role, URL and a short diff."""
    problems = []
    for key in sorted(set(first.outputs) | set(second.outputs)):
        one, two = first.outputs.get(key, ""), second.outputs.get(key, "")
        if one == two:
            continue
        role, what = key
        diff = difflib.unified_diff(
            one.splitlines(), two.splitlines(), "key 1", "key 2", n=1, lineterm=""
        )
        lines = [line[:200] for line in diff][2 : 2 + context_lines]
        problems.append(f"{what} as {role}:\n    " + "\n    ".join(lines))
    return problems
