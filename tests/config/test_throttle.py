"""Sign-in throttling: the sign-in page, the admin's and an invitation's forms."""

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.urls import reverse

from studies.models import Membership
from studies.services import invitations

from ..factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def person():
    return UserFactory(username="validator")


def sign_in(client, username, password, **extra):
    return client.post(reverse("login"), {"username": username, "password": password}, **extra)


def signed_in(client):
    return "_auth_user_id" in client.session


def test_an_account_is_throttled_after_repeated_failures(client, person, settings):
    for _ in range(settings.THROTTLE_FAILURES_PER_ACCOUNT):
        assert sign_in(client, "Validator", "wrong").status_code == 200
    # Now even the right password is refused, with a clear page and no session.
    refused = sign_in(client, "validator", PASSWORD)
    assert refused.status_code == 429
    assert "Too many attempts" in refused.text and "Nothing was changed" in refused.text
    assert int(refused["Retry-After"]) > 0
    assert not signed_in(client)
    # Another account, from the same address, is not held up.
    other = UserFactory(username="someone-else")
    assert sign_in(client, other.username, PASSWORD).status_code == 302


def test_failures_from_one_address_do_not_lock_the_account_out_elsewhere(client, person, settings):
    """Anyone who knows a username can fail on purpose: the owner, at another address, still
    signs in, and the one who failed stays refused."""
    attacker = {"REMOTE_ADDR": "203.0.113.66"}
    for _ in range(settings.THROTTLE_FAILURES_PER_ACCOUNT):
        assert sign_in(client, person.username, "wrong", **attacker).status_code == 200
    assert sign_in(client, person.username, PASSWORD, **attacker).status_code == 429
    owner = sign_in(client, person.username, PASSWORD, REMOTE_ADDR="198.51.100.10")
    assert owner.status_code == 302 and signed_in(client)


def test_an_address_is_throttled_whatever_the_usernames(client, person, settings):
    settings.THROTTLE_FAILURES_PER_ADDRESS = 5
    for number in range(5):
        assert sign_in(client, f"guess-{number}", "wrong").status_code == 200
    assert sign_in(client, person.username, PASSWORD).status_code == 429
    assert not signed_in(client)
    # Another address still signs in.
    assert sign_in(client, person.username, PASSWORD, REMOTE_ADDR="10.0.0.9").status_code == 302


def test_successful_sign_ins_do_not_count(client, person, settings):
    for _ in range(settings.THROTTLE_FAILURES_PER_ACCOUNT + 2):
        assert sign_in(client, person.username, PASSWORD).status_code == 302
        client.logout()


def test_behind_the_proxy_the_forwarded_address_counts(client, person, settings):
    settings.THROTTLE_FAILURES_PER_ADDRESS = 3
    settings.THROTTLE_PROXY_COUNT = 1

    def attempt(address, spoofed="1.2.3.4"):
        # The client may send any X-Forwarded-For; the proxy appends the address it saw.
        forwarded = {"x-forwarded-for": f"{spoofed}, {address}"}
        return client.post(
            reverse("login"), {"username": "nobody", "password": "x"}, headers=forwarded
        )

    for number in range(3):
        assert attempt("203.0.113.7", spoofed=f"10.0.0.{number}").status_code == 200
    assert attempt("203.0.113.7", spoofed="10.0.0.99").status_code == 429
    assert attempt("198.51.100.2").status_code == 200


def test_the_admin_sign_in_is_throttled(client, settings):
    UserFactory(username="boss", is_staff=True, is_superuser=True)
    url = reverse("admin:login")
    for _ in range(settings.THROTTLE_FAILURES_PER_ACCOUNT):
        assert client.post(url, {"username": "boss", "password": "wrong"}).status_code == 200
    response = client.post(url, {"username": "boss", "password": PASSWORD})
    assert response.status_code == 429
    assert not signed_in(client)


def test_the_invitation_sign_up_is_throttled_and_creates_nothing(client, study, lead, settings):
    settings.THROTTLE_FAILURES_PER_ADDRESS = 4
    invitation, token = invitations.invitation_create(study=study, created_by=lead)
    url = reverse("studies:invitation", args=[token])
    for number in range(4):
        # Probing which usernames exist: "study-lead" does, the others do not.
        name = "study-lead" if number == 0 else f"probe-{number}"
        data = {"action": "sign_up", "signup-username": name,
                "signup-password1": "x", "signup-password2": "y"}  # fmt: skip
        assert client.post(url, data).status_code == 400
    good = {"action": "sign_up", "signup-username": "newcomer",
            "signup-password1": "a-long-pass-phrase-9", "signup-password2": "a-long-pass-phrase-9"}  # fmt: skip
    refused = client.post(url, good)
    assert refused.status_code == 429 and "Too many attempts" in refused.text
    assert not get_user_model().objects.filter(username="newcomer").exists()
    invitation.refresh_from_db()
    assert invitation.used_at is None and not signed_in(client)
    # The page itself still opens, and the link works once the window has passed.
    assert client.get(url).status_code == 200
    cache.clear()
    assert client.post(url, good).status_code == 302
    assert Membership.objects.filter(user__username="newcomer", study=study).exists()


def test_the_invitation_sign_in_counts_against_the_account(client, study, lead, person, settings):
    _, token = invitations.invitation_create(study=study, created_by=lead)
    url = reverse("studies:invitation", args=[token])
    for _ in range(settings.THROTTLE_FAILURES_PER_ACCOUNT):
        data = {"action": "sign_in", "signin-username": person.username, "signin-password": "no"}
        assert client.post(url, data).status_code == 400
    # The same account on the sign-in page is throttled as well.
    assert sign_in(client, person.username, PASSWORD).status_code == 429
    assert not Membership.objects.filter(user=person).exists()


def test_sign_in_works_when_the_throttle_cache_is_down(client, person, settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
    assert sign_in(client, person.username, "wrong").status_code == 200
    assert sign_in(client, person.username, PASSWORD).status_code == 302
