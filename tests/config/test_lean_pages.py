"""The pages compute with numpy at most: none loads scipy, statsmodels, pandas or openpyxl,
each tens of megabytes in every web process that has served such a page once
(benchmarks/memory.py, "web after statistics"). Those are for the worker's jobs, the
downloads and the analysis.

Every page and API read of the resolver is opened, in a fresh process, by someone its
access rule lets in, with path arguments built from the access matrices' study (as they
build them: its cases, items, judges, jobs...). The demo study, whose ratings make its
statistics pages compute, opens the pages that take at most its slug once more.
"""

import json
import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.core.management import call_command
from django.http import HttpResponse
from django.test import override_settings
from django.urls import include, path, reverse

from studies.access import COORDINATOR, get_study_for_user
from studies.models import Study
from studies.services.tokens import api_token_create
from tests import test_access_matrix as pages
from tests import test_api_access_matrix as api
from tests.test_access_matrix import world as world  # the shared fixture
from tests.test_api_access_matrix import api_world as api_world  # the shared fixture
from tests.urls_enumeration import ADMIN_NAMESPACE, API_NAMESPACE, pattern_args, project_urls

from ..processes import ROOT, subprocess_database_url

HEAVY = ("scipy", "statsmodels", "pandas", "openpyxl")

# Each request: [URL name, URL, username to sign in as, or None with an API token].
SCRIPT = """
import json, sys
from pathlib import Path
import django
from django.conf import settings

watched, urlconf = sys.argv[1].split(","), sys.argv[2]
given = json.loads(sys.stdin.read())
requests = given["requests"]
# Before the models load: a file field reads its storage's folder then.
for name, value in given["roots"].items():
    setattr(settings, name, Path(value))
if urlconf:
    settings.ROOT_URLCONF = urlconf
django.setup()
from django.contrib.auth import get_user_model
from django.test import Client

clients, first, opened = {}, {}, []
for name, url, username, token in requests:
    if token:
        Client().get(url, HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {token}")
    else:
        if username not in clients:
            clients[username] = Client()
            if username:
                user = get_user_model().objects.get(username=username)
                clients[username].force_login(user)
        clients[username].get(url, HTTP_HOST="127.0.0.1")
    opened.append(name)
    for module in watched:
        if module in sys.modules and module not in first:
            first[module] = name
print(json.dumps({"first": first, "opened": opened}))
"""


def _file_roots() -> dict[str, str]:
    """Where this process keeps uploads and job files (a temporary folder of its own in the
    tests), so that the other finds the study's files."""
    return {name: str(getattr(settings, name)) for name in ("CASE_UPLOAD_ROOT", "JOB_FILES_ROOT")}


