"""The crowd pages say what is so: a refusal never asks to press Start, a draft's link
refuses before any account is made, a participant screened out before any case skipped
nothing, the link counts the places taken as docs/admin.md does, and the required fields
of a link are marked."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from studies.models import Participant, Study

from ..factories import make_study
from .test_participant_links import arrive, make_link, vendor_url

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def study():
    study = make_study(cases=5, raters=[], status=Study.Status.OPEN)
    Study.objects.filter(pk=study.pk).update(
        consent_text="You will rate AI responses.", consent_version=1
    )
    study.refresh_from_db()
    return study


def test_a_refusal_page_never_asks_to_press_start(study):
    link = make_link(study, max_participants="1")
    arrive(Client(), link, "PIDFULL1")
    full = arrive(Client(), link, "PIDFULL2").content.decode()
    assert 'data-reason="full"' in full
    assert "Press Start" not in full and 'id="participant-start"' not in full


def test_a_drafts_link_is_refused_before_any_account_is_made(study):
    link = make_link(study)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.DRAFT)
    accounts = get_user_model().objects.count()
    page = Client().get(vendor_url(link, "PIDDRAFT1")).content.decode()
    assert 'id="join-not-started"' in page and "Press Start" not in page
    refused = arrive(Client(), link, "PIDDRAFT1")
    assert refused.status_code == 400 and b'data-reason="not_started"' in refused.content
    assert get_user_model().objects.count() == accounts
    assert not Participant.objects.exists()


def test_screened_out_before_any_case_is_not_skipped_and_frees_the_place(client, study):
    link = make_link(study)
    participant_client = Client()
    arrive(participant_client, link, "PIDOUT1")
    participant_client.post(reverse("annotation:participant_decline", args=[study.slug]))
    arrive(Client(), link, "PIDSTAY1")
    client.force_login(study.lead)
    overview = client.get(reverse("annotation:overview", args=[study.slug])).content.decode()
    raters = overview[overview.index("<tbody>") : overview.index("</tbody>")]
    assert "skipped" not in raters
    assert "5 released when they left" in raters
    links = client.get(reverse("studies:participant_links", args=[study.slug])).content.decode()
    # One taking part, one screened out who freed the place: 1 of 10 taken, 2 joined.
    assert "1 of 10 places taken" in links and "2 joined" in links


def test_the_required_fields_of_a_link_are_marked(client, study):
    client.force_login(study.lead)
    page = client.get(reverse("studies:participant_links", args=[study.slug])).content.decode()
    label = page[page.index('for="pl-max"') : page.index("</label>", page.index('for="pl-max"'))]
    assert "(required)" in label
