"""The key-swap test: no output before unblinding depends on the blinding key.

The same study is built twice, the second time with the key of a seeded half of its cases
swapped (A <-> B), and everything an observer knows without the key kept the same
(``world``). Every page of the resolver, every GET operation of the API's schema, every
export and download, as the lead, an administrator and a rater, must then be the same in
both builds (the rater's with the response texts, which they read under their labels,
set aside). An output that differs depends on the key: it would tell it.
"""

import pytest
from django.http import HttpResponse
from django.test import override_settings
from django.urls import include, path

from studies.access import COORDINATOR, get_study_for_user

from ..urls_enumeration import API_NAMESPACE, project_urls, schema_operations
from .outputs import SKIPPED_SCHEMA_METHODS, differences, outputs_collect
from .world import build, database_empty, same_draws, swapped_half


def _both_builds(**collect):
    """The outputs of the study built under its own key, then with a half swapped."""
    fetched, keys = [], []
    for swap in (frozenset(), swapped_half()):
        database_empty()
        with same_draws() as clock:
            world = build(swap=swap, clock=clock)
            keys.append(world.key)
            fetched.append(outputs_collect(world, **collect))
    # The builds differ in their key, and only where they were told to.
    assert {case for case in keys[0] if keys[0][case] != keys[1][case]} == swapped_half()
    return fetched


@pytest.mark.django_db(transaction=True)
def test_no_output_depends_on_the_key():
    first, second = _both_builds()
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


urlpatterns = [
    path("s/<slug:slug>/planted-leak/", systems_in_key_order, name="planted_leak"),
    path("", include("config.urls")),
]


@pytest.mark.django_db(transaction=True)
@override_settings(ROOT_URLCONF=__name__)
def test_a_page_that_shows_the_key_is_caught():
    """The planted page is enumerated from the resolver like any other, and reported."""
    # The overview as well, a page that says nothing of the key: it must not be reported.
    first, second = _both_builds(only={"planted_leak", "annotation:overview"})
    assert "planted_leak" in first.url_names
    problems = differences(first, second)
    assert problems, "the planted page was not caught"
    assert all(p.startswith("planted_leak GET /s/keyswap/planted-leak/ as ") for p in problems)
    reported = {p.split(" as ")[1].split(":")[0] for p in problems}
    assert reported == {"lead", "admin"}  # the rater gets 403, the same in both builds
