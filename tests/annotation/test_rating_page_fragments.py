"""The rating form's dimension fields are rendered once per process and kept (the
"fragments" cache): a page built from kept fields is the page built from scratch, and a
change to the rubric or to the labels is never served old fields."""

import re

import pytest
from django.core.cache import caches
from django.urls import reverse

from studies.models import Dimension

from ..factories import UserFactory, make_study

TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')


def _page(client, assignment) -> str:
    response = client.get(reverse("annotation:rate", args=[assignment.uuid]))
    assert response.status_code == 200
    return TOKEN.sub("", response.text)


@pytest.fixture
def rater_cases(db, client):
    user = UserFactory()
    study = make_study(slug="fragments", cases=4, raters=[user], consented=True)
    client.force_login(user)
    caches["fragments"].clear()
    return study, list(study.memberships.get(user=user).assignments.order_by("position"))


def test_a_page_from_kept_fields_is_the_page_rendered_from_scratch(client, settings, rater_cases):
    _, cases = rater_cases
    kept = [_page(client, a) for a in cases] + [_page(client, a) for a in cases]
    settings.CACHES = {
        **settings.CACHES,
        "fragments": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"},
    }
    fresh = [_page(client, a) for a in cases]
    assert kept == fresh + fresh


def test_a_flipped_screen_and_a_changed_rubric_get_their_own_fields(client, rater_cases):
    study, cases = rater_cases
    cases[0].flipped, cases[1].flipped = False, True
    for assignment in cases[:2]:
        assignment.save(update_fields=["flipped"])
    straight, flipped = _page(client, cases[0]), _page(client, cases[1])
    assert 'id="A-depth-flag"' in straight and 'id="A-depth-flag"' in flipped
    assert "for response A" in straight and "for response B" in flipped  # shown labels
    assert "for response B" not in straight.split('data-label="B"')[0]
    Dimension.objects.filter(rubric=study.rubric, key="depth").update(name="Depth, renamed")
    assert "Depth, renamed" in _page(client, cases[0])
