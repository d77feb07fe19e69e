"""The Python client (clients/python, installed in the venv by `make test`'s dev install:
`pip install -e ./clients/python`) against a live server."""

import concord_client
import pytest
from django.contrib.auth.models import Group

from studies.access import COORDINATORS_GROUP
from studies.services import tokens
from tests.factories import UserFactory

# Short waits, so a retried request costs the suite milliseconds, not seconds.
FAST_RETRIES = concord_client.RetryPolicy(attempts=3, backoff=0.01, max_wait=0.05)


@pytest.fixture(autouse=True)
def _api_unthrottled(settings):
    settings.API_THROTTLE_RATES = {
        "user": "100000/min",
        "anon": "100000/min",
        "schema": "100000/min",
    }


@pytest.fixture
def lead_user(transactional_db):
    user = UserFactory(username="client-lead")
    group, _ = Group.objects.get_or_create(name=COORDINATORS_GROUP)
    user.groups.add(group)
    return user


@pytest.fixture
def concord_as(live_server):
    """A client for ``user``, with a token of theirs, against the live server."""
    made = []

    def make(user, **kwargs):
        _, secret = tokens.api_token_create(user=user, name="client tests")
        kwargs.setdefault("retry", FAST_RETRIES)
        kwargs.setdefault("job_poll", 0.05)
        client = concord_client.Concord(live_server.url, secret, **kwargs)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()
