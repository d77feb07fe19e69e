"""Invitations and adding raters: single use, expiry, the link's page and the raters page."""

import hashlib
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone

from studies.models import Invitation, Membership, Study, StudyEvent
from studies.services import invitations
from tests.payloads import coordinator_of

from ..factories import PASSWORD, UserFactory, make_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def invite(study, lead):
    """(invitation, token) for a rater."""
    return invitations.invitation_create(study=study, created_by=lead, note="for Dr. Example")


def link(token):
    return reverse("studies:invitation", args=[token])


# The service -----------------------------------------------------------------------------


def test_only_the_hash_of_the_token_is_stored(invite):
    invitation, token = invite
    assert len(token) >= 40
    assert invitation.token_hash == hashlib.sha256(token.encode()).hexdigest()
    stored = Invitation.objects.filter(pk=invitation.pk).values().get()
    assert token not in str(stored)
    assert timedelta(days=13) < invitation.expires_at - timezone.now() <= timedelta(days=14)


def test_using_the_link_adds_a_rater_with_a_pseudonym_once(study, invite):
    invitation, token = invite
    newcomer = UserFactory()
    membership = invitations.invitation_accept(token=token, user=newcomer)
    assert (membership.role, membership.pseudonym) == ("rater", "R-03")
    invitation.refresh_from_db()
    assert invitation.used_by == newcomer and invitation.used_at is not None
    assert StudyEvent.objects.filter(kind="invitation_used", membership=membership).exists()
    with pytest.raises(invitations.InvitationError) as caught:
        invitations.invitation_accept(token=token, user=UserFactory())
    assert caught.value.reason == "used"
    assert study.memberships.count() == 3


def test_an_expired_link_adds_no_one(study, invite):
    invitation, token = invite
    Invitation.objects.filter(pk=invitation.pk).update(expires_at=timezone.now())
    with pytest.raises(invitations.InvitationError) as caught:
        invitations.invitation_accept(token=token, user=UserFactory())
    assert caught.value.reason == "expired"
    assert study.memberships.count() == 2


def test_a_revoked_or_made_up_link_is_invalid(study, lead, invite):
    invitation, token = invite
    invitations.invitation_revoke(invitation=invitation, actor=lead)
    for attempt in (token, "made-up-token"):
        with pytest.raises(invitations.InvitationError) as caught:
            invitations.invitation_accept(token=attempt, user=UserFactory())
        assert caught.value.reason == "invalid"
    assert StudyEvent.objects.filter(kind="invitation_revoked").exists()


def test_members_and_closed_studies_do_not_use_up_the_link(study, lead, rater, invite):
    invitation, token = invite
    for person in (rater, lead):
        with pytest.raises(invitations.InvitationError, match="already part"):
            invitations.invitation_accept(token=token, user=person)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    with pytest.raises(invitations.InvitationError, match="closed"):
        invitations.invitation_accept(token=token, user=UserFactory())
    invitation.refresh_from_db()
    assert invitation.used_at is None


def test_links_are_valid_for_a_bounded_time(study, lead):
    with pytest.raises(invitations.InvitationError):
        invitations.invitation_create(study=study, created_by=lead, days=0)
    with pytest.raises(invitations.InvitationError):
        invitations.invitation_create(study=study, created_by=lead, days=invitations.MAX_DAYS + 1)


# The link's page -------------------------------------------------------------------------


def test_signed_in_person_joins_with_one_click(client, study, invite):
    _, token = invite
    newcomer = UserFactory()
    client.force_login(newcomer)
    page = client.get(link(token))
    assert page.status_code == 200 and f"Join as {newcomer.username}" in page.text
    assert not Membership.objects.filter(user=newcomer).exists()  # opening it uses nothing
    response = client.post(link(token), {"action": "join"})
    assert response["Location"] == reverse("annotation:assignments", args=[study.slug])
    assert Membership.objects.get(user=newcomer, study=study).pseudonym == "R-03"
    again = client.get(link(token))
    assert again.status_code == 410 and "already been used" in again.text


def test_a_new_person_signs_up_and_joins(client, study, invite):
    _, token = invite
    page = client.get(link(token))
    assert page.status_code == 200 and "Create an account" in page.text
    assert 'id="id_signin-username"' in page.text and 'id="id_signup-username"' in page.text
    refused = client.post(link(token), {"action": "sign_up", "signup-username": "val",
                                        "signup-password1": "x", "signup-password2": "y"})  # fmt: skip
    assert refused.status_code == 400
    assert not get_user_model().objects.filter(username="val").exists()
    response = client.post(
        link(token),
        {"action": "sign_up", "signup-username": "validator-7",
         "signup-password1": "a-long-pass-phrase-9", "signup-password2": "a-long-pass-phrase-9"},
    )  # fmt: skip
    assert response.status_code == 302
    user = get_user_model().objects.get(username="validator-7")
    assert Membership.objects.get(user=user, study=study).role == "rater"
    assert client.get(reverse("studies:invitation", args=[token])).status_code == 410
    assert int(client.session["_auth_user_id"]) == user.pk


