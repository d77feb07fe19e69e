"""Unblinding: the study lead only, a closed study only, recorded, and then exports change."""

import pytest
from django.urls import reverse

from studies.models import Study, StudyEvent
from studies.services.unblinding import UnblindingError, study_unblind
from tests.payloads import coordinator_of

from ..factories import UserFactory, make_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def closed(study):
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    study.refresh_from_db()
    return study


def unblind_url(study):
    return reverse("studies:unblind", args=[study.slug])


def test_the_lead_unblinds_a_closed_study_and_it_is_recorded(closed, lead):
    study = study_unblind(study=closed, actor=lead, reason="Alpha computed on 2026-10-01.")
    assert study.status == Study.Status.UNBLINDED and study.unblinded_at is not None
    event = StudyEvent.objects.get(study=study, kind="unblinded")
    assert event.actor == lead and event.reason == "Alpha computed on 2026-10-01."
    assert study.is_unblinded
    with pytest.raises(UnblindingError, match="already"):
        study_unblind(study=study, actor=lead)


@pytest.mark.parametrize("status", ["draft", "pilot", "open"])
def test_only_a_closed_study_can_be_unblinded(study, lead, status):
    Study.objects.filter(pk=study.pk).update(status=status)
    with pytest.raises(UnblindingError, match="close it before"):
        study_unblind(study=study, actor=lead)
    study.refresh_from_db()
    assert study.status == status and study.unblinded_at is None


def test_no_one_but_the_lead_can_unblind(closed):
    for person in (coordinator_of(closed), UserFactory(is_staff=True)):
        with pytest.raises(UnblindingError, match="Only the study lead"):
            study_unblind(study=closed, actor=person)
    assert not StudyEvent.objects.filter(kind="unblinded").exists()


def test_confirmation_page_then_unblinding(client, closed, lead):
    client.force_login(lead)
    page = client.get(unblind_url(closed))
    assert page.status_code == 200 and "cannot be undone" in page.text
    unconfirmed = client.post(unblind_url(closed), {"reason": ""})
    assert unconfirmed.status_code == 400
    closed.refresh_from_db()
    assert closed.status == Study.Status.CLOSED
    response = client.post(unblind_url(closed), {"confirm": "on", "reason": "done"})
    assert response["Location"] == reverse("annotation:results", args=[closed.slug])
    closed.refresh_from_db()
    assert closed.status == Study.Status.UNBLINDED
    results = client.get(response["Location"])
    assert "Unblinding key (CSV)" in results.text


def test_the_page_explains_when_the_study_is_not_closed(client, study, lead):
    client.force_login(lead)
    page = client.get(unblind_url(study))
    assert "Close it first" in page.text and 'name="confirm"' not in page.text
    refused = client.post(unblind_url(study), {"confirm": "on"})
    assert refused.status_code == 400 and "close it before unblinding" in refused.text
    study.refresh_from_db()
    assert study.status == Study.Status.OPEN


def test_unblinding_permissions(client, closed, lead, rater, stranger):
    url = unblind_url(closed)
    assert client.get(url).status_code == 302
    for person, code in [
        (rater, 403),
        (coordinator_of(closed), 403),  # a coordinator, not the lead
        (UserFactory(is_staff=True), 403),  # an administrator, not the lead
        (stranger, 404),
        (coordinator_of(make_study(slug="elsewhere")), 404),
    ]:
        client.force_login(person)
        assert client.get(url).status_code == code
        assert client.post(url, {"confirm": "on"}).status_code == code
    closed.refresh_from_db()
    assert closed.status == Study.Status.CLOSED
    client.force_login(lead)
    assert client.get(url).status_code == 200


def test_results_page_offers_unblinding_to_the_lead_only(client, closed, lead):
    client.force_login(lead)
    assert (
        "Unblind the study…" in client.get(reverse("annotation:results", args=[closed.slug])).text
    )
    client.force_login(coordinator_of(closed))
    page = client.get(reverse("annotation:results", args=[closed.slug]))
    assert "Only the study lead can unblind it." in page.text
