"""Reads do not write: every GET of every page and API endpoint, as every kind of person,
leaves every row of the project's tables as it was and schedules no job.

The URLs come from the resolver, as in the access matrices (whose study, people and
write check this reuses), so a new page is checked the day it is added. What a person
asks to be done is a POST (the statistics pages' Compute buttons, say); a page that finds
its result stale or missing says so rather than starting the work itself.
"""

import sys
from functools import partial

import pytest
from django.db import connection, transaction
from django.http import HttpResponse
from django.test import override_settings
from django.urls import include, path, reverse

import jobs.runner
from jobs.models import Job
from studies.access import COORDINATOR, get_study_for_user
from studies.models import Study

from .test_access_matrix import (
    ROLES,
    _admin_kwargs,
    _kwargs,
    _request,
    rolled_back,
    run_after_commit,
)
from .test_access_matrix import world as world  # the shared fixture
from .test_api_access_matrix import ROLES as API_ROLES
from .test_api_access_matrix import _url as _api_url
from .test_api_access_matrix import api_world as api_world  # the shared fixture
from .test_api_access_matrix import call
from .urls_enumeration import ADMIN_NAMESPACE, API_NAMESPACE, api_urls, in_chunk, project_urls

# GETs that may write, by URL name, each with the reason it is right to: reviewed here,
# never silent. None today.
#
# Not in it, as they write in no world this test builds, but written down here: a job's
# progress poller (``jobs.services.job_status``: the analysis, Assign, case import status
# URLs and the API's) records a job heard from no more as stopped, which only happens once
# its process has died; an API token's "last used" time is written at most once a minute
# (the API world marks its tokens as just used). Not writes in this sense, and left out of
# the check: the session a sign-in keeps, a user's last sign-in, and the sign-in throttle,
# which counts in the cache.
GET_WRITES: dict[str, str] = {}

# Sign-ins and messages live in the session, not in the project's data.
UNCHECKED_TABLES = {"django_session"}


def _project_tables() -> list[str]:
    """Every table of the project's apps and of Django's, the session's aside."""
    tables = connection.introspection.django_table_names(only_existing=True)
    return sorted(set(tables) - UNCHECKED_TABLES)


@pytest.fixture
def scheduled(monkeypatch):
    """Every job scheduled, recorded instead of run: ``job_schedule`` wherever imported."""
    calls = []
    real = jobs.runner.job_schedule

    def record(task, **kwargs):
        calls.append(getattr(task, "name", repr(task)))
        return True

    for module in list(sys.modules.values()):
        if getattr(module, "job_schedule", None) is real:
            monkeypatch.setattr(module, "job_schedule", record)
    return calls


def _page_urls(world, only=None):
    """(name, role, url) of every page GET to try: every resolver URL but the API's."""
    for name, pattern in project_urls():
        if name.startswith(f"{API_NAMESPACE}:") or (only is not None and name not in only):
            continue
        for role in ROLES:
            if name == f"{ADMIN_NAMESPACE}:":
                url = "/admin/no-such-page/"  # the admin's unnamed catch-all
            elif name.startswith(f"{ADMIN_NAMESPACE}:"):
                url = reverse(name, kwargs=_admin_kwargs(world, name, pattern))
            else:
                url = reverse(name, kwargs=_kwargs(world, name, pattern, role))
            yield name, role, url


def get_writes(client, world, scheduled, *, only=None) -> list[str]:
    """Each page GET, as each role, that wrote a row or scheduled a job (unless listed)."""
    tables = _project_tables()
    world["tables"] = tables  # the matrix's ``_request`` checks these
    problems = []
    for name, role, url in _page_urls(world, only):
        if name in GET_WRITES:
            continue
        del scheduled[:]
        after_commit: list = []
        response, changed = _request(
            client, world, role, "GET", url, name, after_commit=after_commit
        )
        if response.status_code >= 500:
            problems.append(f"{name} GET {url} as {role}: {response.status_code}")
        if changed:
            problems.append(f"{name} GET {url} as {role}: wrote")
        if scheduled:
            problems.append(f"{name} GET {url} as {role}: scheduled {scheduled}")
        if after_commit:
            problems.append(f"{name} GET {url} as {role}: {_after_commit(after_commit)}")
    return problems


def _after_commit(callbacks) -> str:
    """What a request left for after its commit, by the callbacks' names."""
    names = [
        getattr(getattr(c, "func", c), "__qualname__", type(c).__qualname__) for c in callbacks
    ]
    return f"left work for after the commit {names}"


# Every URL as every role, in chunks (the whole took up to 300 s on a busy machine): each
# about 40 s on a quiet machine, twice that on a busy one, well inside its own limit.
PAGE_CHUNKS = 4
API_CHUNKS = 2


# Slow (every URL, every role): started first in a parallel run (tests/conftest.py).
@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("chunk", range(PAGE_CHUNKS))
def test_no_page_get_writes_or_schedules_a_job(client, world, scheduled, chunk):
    jobs_before = set(Job.objects.values_list("pk", flat=True))
    names = [name for name, _ in project_urls() if not name.startswith(f"{API_NAMESPACE}:")]
    problems = get_writes(client, world, scheduled, only=set(in_chunk(names, chunk, PAGE_CHUNKS)))
    assert not problems, "\n".join(problems)
    assert set(Job.objects.values_list("pk", flat=True)) == jobs_before


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("chunk", range(API_CHUNKS))
def test_no_api_get_writes_or_schedules_a_job(client, api_world, scheduled, chunk):
    tables = _project_tables()
    problems = []
    for name, pattern in in_chunk(api_urls(), chunk, API_CHUNKS):
        if name in GET_WRITES:
            continue
        url = _api_url(api_world, name, pattern)
        for role in API_ROLES:
            del scheduled[:]
            secret = api_world["secrets"].get(role)
            after_commit: list = []
            response, changed = rolled_back(
                tables, run_after_commit, call, after_commit, client, "GET", url, secret=secret
            )
            if changed or scheduled or after_commit:
                problems.append(
                    f"{name} GET {url} as {role}: wrote {changed}, {scheduled}, "
                    f"{_after_commit(after_commit)}"
                )
    assert not problems, "\n".join(problems)


