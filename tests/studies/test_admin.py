"""The admin: a frozen protocol cannot be edited there, and every change is in the audit trail."""

import pytest
from django.urls import reverse

from studies.admin import PROTOCOL_FIELDS
from studies.models import Membership, Study, StudyEvent
from studies.signals import analysis_inputs_changed

from ..factories import UserFactory, make_study


@pytest.fixture
def staff(client, db):
    admin = UserFactory(username="site-admin", is_staff=True, is_superuser=True)
    client.force_login(admin)
    return admin


def study_post(study, **changes):
    data = {
        "slug": study.slug, "name": study.name, "description": study.description,
        "instructions": study.instructions, "consent_text": study.consent_text,
        "consent_version": study.consent_version,
        "disclosure_question": study.disclosure_question,
        "raters_per_item": study.raters_per_item or "", "side_mode": study.side_mode, "case_layout": study.case_layout,
        "success_alpha": study.success_alpha,
        "success_min_dimensions": study.success_min_dimensions, "_save": "Save",
    }  # fmt: skip
    data.update(changes)
    return data


def change_url(study):
    return reverse("admin:studies_study_change", args=[study.pk])


def admin_events(study):
    return list(study.events.filter(kind=StudyEvent.Kind.ADMIN_CHANGED).order_by("pk"))


def test_a_frozen_studys_protocol_is_read_only_in_the_admin(client, staff, lead):
    study = make_study(lead=lead, slug="frozen", cases=1, status=Study.Status.OPEN)
    page = client.get(change_url(study)).text
    for field in PROTOCOL_FIELDS:
        assert f'name="{field}"' not in page
    assert 'name="name"' in page
    response = client.post(
        change_url(study),
        study_post(study, name="Renamed", instructions="Sneaky", success_alpha="0.100",
                   raters_per_item=2, side_mode="balanced", consent_text="New",
                   consent_version=9, disclosure_question="?", success_min_dimensions=1),
    )  # fmt: skip
    assert response.status_code == 302
    study.refresh_from_db()
    assert study.name == "Renamed"
    assert (study.instructions, str(study.success_alpha), study.raters_per_item) == (
        "", "0.700", None
    )  # fmt: skip
    assert (study.side_mode, study.consent_text, study.consent_version) == ("fixed", "", 1)
    assert study.success_min_dimensions == 3 and study.disclosure_question != "?"
    [event] = admin_events(study)
    assert (event.actor, event.detail["fields"]) == (staff, ["name"])


def test_a_draft_studys_protocol_can_be_edited_and_the_change_is_recorded(client, staff, lead):
    study = make_study(lead=lead, slug="draft", cases=1, status=Study.Status.DRAFT)
    heard = []

    def receiver(sender, study_id, reason, **kwargs):
        heard.append((study_id, reason))

    analysis_inputs_changed.connect(receiver, weak=False)
    try:
        response = client.post(
            change_url(study), study_post(study, instructions="Careful", success_alpha="0.800")
        )
    finally:
        analysis_inputs_changed.disconnect(receiver)
    assert response.status_code == 302
    study.refresh_from_db()
    assert (study.instructions, str(study.success_alpha)) == ("Careful", "0.800")
    [event] = admin_events(study)
    assert event.actor == staff
    assert event.detail["fields"] == ["instructions", "success_alpha"]
    assert heard == [(study.pk, "success_criterion")]
    settings_page = reverse("studies:edit", args=[study.slug])
    client.force_login(lead)
    assert "Changed in the admin: study changed (instructions, success alpha)" in (
        client.get(settings_page).text
    )


def test_saving_without_a_change_records_nothing(client, staff, lead):
    study = make_study(lead=lead, slug="same", cases=1, status=Study.Status.DRAFT)
    assert client.post(change_url(study), study_post(study)).status_code == 302
    assert admin_events(study) == []


def test_a_membership_change_in_the_admin_is_recorded(client, staff, lead, rater):
    study = make_study(lead=lead, slug="people", cases=1, raters=[rater])
    membership = Membership.objects.get(study=study, user=rater)
    url = reverse("admin:studies_membership_change", args=[membership.pk])
    response = client.post(
        url,
        {"study": study.pk, "user": rater.pk, "role": "rater", "status": "excluded",
         "pseudonym": membership.pseudonym, "_save": "Save"},
    )  # fmt: skip
    assert response.status_code == 302
    membership.refresh_from_db()
    assert membership.status == Membership.Status.EXCLUDED
    [event] = admin_events(study)
    assert (event.actor, event.membership, event.detail["fields"]) == (
        staff, membership, ["status"]
    )  # fmt: skip


def test_deleting_a_membership_in_the_admin_is_recorded(client, staff, lead, rater):
    study = make_study(lead=lead, slug="gone", cases=1, raters=[rater])
    membership = Membership.objects.get(study=study, user=rater)
    url = reverse("admin:studies_membership_delete", args=[membership.pk])
    assert client.post(url, {"post": "yes"}).status_code == 302
    assert not Membership.objects.filter(pk=membership.pk).exists()
    [event] = admin_events(study)
    assert (event.actor, event.detail["action"], event.detail["pseudonym"]) == (
        staff, "deleted", "R-01"
    )  # fmt: skip


def test_raters_and_coordinators_cannot_reach_the_admin(client, lead, rater):
    study = make_study(lead=lead, slug="closed-door", cases=1, raters=[rater])
    client.force_login(lead)
    response = client.post(change_url(study), study_post(study, name="Mine now"))
    assert response.status_code == 302 and "/admin/login/" in response.url
    study.refresh_from_db()
    assert study.name != "Mine now" and admin_events(study) == []


def test_a_consent_change_in_the_admin_asks_raters_to_consent_again(client, staff, lead):
    study = make_study(lead=lead, slug="consent", cases=1, status=Study.Status.DRAFT)
    data = study_post(study, consent_text="New information sheet.")
    data.pop("consent_version")  # the service's to bump, read-only here
    assert client.post(change_url(study), data).status_code == 302
    study.refresh_from_db()
    assert (study.consent_text, study.consent_version) == ("New information sheet.", 2)
    settings_event = study.events.get(kind=StudyEvent.Kind.SETTINGS_CHANGED)
    assert settings_event.detail["consent_version"] == 2
    assert settings_event.actor == staff
    assert [e.detail["fields"] for e in admin_events(study)] == [["consent_text"]]


def test_records_of_what_raters_did_cannot_be_deleted_in_the_admin(client, staff, lead, rater):
    from annotation.models import ConsentRecord, RatingRevision
    from tests.annotation.support import consent_all

    study = make_study(lead=lead, slug="records", cases=1, raters=[rater])
    consent_all(study)
    record = ConsentRecord.objects.get(rater__study=study)
    for model, pk in ((ConsentRecord, record.pk), (RatingRevision, None)):
        name = f"admin:annotation_{model._meta.model_name}_"
        if pk is not None:
            assert (
                client.post(reverse(name + "delete", args=[pk]), {"post": "yes"}).status_code == 403
            )
        listing = client.get(reverse(name + "changelist")).text
        assert 'value="delete_selected"' not in listing
    assert ConsentRecord.objects.filter(pk=record.pk).exists()
