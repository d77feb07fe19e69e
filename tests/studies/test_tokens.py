"""API tokens on the person's own page: created and shown once, stored hashed, revoked."""

import hashlib

import pytest
from django.urls import reverse

from studies.models import ApiToken
from studies.services import tokens

from ..factories import UserFactory


@pytest.fixture
def owner(db):
    return UserFactory(username="token-owner")


def test_a_token_is_shown_once_and_only_its_hash_is_stored(client, owner):
    client.force_login(owner)
    response = client.post(reverse("studies:tokens"), {"name": "nightly pipeline"})
    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    secret = response.context["secret"]
    assert secret.startswith("concord_") and len(secret) > 40
    token = ApiToken.objects.get(user=owner)
    assert token.secret_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in str(list(ApiToken.objects.values()))
    again = client.get(reverse("studies:tokens"))
    assert secret not in again.content.decode()
    assert "nightly pipeline" in again.content.decode() and token.prefix in again.content.decode()
    assert tokens.api_token_user(secret=secret) == owner


def test_the_owner_revokes_a_token_and_it_stops_working(client, owner):
    token, secret = tokens.api_token_create(user=owner, name="old")
    client.force_login(owner)
    response = client.post(reverse("studies:token_revoke", args=[token.uuid]))
    assert response.status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert tokens.api_token_user(secret=secret) is None


def test_nobody_else_can_revoke_a_token(client, owner):
    token, secret = tokens.api_token_create(user=owner, name="mine")
    client.force_login(UserFactory(username="someone-else"))
    client.post(reverse("studies:token_revoke", args=[token.uuid]))
    assert tokens.api_token_user(secret=secret) == owner


def test_a_token_needs_a_name_and_the_number_is_bounded(client, owner):
    client.force_login(owner)
    assert client.post(reverse("studies:tokens"), {"name": "  "}).status_code == 400
    for n in range(tokens.MAX_TOKENS_PER_USER):
        tokens.api_token_create(user=owner, name=f"t{n}")
    response = client.post(reverse("studies:tokens"), {"name": "one more"})
    assert response.status_code == 400
    assert "active tokens; revoke one" in response.content.decode()


@pytest.mark.parametrize("secret", ["", "concord_", "concord_" + "x" * 43, "x" * 200, "Bearer"])
def test_unknown_secrets_belong_to_no_one(owner, secret):
    tokens.api_token_create(user=owner, name="real")
    assert tokens.api_token_user(secret=secret) is None


def test_staff_revoke_a_leaked_token_in_the_admin_but_cannot_make_one(client, owner):
    token, secret = tokens.api_token_create(user=owner, name="leaked")
    client.force_login(UserFactory(username="staff", is_staff=True, is_superuser=True))
    changelist = reverse("admin:studies_apitoken_changelist")
    response = client.post(changelist, {"action": "revoke", "_selected_action": [token.pk]})
    assert response.status_code == 302
    assert tokens.api_token_user(secret=secret) is None
    assert client.get(reverse("admin:studies_apitoken_add")).status_code == 403
