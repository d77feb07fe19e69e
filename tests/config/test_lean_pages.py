"""The pages a coordinator opens compute with numpy at most: none loads scipy, statsmodels,
pandas or openpyxl, each tens of megabytes in every web process that has served such a page
once (benchmarks/memory.py, "web after statistics"). Those are for the worker's jobs, the
downloads and the analysis. Every page of the resolver that takes at most the study's slug is
opened, in a fresh process, as the demo study's lead: the pages with a session, the API's
with the lead's token."""

import json
import os
import subprocess
import sys

import pytest
from django.core.management import call_command

from studies.models import Study
from studies.services.tokens import api_token_create

from ..processes import ROOT, subprocess_database_url

HEAVY = ("scipy", "statsmodels", "pandas", "openpyxl")

SCRIPT = """
import json, sys
import django
django.setup()
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from tests.urls_enumeration import pattern_args, project_urls

watched, username, slug, token = sys.argv[1].split(","), *sys.argv[2:5]
client = Client()
client.force_login(get_user_model().objects.get(username=username))
first, opened = {}, []
for name, pattern in project_urls():
    if not name or name.startswith("admin:") or set(pattern_args(pattern)) - {"slug"}:
        continue
    kwargs = {"slug": slug} if pattern_args(pattern) else {}
    if name.startswith("api:"):
        Client().get(
            reverse(name, kwargs=kwargs), HTTP_HOST="127.0.0.1",
            HTTP_AUTHORIZATION=f"Bearer {token}",
        )
    else:
        client.get(reverse(name, kwargs=kwargs), HTTP_HOST="127.0.0.1")
    opened.append(name)
    for module in watched:
        if module in sys.modules and module not in first:
            first[module] = name
print(json.dumps({"first": first, "opened": opened}))
"""


def pages_loading(modules, *, token: str, username="coordinator", slug="reference-demo") -> dict:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": subprocess_database_url(),
    }
    run = subprocess.run(  # our own script, in our own interpreter
        [sys.executable, "-c", SCRIPT, ",".join(modules), username, slug, token],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.django_db(transaction=True)
def test_no_page_a_coordinator_opens_loads_the_heavy_libraries():
    call_command("load_demo", verbosity=0)
    lead = Study.objects.get(slug="reference-demo").lead
    _, token = api_token_create(user=lead, name="pages")
    found = pages_loading([*HEAVY, "numpy"], token=token, username=lead.username)
    # The pages were opened, the study's among them.
    assert {"annotation:raters", "agreement:study", "agreement:report"} <= set(found["opened"])
    assert {m: page for m, page in found["first"].items() if m in HEAVY} == {}
    # The check's power: the pages that compute with numpy are found loading it.
    assert "numpy" in found["first"]
