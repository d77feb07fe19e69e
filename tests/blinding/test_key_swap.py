"""The key-swap test: no output before unblinding depends on the blinding key.

The same study is built twice, with two blinding secrets whose keys differ on some of its
cases (A <-> B), and everything an observer knows without the key kept the same
(``world``). Every page of the resolver, every GET operation of the API's schema, every
export and download, as the lead, an administrator and a rater, must then be the same in
both builds (the rater's with the response texts, which they read under their labels,
set aside). An output that differs depends on the key: it would tell it.
"""

import functools
from contextlib import ExitStack
from unittest import mock

import pytest
from django.http import HttpResponse
from django.test import override_settings
from django.urls import include, path

from studies.access import COORDINATOR, get_study_for_user
from studies.blinding import blinded_order

from ..urls_enumeration import API_NAMESPACE, project_urls, schema_operations
from .outputs import SKIPPED_SCHEMA_METHODS, Fetched, differences, outputs_collect
from .world import (
    SECRET,
    build,
    database_empty,
    key_differences,
    prompt_order_pinned,
    same_draws,
    second_secret,
)

# The pages of the power test below (planted in this module's URLs), and the overview, a
# page that says nothing of the key.
PLANTED = frozenset({"planted_leak", "planted_draw", "annotation:overview"})


@functools.cache
def _both_builds() -> tuple[tuple[Fetched, Fetched], tuple[Fetched, Fetched]]:
    """The outputs of the study built with two blinding secrets, whose keys differ on some
    of the sample cases: the real draw, so that an output that works the key out from the
    seed and the secret differs too.

    Each build's outputs are collected twice: every output under the project's URLs, then
    the planted pages under this module's. Both tests below compare these same two builds
    (one xdist group keeps them on one process), so the study is built twice, not four times.
    """
    fetched, planted, keys = [], [], []
    secrets = (SECRET, second_secret())
    for secret in secrets:
        database_empty()
        with same_draws() as clock, ExitStack() as pins:
            for where in ("agreement.judges.prompts", "agreement.demo"):
                pins.enter_context(mock.patch(f"{where}.judge_prompt_first", prompt_order_pinned))
            world = build(secret=secret, clock=clock)
            keys.append(world.key)
            fetched.append(outputs_collect(world))
            with override_settings(ROOT_URLCONF=__name__):
                planted.append(outputs_collect(world, only=PLANTED))
    # The builds differ in their key, and only on the cases the two secrets draw apart.
    differing = {case for case in keys[0] if keys[0][case] != keys[1][case]}
    assert differing == key_differences(*secrets) and differing
    return (fetched[0], fetched[1]), (planted[0], planted[1])


# Slow (every URL, every role): started first in a parallel run (tests/conftest.py).
@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.xdist_group("key-swap")
@pytest.mark.django_db(transaction=True)
def test_no_output_depends_on_the_key():
    (first, second), _ = _both_builds()
    # Coverage: every resolver URL and every schema operation was fetched, or is a write.
    names = {name for name, _ in project_urls() if not name.startswith(f"{API_NAMESPACE}:")}
    assert first.url_names == names
    operations = {
        (method, path)
        for method, path, _ in schema_operations(first.schema)
        if method not in SKIPPED_SCHEMA_METHODS
    }
    assert first.operations == operations
    assert first.outputs.keys() == second.outputs.keys()
    problems = differences(first, second)
    assert not problems, f"{len(problems)} outputs depend on the key:\n" + "\n".join(problems)
    # The monitored primary question's outputs were among them, with its state.
    monitor = first.outputs[("lead", "API GET /api/v1/studies/keyswap/monitor/")]
    assert '"monitoring": true' in monitor.replace('"monitoring":true', '"monitoring": true')
    assert "not_decided" in monitor


# The test's power: a page that shows the key ---------------------------------------------


def systems_in_key_order(request, slug):
    """A planted leak: each case's systems, in the order they are shown (A first)."""
    study, _ = get_study_for_user(request.user, slug, role=COORDINATOR)
    lines = [
        f"{case.case_id}: " + ", ".join(label.response.system.name for label in case.labels.all())
        for case in study.test_cases.order_by("position").prefetch_related(
            "labels__response__system"
        )
    ]
    return HttpResponse("\n".join(lines), content_type="text/plain")


def key_worked_out(request, slug):
    """A planted leak that reads no key: it works it out from the seed and the secret."""
    study, _ = get_study_for_user(request.user, slug, role=COORDINATOR)
    systems = list(study.systems.values_list("name", flat=True))
    lines = [
        f"{case_id}: "
        + ", ".join(
            blinded_order(
                seed=study.blinding_seed,
                secret=study.blinding_secret,
                case_id=case_id,
                systems=systems,
            )
        )
        for case_id in study.test_cases.order_by("position").values_list("case_id", flat=True)
    ]
    return HttpResponse("\n".join(lines), content_type="text/plain")


urlpatterns = [
    path("s/<slug:slug>/planted-leak/", systems_in_key_order, name="planted_leak"),
    path("s/<slug:slug>/planted-draw/", key_worked_out, name="planted_draw"),
    path("", include("config.urls")),
]


# Slow (every URL, every role): started first in a parallel run (tests/conftest.py).
@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.xdist_group("key-swap")
@pytest.mark.django_db(transaction=True)
def test_a_page_that_shows_the_key_is_caught():
    """The planted page is enumerated from the resolver like any other, and reported."""
    # The overview as well, a page that says nothing of the key: it must not be reported.
    _, (first, second) = _both_builds()
    assert {"planted_leak", "planted_draw"} <= first.url_names
    problems = differences(first, second)
    assert problems, "the planted pages were not caught"
    reported = {(p.split(" ")[0], p.split(" as ")[1].split(":")[0]) for p in problems}
    # The rater gets 403, the same in both builds; the overview says nothing of the key.
    assert reported == {
        (name, role) for name in ("planted_leak", "planted_draw") for role in ("lead", "admin")
    }
