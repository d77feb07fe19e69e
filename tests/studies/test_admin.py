"""The admin shows what the services own and changes it only through them: no form writes a
study, a membership or a rater's record, and each action asks the reason and is recorded."""

import pytest
from django.urls import reverse

from annotation.models import OnboardingSettings, Rating, Withdrawal
from annotation.services.training import onboarding_settings_save
from studies.models import Membership, Study, StudyEvent
from studies.services import membership_add
from tests.payloads import submit_all

from ..factories import UserFactory, make_study


@pytest.fixture
def staff(client, db):
    admin = UserFactory(username="site-admin", is_staff=True, is_superuser=True)
    client.force_login(admin)
    return admin


def membership_of(study, user) -> Membership:
    return Membership.objects.get(study=study, user=user)


def run_action(client, model: str, action: str, rows, **form):
    """Choose an admin action on the list page, then send its form (if ``form`` is given)."""
    data = {"action": action, "_selected_action": [row.pk for row in rows], **form}
    if form:
        data["apply"] = "Apply"
    return client.post(reverse(f"admin:{model}_changelist"), data)


def test_a_study_cannot_be_changed_added_or_deleted_in_the_admin(client, staff, lead):
    study = make_study(lead=lead, slug="frozen", cases=1, status=Study.Status.DRAFT)
    change = reverse("admin:studies_study_change", args=[study.pk])
    page = client.get(change)
    assert page.status_code == 200 and 'name="name"' not in page.text  # shown, not a form
    edit = {"slug": study.slug, "name": "Renamed", "instructions": "Sneaky", "_save": "Save"}
    assert client.post(change, edit).status_code == 403
    delete = reverse("admin:studies_study_delete", args=[study.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 403
    assert client.post(reverse("admin:studies_study_add"), edit).status_code == 403
    study.refresh_from_db()
    assert (study.name, study.instructions) == ("Study frozen", "")
    assert not StudyEvent.objects.filter(study=study, kind=StudyEvent.Kind.ADMIN_CHANGED).exists()


def test_a_membership_form_cannot_change_a_rater_or_delete_their_ratings(
    client, staff, lead, rater
):
    study = make_study(lead=lead, slug="people", cases=2, raters=[rater], consented=True)
    submit_all(study)
    membership = membership_of(study, rater)
    ratings = Rating.objects.filter(assignment__rater=membership).count()
    assert ratings > 0
    change = reverse("admin:studies_membership_change", args=[membership.pk])
    edit = {"study": study.pk, "user": rater.pk, "role": "coordinator", "status": "excluded",
            "pseudonym": "R-99", "_save": "Save"}  # fmt: skip
    assert client.post(change, edit).status_code == 403
    delete = reverse("admin:studies_membership_delete", args=[membership.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 403
    # Nor the bulk delete from the list, which would cascade to the ratings too.
    run_action(client, "studies_membership", "delete_selected", [membership], post="yes")
    membership.refresh_from_db()
    assert (membership.role, membership.status, membership.pseudonym) == ("rater", "active", "R-01")
    assert Rating.objects.filter(assignment__rater=membership).count() == ratings


def test_pausing_a_rater_in_the_admin_asks_the_reason_and_is_recorded(client, staff, lead, rater):
    study = make_study(lead=lead, slug="pause", cases=1, raters=[rater])
    membership = membership_of(study, rater)
    page = run_action(client, "studies_membership", "rater_pause", [membership])
    assert page.status_code == 200 and 'name="reason"' in page.text
    # Without a reason nothing changes: the form comes back.
    again = run_action(client, "studies_membership", "rater_pause", [membership], reason=" ")
    assert again.status_code == 200
    membership.refresh_from_db()
    assert membership.status == Membership.Status.ACTIVE
    done = run_action(
        client, "studies_membership", "rater_pause", [membership], reason="Asked to stop."
    )
    assert done.status_code == 302
    membership.refresh_from_db()
    assert membership.status == Membership.Status.PAUSED
    event = study.events.get(kind=StudyEvent.Kind.RATER_PAUSED)
    assert (event.actor, event.reason, event.membership) == (staff, "Asked to stop.", membership)
    # Reinstating goes through the same service.
    run_action(client, "studies_membership", "rater_reinstate", [membership], reason="Back.")
    membership.refresh_from_db()
    assert membership.status == Membership.Status.ACTIVE


def test_a_refused_admin_action_changes_nothing_and_says_why(client, staff, lead, rater):
    study = make_study(lead=lead, slug="lead-only", cases=1, raters=[rater])
    coordinator = membership_add(study=study, user=UserFactory(), role=Membership.Role.COORDINATOR)
    response = run_action(
        client, "studies_membership", "rater_exclude", [coordinator], reason="No."
    )
    assert response.status_code == 302
    coordinator.refresh_from_db()
    assert coordinator.status == Membership.Status.ACTIVE
    page = client.get(response.url).text
    assert "nothing was changed" in page and "Only raters" in page


@pytest.mark.parametrize(
    ("policy", "left"),
    [
        (OnboardingSettings.WithdrawalData.KEEP, True),
        (OnboardingSettings.WithdrawalData.DELETE, False),
    ],
)
def test_withdrawing_a_rater_in_the_admin_follows_the_studys_policy(
    client, staff, lead, rater, policy, left
):
    study = make_study(
        lead=lead, slug=f"withdraw-{policy}", cases=2, raters=[rater], consented=True
    )
    onboarding_settings_save(study=study, withdrawal_data=policy)
    submit_all(study)
    membership = membership_of(study, rater)
    # The form's choice is the rater's, used only where the study lets them choose.
    response = run_action(
        client, "studies_membership", "rater_withdraw", [membership],
        reason="Asked by e-mail.", data="delete" if left else "keep",
    )  # fmt: skip
    assert response.status_code == 302
    membership.refresh_from_db()
    assert membership.status == Membership.Status.WITHDRAWN
    assert Rating.objects.filter(assignment__rater=membership).exists() is left
    withdrawal = Withdrawal.objects.get(rater=membership)
    assert (withdrawal.data, withdrawal.chosen_by_rater) == (policy, False)
    event = study.events.get(kind=StudyEvent.Kind.RATER_WITHDREW)
    assert (event.actor, event.reason) == (staff, "Asked by e-mail.")


def test_raters_and_coordinators_cannot_reach_the_admin(client, lead, rater):
    study = make_study(lead=lead, slug="closed-door", cases=1, raters=[rater])
    client.force_login(lead)
    membership = membership_of(study, rater)
    response = run_action(client, "studies_membership", "rater_exclude", [membership], reason="x")
    assert response.status_code == 302 and "/admin/login/" in response.url
    membership.refresh_from_db()
    assert membership.status == Membership.Status.ACTIVE


def test_records_of_what_raters_did_cannot_be_deleted_in_the_admin(client, staff, lead, rater):
    from annotation.models import ConsentRecord, RatingRevision, TrainingItem
    from tests.annotation.support import consent_all, make_item

    study = make_study(lead=lead, slug="records", cases=1, raters=[rater])
    consent_all(study)
    item = make_item(study)
    record = ConsentRecord.objects.get(rater__study=study)
    for model, pk in ((ConsentRecord, record.pk), (RatingRevision, None), (TrainingItem, item.pk)):
        name = f"admin:annotation_{model._meta.model_name}_"
        if pk is not None:
            assert (
                client.post(reverse(name + "delete", args=[pk]), {"post": "yes"}).status_code == 403
            )
            assert client.post(reverse(name + "change", args=[pk]), {}).status_code == 403
        listing = client.get(reverse(name + "changelist")).text
        assert 'value="delete_selected"' not in listing
    assert ConsentRecord.objects.filter(pk=record.pk).exists()
    assert TrainingItem.objects.filter(pk=item.pk).exists()
