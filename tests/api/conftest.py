import json

import pytest
from django.contrib.auth.models import Group

from studies.access import COORDINATORS_GROUP
from studies.services import tokens
from tests.factories import UserFactory


class Api:
    """A script's view of the API: one token, JSON in and out."""

    def __init__(self, client, secret):
        self.client, self.secret = client, secret

    def __call__(self, method, path, body=None, **extra):
        url = path if path.startswith("/") else f"/api/v1/{path}"
        headers = {"HTTP_AUTHORIZATION": f"Bearer {self.secret}", **extra}
        if method == "GET":
            return self.client.get(url, **headers)
        if "files" in extra:
            return self.client.post(url, extra.pop("files"), **headers)
        data = json.dumps(body if body is not None else {})
        return self.client.generic(method, url, data, "application/json", **headers)


@pytest.fixture(autouse=True)
def _api_unthrottled(settings):
    settings.API_THROTTLE_RATES = {
        "user": "100000/min",
        "anon": "100000/min",
        "schema": "100000/min",
    }


@pytest.fixture
def lead_user(db):
    user = UserFactory(username="api-lead")
    group, _ = Group.objects.get_or_create(name=COORDINATORS_GROUP)
    user.groups.add(group)
    return user


@pytest.fixture
def api_as(client):
    def make(user):
        _, secret = tokens.api_token_create(user=user, name="tests")
        return Api(client, secret)

    return make