def pages_loading(modules, requests, *, urlconf: str = "") -> dict:
    """Which of ``modules`` each request list loads first, opened in a fresh process."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": subprocess_database_url(),
    }
    run = subprocess.run(  # our own script, in our own interpreter
        [sys.executable, "-c", SCRIPT, ",".join(modules), urlconf],
        input=json.dumps({"requests": requests, "roots": _file_roots()}), cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=500, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


# Who opens a page: the first of these its rule lets in (the lead opens most).
OPENERS = ("lead", "admin", "rater", "participant", "adjudicator", "other_rater", "anonymous")
API_OPENERS = ("lead", "admin", "rater", "adjudicator")


def _page_opener(name: str) -> str | None:
    rule = pages.RULES[name]
    if "GET" not in rule.methods:
        return None  # a form's action only: no page to open
    for role in OPENERS:
        if pages.expected(rule, role, "GET") & pages.OK:
            return role
    return "lead"  # refused to everyone for now (the protocol before unblinding): its 403


def _api_opener(name: str) -> str | None:
    rule = api.RULES[name]
    for role in API_OPENERS:
        if api.expected(name, rule, role, "GET") & api.OK:
            return role
    return None  # a write only: no read to open


def every_page(world) -> list[list]:
    """A request for every page, admin page and API read of the resolver."""
    people, requests = world["people"], []
    for name, pattern in project_urls():
        if name == f"{ADMIN_NAMESPACE}:":
            requests.append([name, "/admin/no-such-page/", people["admin"].username, None])
        elif name.startswith(f"{ADMIN_NAMESPACE}:"):
            url = reverse(name, kwargs=pages._admin_kwargs(world, name, pattern))
            requests.append([name, url, people["admin"].username, None])
        elif name.startswith(f"{API_NAMESPACE}:"):
            role = _api_opener(name)
            if role is not None:
                url = api._url(world, name, pattern)
                requests.append([name, url, None, world["secrets"][role]])
        else:
            role = _page_opener(name)
            if role is None:
                continue
            url = reverse(name, kwargs=pages._kwargs(world, name, pattern, role))
            username = "" if role == "anonymous" else people[role].username
            requests.append([name, url, username, None])
    return requests


# A fresh process opening every page: about a minute on a quiet machine, more on a busy one.
@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.django_db(transaction=True)  # committed, so the other process sees the study
def test_no_page_loads_the_heavy_libraries(api_world):
    requests = every_page(api_world)
    found = pages_loading([*HEAVY, "numpy"], requests)
    assert len(found["opened"]) == len(requests)
    # Pages that take more than the slug were opened, each by someone it lets in.
    assert {"annotation:rate", "agreement:judge_calibration", "studies:quality_item"} <= set(
        found["opened"]
    )
    assert {m: page for m, page in found["first"].items() if m in HEAVY} == {}


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.django_db(transaction=True)
def test_no_page_of_the_demo_study_loads_the_heavy_libraries():
    """The demo study's ratings make its statistics pages compute: the pages that take at
    most its slug, as its lead (with the lead's token for the API's)."""
    call_command("load_demo", verbosity=0)
    lead = Study.objects.get(slug="reference-demo").lead
    _, token = api_token_create(user=lead, name="pages")
    requests = []
    for name, pattern in project_urls():
        if not name or name.startswith(f"{ADMIN_NAMESPACE}:"):
            continue
        if set(pattern_args(pattern)) - {"slug"}:
            continue
        url = reverse(name, kwargs={"slug": "reference-demo"} if pattern_args(pattern) else {})
        if name.startswith(f"{API_NAMESPACE}:"):
            requests.append([name, url, None, token])
        else:
            requests.append([name, url, lead.username, None])
    found = pages_loading([*HEAVY, "numpy"], requests)
    assert {"annotation:raters", "agreement:study", "agreement:report"} <= set(found["opened"])
    assert {m: page for m, page in found["first"].items() if m in HEAVY} == {}
    # The check's power: the pages that compute with numpy are found loading it.
    assert "numpy" in found["first"]


# Power: a page whose URL takes more than the slug, loading a heavy library -----------------


def planted_heavy(request, slug, judge_uuid):
    """A planted page of a judge (slug and judge) that reads a workbook."""
    import openpyxl  # noqa: F401

    get_study_for_user(request.user, slug, role=COORDINATOR)
    return HttpResponse("heavy")


urlpatterns = [
    path("s/<slug:slug>/judges/<uuid:judge_uuid>/planted/", planted_heavy, name="planted_heavy"),
    path("", include("config.urls")),
]


@pytest.mark.timeout(600)
@pytest.mark.django_db(transaction=True)
def test_a_heavy_page_with_more_than_the_slug_is_caught(api_world, monkeypatch):
    monkeypatch.setitem(pages.RULES, "planted_heavy", pages.Rule("coordinator", methods=("GET",)))
    with override_settings(ROOT_URLCONF=__name__):
        requests = [r for r in every_page(api_world) if not r[0].startswith(API_NAMESPACE)]
    # The planted page, among the study's pages that take more than the slug.
    kept = [r for r in requests if r[0].startswith(("planted", "agreement:judge", "studies:"))]
    assert "planted_heavy" in [r[0] for r in kept]
    found = pages_loading(HEAVY, kept, urlconf=__name__)
    assert found["first"] == {"openpyxl": "planted_heavy"}
