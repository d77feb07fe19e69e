"""Raters' accounts and invitations over the API: an administrator makes an account for a
study, the person sets their own password with the one-time link e-mailed to them (never
shown to the administrator); anyone with a link joins with their own token."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.urls import reverse

from studies.models import Membership, Study, StudyEvent
from tests.factories import UserFactory, make_study
from tests.payloads import SYSTEMS


@pytest.fixture
def admin(db):
    return UserFactory(username="api-admin", is_staff=True, is_superuser=True)


@pytest.fixture
def study(lead_user):
    return make_study(lead=lead_user, slug="people", cases=2, status="open", systems=SYSTEMS)


def test_an_administrator_makes_a_raters_account_who_sets_their_own_password(
    client, study, admin, api_as, django_capture_on_commit_callbacks
):
    api = api_as(admin)
    body = {"study": "people", "username": "ana", "email": "a@b.org"}
    with django_capture_on_commit_callbacks(execute=True):
        made = api("POST", "accounts/", body)
    assert made.status_code == 201, made.content
    body = made.json()
    assert body == {"study": "people", "username": "ana", "pseudonym": "R-01", "email": "a@b.org"}
    # The link is not in the answer (issue 38: the administrator would sign in as the
    # rater): it went to the person's address, and only there.
    assert "/accounts/password/reset/" not in made.content.decode()
    (sent,) = mail.outbox
    assert sent.to == ["a@b.org"] and "ana" in sent.body
    ana = get_user_model().objects.get(username="ana")
    # No password was hashed: the account has none until the person chooses one.
    assert not ana.has_usable_password() and ana.email == "a@b.org"
    membership = Membership.objects.get(study=study, user=ana)
    assert membership.role == Membership.Role.RATER and membership.pseudonym == "R-01"
    event = study.events.get(kind=StudyEvent.Kind.RATER_ACCOUNT_CREATED)
    # The history names the pseudonym and the administrator, never the account's name.
    assert event.membership == membership and event.actor == admin
    assert "ana" not in str(event.detail) and "a@b.org" not in str(event.detail)

    # The link: Django's own set-password page, once.
    link = re.search(r"http://testserver(/accounts/password/reset/\S+)", sent.body)[1]
    form = client.get(link, follow=True)
    assert form.status_code == 200 and form.context["validlink"]
    new = {"new_password1": "a long Passphrase 42", "new_password2": "a long Passphrase 42"}
    assert client.post(form.redirect_chain[-1][0], new).status_code == 302
    assert client.login(username="ana", password="a long Passphrase 42")
    client.logout()
    again = client.get(link, follow=True)
    assert not again.context["validlink"]


@pytest.mark.parametrize(
    "body, problem",
    [
        ({"study": "people", "username": "API-Lead", "email": "b@c.org"}, "exists already"),
        ({"study": "people", "username": "has space", "email": "b@c.org"}, "a valid username"),
        ({"study": "people", "username": "x" * 151, "email": "b@c.org"}, "at most 150"),
        ({"study": "people", "username": "bo", "email": "not-mail"}, "not an email"),
        ({"study": "people"}, "username: give a text."),
        ({"study": "people", "username": "bo"}, "email: give a text."),
        ({"study": "people", "username": 7}, "username: give a text."),
        (
            {"study": "people", "username": "bo", "emial": "bo@example.org"},
            "emial: not a field of an account; use study, username, email.",
        ),
    ],
)
def test_a_bad_account_is_refused_and_nothing_is_made(study, admin, api_as, body, problem):
    before = get_user_model().objects.count()
    refused = api_as(admin)("POST", "accounts/", body)
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert problem in error["message"] + " ".join(error["problems"])
    assert get_user_model().objects.count() == before
    assert not study.memberships.filter(role=Membership.Role.RATER).exists()


def test_only_administrators_make_accounts_and_a_closed_study_takes_no_one(
    study, admin, lead_user, api_as
):
    refused = api_as(lead_user)(
        "POST", "accounts/", {"study": "people", "username": "bo", "email": "bo@example.org"}
    )
    assert refused.status_code == 403
    missing = api_as(admin)(
        "POST", "accounts/", {"study": "nowhere", "username": "bo", "email": "bo@example.org"}
    )
    assert missing.status_code == 404
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    closed = api_as(admin)(
        "POST", "accounts/", {"study": "people", "username": "bo", "email": "bo@example.org"}
    )
    assert closed.status_code == 400 and "closed" in closed.json()["error"]["message"]
    # All or nothing: the account was not made without its membership.
    assert not get_user_model().objects.filter(username="bo").exists()


def test_an_invitation_link_is_accepted_with_ones_own_token(study, lead_user, admin, api_as):
    link = api_as(lead_user)("POST", "studies/people/invitations/").json()["link"]
    token = link.rstrip("/").rsplit("/", 1)[1]
    person = UserFactory(username="joiner")
    joiner = api_as(person)
    joined = joiner("POST", f"invitations/{token}/accept/")
    assert joined.status_code == 200, joined.content
    body = joined.json()
    assert body["study"] == "people" and body["role"] == "rater" and body["pseudonym"] == "R-01"
    assert body["onboarding"].endswith(reverse("api:onboarding", args=["people"]))
    assert study.events.filter(kind=StudyEvent.Kind.INVITATION_USED).count() == 1
    # Sent again by the same person (a retry): the same answer, nothing new.
    assert joiner("POST", f"invitations/{token}/accept/").json() == body
    assert study.events.filter(kind=StudyEvent.Kind.INVITATION_USED).count() == 1
    # Anyone else: the link is used.
    other = api_as(UserFactory(username="late"))("POST", f"invitations/{token}/accept/")
    assert other.status_code == 400 and "already been used" in other.json()["error"]["message"]
    # A token that names no invitation: 404, as the link's page.
    unknown = joiner("POST", "invitations/no-such-token/accept/")
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "not_found"


def test_an_administrator_cannot_join_as_a_rater_by_a_link(study, lead_user, admin, api_as):
    link = api_as(lead_user)("POST", "studies/people/invitations/").json()["link"]
    token = link.rstrip("/").rsplit("/", 1)[1]
    refused = api_as(admin)("POST", f"invitations/{token}/accept/")
    assert refused.status_code == 400 and "administrator" in refused.json()["error"]["message"]
    assert not study.memberships.filter(user=admin).exists()


def test_an_invitation_with_a_field_it_does_not_have_is_refused_and_none_is_made(
    study, lead_user, api_as
):
    """A misspelt "days" would give the link the default fourteen days, unseen."""
    refused = api_as(lead_user)("POST", "studies/people/invitations/", {"expires_in_days": 3})
    assert refused.status_code == 400
    assert refused.json()["error"]["problems"] == [
        "expires_in_days: not a field of an invitation; use note, days, role, email."
    ]
    assert not study.invitations.exists()
    made = api_as(lead_user)("POST", "studies/people/invitations/", {"days": 3})
    assert made.status_code == 201
    (invitation,) = study.invitations.all()
    assert (invitation.expires_at - invitation.created_at).days in (2, 3)
