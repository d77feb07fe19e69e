"""How each rater came in, shown to administrators, and studies that take raters only by
an invitation bound to a person (issue 38: the lead enrols a rater they control).

No software can tell that two accounts are one person; what Concord can do is refuse the
link anyone could use, record which way each person came in and who made it, and show it
to administrators. These tests hold that.
"""

import re

import pytest
from django.core import mail
from django.urls import reverse

from studies.models import Membership
from studies.services import invitations
from studies.services.participants import participant_join, participant_link_save
from tests.factories import UserFactory, make_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(lead):
    return make_study(lead=lead, slug="joined", cases=2)


def _accept(client, token, username):
    response = client.post(
        reverse("studies:invitation", args=[token]),
        {"action": "sign_up", "signup-username": username, "signup-password1": "a long Pass 42",
         "signup-password2": "a long Pass 42"},
    )  # fmt: skip
    assert response.status_code == 302, response.content.decode()[:2000]
    return Membership.objects.get(study__slug="joined", user__username=username)


def test_an_open_link_is_recorded_as_such_with_who_made_it_and_administrators_see_it(
    client, study, lead
):
    invitation, token = invitations.invitation_create(study=study, created_by=lead)
    joined = _accept(client, token, "newcomer")
    assert joined.joined_via == Membership.JoinedVia.OPEN_LINK
    assert (joined.joined_by, joined.invitation) == (lead, invitation)
    admin = UserFactory(is_staff=True, is_superuser=True)
    client.force_login(admin)
    page = client.get(reverse("agreement:qc", args=[study.slug])).text
    assert "Open invitation link (anyone who had it)" in page and lead.username in page
    # A coordinator reads the QC page without how people came in (it names accounts).
    client.force_login(lead)
    page = client.get(reverse("agreement:qc", args=[study.slug])).text
    assert "Open invitation link" not in page


def test_an_e_mailed_invitation_reaches_only_the_address_and_is_recorded(
    client, study, lead, django_capture_on_commit_callbacks
):
    client.force_login(lead)
    with django_capture_on_commit_callbacks(execute=True):
        made = client.post(
            reverse("annotation:invitation_create", args=[study.slug]),
            {"email": "ines@example.org", "days": 14, "note": "Ines"},
        )
    assert made.status_code == 302
    (sent,) = mail.outbox
    assert sent.to == ["ines@example.org"]
    token = re.search(r"/invite/([\w-]+)/", sent.body)[1]
    # The coordinator was never shown the link.
    page = client.get(made["Location"]).text
    assert token not in page and "e-mailed" in page
    client.logout()
    joined = _accept(client, token, "ines")
    assert joined.joined_via == Membership.JoinedVia.EMAIL and joined.joined_by == lead
    assert joined.user.email == "ines@example.org"


def test_a_study_that_requires_bound_invitations_refuses_open_links_old_and_new(
    client, study, lead, django_capture_on_commit_callbacks
):
    _, old_token = invitations.invitation_create(study=study, created_by=lead)
    client.force_login(lead)
    changed = client.post(
        reverse("studies:edit", args=[study.slug]),
        {**_settings(study), "bound_invitations_only": "on"},
    )
    assert changed.status_code == 302, changed.content.decode()[:3000]
    study.refresh_from_db()
    assert study.bound_invitations_only
    refused = client.post(reverse("annotation:invitation_create", args=[study.slug]), {"days": 14})
    assert refused.status_code == 400 and "not by an open link" in refused.text
    # A link made before the setting admits no one now.
    client.logout()
    page = client.post(
        reverse("studies:invitation", args=[old_token]),
        {"action": "sign_up", "signup-username": "late", "signup-password1": "a long Pass 42",
         "signup-password2": "a long Pass 42"},
    )  # fmt: skip
    assert "not by an open link" in page.content.decode()
    assert not Membership.objects.filter(study=study, user__username="late").exists()
    # Bound invitations still work: an e-mailed one, and a vendor's participant.
    with django_capture_on_commit_callbacks(execute=True):
        invitations.invitation_email_create(
            study=study, created_by=lead, email="ok@example.org", site="http://testserver"
        )
    token = re.search(r"/invite/([\w-]+)/", mail.outbox[-1].body)[1]
    assert _accept(client, token, "bound").joined_via == Membership.JoinedVia.EMAIL
    link = participant_link_save(
        study=study, actor=lead,
        values={"name": "crowd", "completion_code": "DONE", "max_participants": "5"},
    )  # fmt: skip
    joined = participant_join(link=link, params={"PROLIFIC_PID": "P1", "SESSION_ID": "S1"})
    membership = joined.participant.membership
    assert membership.joined_via == Membership.JoinedVia.PARTICIPANT_LINK
    assert membership.joined_by == lead


def _settings(study) -> dict:
    from studies.forms import StudyForm

    form = StudyForm(instance=study)
    values = {}
    for name, field in form.fields.items():
        value = form.initial.get(name, field.initial)
        if isinstance(value, bool):
            if value:
                values[name] = "on"
        elif value is not None:
            values[name] = value
    return values