def test_a_statistics_page_offers_compute_and_only_the_press_schedules(client, world, scheduled):
    """A judge's calibration page, whose GET used to start its job: the button is there,
    and its POST (not the GET) schedules the job."""
    study, judge_uuid = world["study"], world["args"]["judge_uuid"]
    client.force_login(world["people"]["lead"])
    page = reverse("agreement:judge_calibration", args=[study.slug, judge_uuid])
    assert 'id="analysis-not-computed"' in client.get(page).text and not scheduled
    compute = reverse("agreement:judge_calibration_compute", args=[study.slug, judge_uuid])
    assert client.post(compute)["Location"] == page
    assert scheduled == ["agreement.tasks.compute_analysis"]


# The test's power: pages that write on GET -----------------------------------------------


def renames_the_study(request, slug):
    """A planted read that writes: the study's name, on every view."""
    study, _ = get_study_for_user(request.user, slug, role=COORDINATOR)
    Study.objects.filter(pk=study.pk).update(name=f"{study.name}!")
    return HttpResponse("seen")


def starts_a_job(request, slug):
    """A planted read that schedules a job (its row as well)."""
    from agreement.tasks import compute_analysis
    from jobs.runner import job_schedule

    study, _ = get_study_for_user(request.user, slug, role=COORDINATOR)
    job = Job.objects.create(kind=Job.Kind.ANALYSIS, study_id=study.pk, name="planted")
    job_schedule(compute_analysis, args=[job.pk])
    return HttpResponse("started")


def schedules_only(request, slug):
    """A planted read that schedules a job and writes no row."""
    from agreement.tasks import sweep_stale_studies
    from jobs.runner import job_schedule

    get_study_for_user(request.user, slug, role=COORDINATOR)
    job_schedule(sweep_stale_studies)
    return HttpResponse("scheduled")


def recomputes_after_commit(request, slug):
    """A planted read that asks for a recompute once its transaction commits: in
    production, every poll of such a page would queue one."""
    from agreement.services.recompute import agreement_request_recompute

    study, _ = get_study_for_user(request.user, slug, role=COORDINATOR)
    transaction.on_commit(partial(agreement_request_recompute, study_id=study.pk))
    return HttpResponse("stale")


def renames_after_commit(request, slug):
    """A planted read whose write waits for the commit."""
    study, _ = get_study_for_user(request.user, slug, role=COORDINATOR)
    rename = Study.objects.filter(pk=study.pk).update
    transaction.on_commit(lambda: rename(name=f"{study.name}!"))
    return HttpResponse("seen")


urlpatterns = [
    path("s/<slug:slug>/planted-rename/", renames_the_study, name="planted_rename"),
    path("s/<slug:slug>/planted-job/", starts_a_job, name="planted_job"),
    path("s/<slug:slug>/planted-schedule/", schedules_only, name="planted_schedule"),
    path("s/<slug:slug>/planted-recompute/", recomputes_after_commit, name="planted_recompute"),
    path("s/<slug:slug>/planted-later/", renames_after_commit, name="planted_later"),
    path("", include("config.urls")),
]


@override_settings(ROOT_URLCONF=__name__)
def test_a_page_get_that_writes_or_schedules_is_caught(client, world, scheduled):
    """The planted pages are enumerated from the resolver like any other, and reported for
    each role they answer; a page that only reads (the overview) is not."""
    planted = {"planted_rename", "planted_job", "planted_schedule"}
    after_commit = {"planted_recompute", "planted_later"}
    only = planted | after_commit | {"annotation:overview"}
    problems = get_writes(client, world, scheduled, only=only)
    allowed = {"lead", "coordinator", "admin"}  # the others are refused before any write
    assert {p.split(" GET ")[0] for p in problems} == planted | after_commit
    assert {p.split(" as ")[1].split(":")[0] for p in problems} == allowed

    def reported(page, what):
        return sum(p.startswith(f"{page} ") and what in p for p in problems)

    for page in ("planted_rename", "planted_job", "planted_later", "planted_recompute"):
        assert reported(page, ": wrote") == len(allowed), page
    for page in ("planted_job", "planted_schedule"):
        assert reported(page, ": scheduled ['agreement.") == len(allowed), page
    # The first asks for the recompute; the claim it holds (in Redis, not rolled back)
    # folds the others' into it, as in production.
    assert reported("planted_recompute", ": scheduled ['agreement.tasks.recompute_study']") == 1
    # The work left for after the commit is named, whether or not it writes.
    assert reported("planted_recompute", "agreement_request_recompute") == len(allowed)
    assert reported("planted_later", "renames_after_commit.<locals>.<lambda>") == len(allowed)
    study = Study.objects.get(pk=world["study"].pk)
    assert study.name == world["study"].name  # nothing was kept
