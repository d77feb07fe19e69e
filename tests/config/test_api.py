"""What every API endpoint shares: the error shape, pages, throttling, bounded bodies."""

import json

import pytest
from django.contrib.auth.models import Group

from studies.access import COORDINATORS_GROUP
from studies.services import tokens
from tests.factories import UserFactory, make_study


@pytest.fixture
def lead(db):
    user = UserFactory(username="api-shared-lead")
    user.groups.add(Group.objects.get_or_create(name=COORDINATORS_GROUP)[0])
    return user


@pytest.fixture
def auth(lead):
    _, secret = tokens.api_token_create(user=lead, name="t")
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}"}


def post(client, url, body, auth):
    return client.generic("POST", url, body, "application/json", **auth)


def test_every_refusal_has_one_shape(client, auth):
    cases = [
        client.get("/api/v1/studies/"),  # no token
        client.get("/api/v1/studies/", HTTP_AUTHORIZATION="Token abc"),  # wrong scheme
        client.get("/api/v1/studies/nope/", **auth),
        client.get("/api/v1/no/such/thing", **auth),
        post(client, "/api/v1/studies/", "{not json", auth),
        post(client, "/api/v1/studies/", "[1, 2]", auth),
        post(client, "/api/v1/studies/", json.dumps({"slug": "bad slug!"}), auth),
    ]
    statuses = [r.status_code for r in cases]
    assert statuses == [401, 401, 404, 404, 400, 400, 400]
    for response in cases:
        error = response.json()["error"]
        assert set(error) == {"status", "code", "message", "problems"}
        assert error["status"] == response.status_code and error["message"]
    assert "slug: Enter a valid “slug”" in " ".join(cases[-1].json()["error"]["problems"])


def test_bodies_are_bounded_like_any_user_json(client, auth):
    deep = "[" * 100 + "]" * 100
    response = post(client, "/api/v1/studies/", deep, auth)
    assert response.status_code == 400 and "nested" in response.json()["error"]["message"]
    nul = json.dumps({"slug": "a", "name": "x\u0000y"})
    response = post(client, "/api/v1/studies/", nul, auth)
    assert response.status_code == 400 and "NUL" in response.json()["error"]["message"]


def test_lists_come_in_pages(client, lead, auth):
    for n in range(3):
        make_study(lead=lead, slug=f"paged-{n}", cases=1)
    first = client.get("/api/v1/studies/?page_size=2", **auth).json()
    assert first["count"] == 3 and len(first["results"]) == 2 and first["next"]
    second = client.get(first["next"], **auth).json()
    assert [s["slug"] for s in second["results"]] == ["paged-2"]
    assert client.get("/api/v1/studies/?page=9", **auth).status_code == 404


def test_too_many_requests_are_throttled_per_token(client, auth, settings):
    settings.API_THROTTLE_RATES = {"user": "3/min", "anon": "100/min", "schema": "100/min"}
    statuses = [client.get("/api/v1/studies/", **auth).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    response = client.get("/api/v1/studies/", **auth)
    assert response.json()["error"]["code"] == "throttled" and int(response["Retry-After"]) > 0


def test_the_public_schema_has_its_own_throttle_per_address(client, settings):
    """About a second of a web worker each: far fewer than other anonymous requests."""
    settings.API_THROTTLE_RATES = {"user": "100/min", "anon": "100/min", "schema": "2/min"}
    statuses = [client.get("/api/v1/openapi.json").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    refused = client.get("/api/v1/openapi.json")
    assert refused.json()["error"]["code"] == "throttled" and int(refused["Retry-After"]) > 0
    # Another address is not held up.
    assert client.get("/api/v1/openapi.json", REMOTE_ADDR="198.51.100.7").status_code == 200


@pytest.mark.parametrize("token", [None, "Bearer not-a-token"], ids=["no token", "bad token"])
def test_anonymous_refusals_are_throttled_per_address(client, settings, token):
    """Guessing tokens, or knocking without one, counts like any anonymous request."""
    settings.API_THROTTLE_RATES = {"user": "100/min", "anon": "3/min", "schema": "100/min"}
    headers = {"HTTP_AUTHORIZATION": token} if token else {}
    statuses = [client.get("/api/v1/studies/", **headers).status_code for _ in range(4)]
    assert statuses == [401, 401, 401, 429]
    refused = client.get("/api/v1/studies/", **headers)
    assert refused.json()["error"]["code"] == "throttled" and int(refused["Retry-After"]) > 0
    assert client.get("/api/v1/studies/", REMOTE_ADDR="198.51.100.7", **headers).status_code == 401


def test_an_outsider_gets_404_and_a_rater_403(client, lead):
    rater = UserFactory()
    make_study(lead=lead, slug="scoped", cases=1, raters=[rater])
    outsider = UserFactory()
    for user, status in ((outsider, 404), (rater, 403), (lead, 200)):
        _, secret = tokens.api_token_create(user=user, name="t")
        response = client.get("/api/v1/studies/scoped/", HTTP_AUTHORIZATION=f"Bearer {secret}")
        assert response.status_code == status
