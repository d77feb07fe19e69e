"""Inviting an existing account: nobody is enrolled without accepting, and the coordinator
learns nothing about which usernames exist."""

import re

import pytest
from django.urls import reverse

from studies import selectors
from studies.models import Invitation, Membership, Study, StudyEvent
from studies.services import invitations

from ..factories import UserFactory, make_study

pytestmark = pytest.mark.django_db


def _add(client, study, username):
    return client.post(reverse("annotation:rater_add", args=[study.slug]), {"username": username})


def _respond(client, invitation, action):
    url = reverse("studies:invitation_respond", args=[invitation.token_hash])
    return client.post(url, {"action": action})


def test_naming_an_account_invites_it_but_enrols_no_one(study, lead):
    person = UserFactory(username="Validator.One")
    invitations.rater_invite_account(study=study, username="validator.one", actor=lead)
    assert not Membership.objects.filter(study=study, user=person).exists()
    invitation = Invitation.objects.get(study=study)
    assert invitation.invitee == person and invitation.role == Membership.Role.RATER
    assert selectors.invitations_for_user(user=person) == [invitation]


@pytest.mark.parametrize(
    "username", ["admin-person", "rater-elsewhere", "rater-owner", "study-lead", "nobody-here"]
)
def test_the_coordinator_is_answered_the_same_whatever_the_name(client, study, lead, username):
    """An admin, another study's rater, a rater of this study, the lead, no account at all."""
    UserFactory(username="admin-person", is_staff=True, is_superuser=True)
    make_study(slug="elsewhere", raters=[UserFactory(username="rater-elsewhere")])
    client.force_login(lead)
    seen = []
    for name in ("no-such-account-at-all", username):
        response = _add(client, study, name)
        assert response.status_code == 302
        page = client.get(response["Location"]).text
        seen.append((response["Location"], _message(page), _row(page, name)))
    assert seen[0] == seen[1]
    assert "If an account with that name exists" in seen[0][1]
    # The same trace either way: one invitation and one event per name, no one enrolled.
    assert Invitation.objects.filter(study=study).count() == 2
    assert StudyEvent.objects.filter(study=study, kind="invitation_created").count() == 2
    assert study.memberships.count() == 2


def _message(page: str) -> str:
    return page.split('role="status">')[1].split("</div>")[0]


def _row(page: str, name: str) -> str:
    """The invitation table's row for ``name``, without what differs for every row."""
    table = page.split('id="invitation-table"')[1].split("</table>")[0]
    (row,) = [r.split("</tr>")[0] for r in table.split("<tr>") if f"“{name}”" in r]
    row = row.replace(name, "NAME")
    row = re.sub(r"[0-9a-f]{64}", "HASH", row)
    row = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "CSRF", row)
    return re.sub(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", "DATE", row)


def test_the_invited_person_sees_the_invitation_and_accepting_joins_with_a_pseudonym(
    client, study, lead
):
    person = UserFactory(username="helper")
    invitations.rater_invite_account(study=study, username="helper", actor=lead)
    invitation = Invitation.objects.get(study=study)
    client.force_login(person)
    home = client.get(reverse("home")).text
    assert 'id="personal-invitations"' in home and study.name in home
    response = _respond(client, invitation, "accept")
    assert response.status_code == 302
    assert response["Location"] == reverse("annotation:assignments", args=[study.slug])
    membership = Membership.objects.get(study=study, user=person)
    assert (membership.role, membership.pseudonym) == ("rater", "R-03")
    invitation.refresh_from_db()
    assert invitation.used_by == person
    assert StudyEvent.objects.filter(kind="invitation_used", membership=membership).exists()
    assert 'id="personal-invitations"' not in client.get(reverse("home")).text
    # Accepting twice adds nothing.
    again = _respond(client, invitation, "accept")
    assert again.status_code == 302 and study.memberships.count() == 3


def test_declining_does_nothing_but_close_the_invitation(client, study, lead):
    person = UserFactory(username="helper")
    invitations.rater_invite_account(study=study, username="helper", actor=lead)
    invitation = Invitation.objects.get(study=study)
    client.force_login(person)
    assert _respond(client, invitation, "decline").status_code == 302
    assert not Membership.objects.filter(study=study, user=person).exists()
    assert 'id="personal-invitations"' not in client.get(reverse("home")).text
    assert _respond(client, invitation, "accept").status_code == 302
    assert not Membership.objects.filter(study=study, user=person).exists()
    invitation.refresh_from_db()
    assert invitation.used_at is None and invitation.declined_at is not None


def test_only_the_invited_person_can_answer(client, study, lead, rater, stranger):
    UserFactory(username="helper")
    invitations.rater_invite_account(study=study, username="helper", actor=lead)
    invitation = Invitation.objects.get(study=study)
    for someone in (stranger, lead, UserFactory(is_staff=True, is_superuser=True)):
        client.force_login(someone)
        assert _respond(client, invitation, "accept").status_code == 404
        assert _respond(client, invitation, "decline").status_code == 404
    invitation.refresh_from_db()
    assert invitation.used_at is None and invitation.declined_at is None
    assert study.memberships.count() == 2


def test_a_name_with_no_account_makes_an_invitation_no_one_can_accept(client, study, lead):
    invitations.rater_invite_account(study=study, username="later-person", actor=lead)
    invitation = Invitation.objects.get(study=study)
    assert invitation.invitee is None
    latecomer = UserFactory(username="later-person")  # signs up afterwards
    assert selectors.invitations_for_user(user=latecomer) == []
    client.force_login(latecomer)
    assert _respond(client, invitation, "accept").status_code == 404


def test_a_personal_invitation_is_not_a_link(study, lead):
    UserFactory(username="helper")
    invitations.rater_invite_account(study=study, username="helper", actor=lead)
    invitation = Invitation.objects.get(study=study)
    # Whatever the token was, it was thrown away; the hash itself is not a token either.
    assert selectors.invitation_find(token=invitation.token_hash) is None
    with pytest.raises(invitations.InvitationError):
        invitations.invitation_accept(token=invitation.token_hash, user=UserFactory())


def test_inviting_the_same_name_twice_makes_one_invitation(study, lead):
    UserFactory(username="helper")
    for name in ("helper", "HELPER", "ghost", "ghost"):
        invitations.rater_invite_account(study=study, username=name, actor=lead)
    assert Invitation.objects.filter(study=study).count() == 2


def test_a_closed_study_invites_no_one(study, lead):
    UserFactory(username="helper")
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    study.refresh_from_db()
    with pytest.raises(invitations.InvitationError, match="closed"):
        invitations.rater_invite_account(study=study, username="helper", actor=lead)
    assert not Invitation.objects.exists()