def test_an_existing_account_signs_in_and_joins(client, study, invite):
    _, token = invite
    person = UserFactory()
    wrong = client.post(link(token), {"action": "sign_in", "signin-username": person.username,
                                      "signin-password": "wrong"})  # fmt: skip
    assert wrong.status_code == 400 and not Membership.objects.filter(user=person).exists()
    response = client.post(link(token), {"action": "sign_in", "signin-username": person.username,
                                         "signin-password": PASSWORD})  # fmt: skip
    assert response.status_code == 302
    assert Membership.objects.filter(user=person, study=study, role="rater").exists()


def test_dead_links_have_a_clear_page(client, study, invite):
    invitation, token = invite
    missing = client.get(link("not-a-real-token"))
    assert missing.status_code == 404 and "not valid" in missing.text
    Invitation.objects.filter(pk=invitation.pk).update(expires_at=timezone.now())
    expired = client.get(link(token))
    assert expired.status_code == 410 and "expired" in expired.text
    assert client.post(link(token), {"action": "join"}).status_code == 410
    # The page of a dead link names no study.
    assert study.name not in expired.text


def test_a_member_opening_a_link_keeps_it_unused(client, study, rater, invite):
    invitation, token = invite
    client.force_login(rater)
    response = client.post(link(token), {"action": "join"})
    assert response["Location"] == reverse("home")
    invitation.refresh_from_db()
    assert invitation.used_at is None


# The raters page -------------------------------------------------------------------------


def test_raters_page_shows_pseudonyms_progress_and_invitations(client, study, lead, rater, invite):
    client.force_login(lead)
    response = client.get(reverse("annotation:raters", args=[study.slug]))
    assert response.status_code == 200
    assert "R-01" in response.text and "R-02" in response.text and "0 / 4" in response.text
    assert rater.username not in response.text
    invitation, token = invite
    assert "for Dr. Example" in response.text and token not in response.text
    assert "Every rater rates every test case" in response.text


def test_creating_a_link_shows_it_once(client, study, lead):
    client.force_login(lead)
    response = client.post(
        reverse("annotation:invitation_create", args=[study.slug]),
        {"note": "for validator 3", "days": "7", "role": "rater"},
    )
    assert response.status_code == 200
    invitation = Invitation.objects.get(study=study)
    shown = response.text.split('id="invitation-link" type="text" value="')[1].split('"')[0]
    token = shown.rstrip("/").rsplit("/", 1)[1]
    assert invitation.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert shown.startswith("http://testserver/invite/")
    listing = client.get(reverse("annotation:raters", args=[study.slug]))
    assert token not in listing.text


def test_only_the_lead_invites_coordinators(client, study, lead):
    coordinator = coordinator_of(study)
    client.force_login(coordinator)
    page = client.get(reverse("annotation:raters", args=[study.slug]))
    assert 'name="role"' not in page.text
    client.post(
        reverse("annotation:invitation_create", args=[study.slug]),
        {"note": "", "days": "7", "role": "coordinator"},
    )
    assert Invitation.objects.get().role == "rater"
    client.force_login(lead)
    client.post(
        reverse("annotation:invitation_create", args=[study.slug]),
        {"note": "", "days": "7", "role": "coordinator"},
    )
    assert Invitation.objects.filter(role="coordinator").count() == 1


def test_revoking_from_the_page(client, study, lead, invite):
    invitation, token = invite
    client.force_login(lead)
    url = reverse("studies:invitation_revoke", args=[study.slug, invitation.token_hash])
    assert client.post(url).status_code == 302
    assert not Invitation.objects.exists()
    assert client.post(url).status_code == 404
    _, used_token = invitations.invitation_create(study=study, created_by=lead)
    invitations.invitation_accept(token=used_token, user=UserFactory())
    used = Invitation.objects.get()
    client.post(reverse("studies:invitation_revoke", args=[study.slug, used.token_hash]))
    assert Invitation.objects.filter(pk=used.pk).exists()


def test_invitation_of_another_study_cannot_be_revoked(client, study, lead, invite):
    invitation, _ = invite
    other = make_study(slug="elsewhere")
    client.force_login(other.lead)
    url = reverse("studies:invitation_revoke", args=[other.slug, invitation.token_hash])
    assert client.post(url).status_code == 404
    assert Invitation.objects.filter(pk=invitation.pk).exists()


@pytest.mark.parametrize(
    ("name", "method", "data"),
    [
        ("annotation:raters", "get", None),
        ("annotation:invitation_create", "post", {"note": "", "days": "7"}),
        ("annotation:rater_add", "post", {"username": "stranger"}),
        ("annotation:assign", "post", {}),
    ],
)
def test_people_pages_permissions(client, study, lead, rater, stranger, name, method, data):
    url = reverse(name, args=[study.slug])
    send = getattr(client, method)
    response = send(url, data or {})
    assert response.status_code == 302 and reverse("login") in response["Location"]
    client.force_login(rater)
    assert send(url, data or {}).status_code == 403
    client.force_login(stranger)
    assert send(url, data or {}).status_code == 404
    client.force_login(coordinator_of(make_study(slug="elsewhere")))
    assert send(url, data or {}).status_code == 404
    assert not Invitation.objects.filter(study=study).exists()
    assert study.memberships.count() == 2
    client.force_login(lead)
    assert send(url, data or {}).status_code in (200, 302)
    if method == "post" and name != "annotation:invitation_create":
        assert send(url, data or {}).status_code in (302, 400)
