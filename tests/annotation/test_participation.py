import pytest

from annotation import services
from annotation.models import Assignment, ConsentRecord, Rating, RatingRevision, Withdrawal
from annotation.selectors import onboarding_state
from annotation.services import participation
from annotation.services.training import onboarding_settings_save
from studies.models import Membership, StudyEvent
from tests.payloads import full_marks_payload

from ..factories import UserFactory, make_study


@pytest.fixture
def fresh(db):
    """A study whose rater has not yet seen the information sheet."""
    user = UserFactory()
    study = make_study(slug="fresh-study", cases=2, raters=[user])
    study.consent_text = "## Purpose\nWe compare two systems. You may withdraw at any time."
    study.consent_version = 3
    study.save()
    return study, Membership.objects.get(study=study, user=user)


def test_consent_is_recorded_with_version_text_time_and_disclosure(fresh):
    study, rater = fresh
    assert onboarding_state(rater=rater).blocking_step == "consent"
    record = participation.consent_record(
        rater=rater, agreed=True, prior_knowledge=True, disclosure="Worked on iteration 1"
    )
    assert record.version == 3
    assert record.consent_text.startswith("## Purpose")
    assert record.disclosure == "Worked on iteration 1"
    assert record.agreed_at is not None
    assert onboarding_state(rater=rater).blocking_step is None
    event = StudyEvent.objects.get(kind="rater_consented")
    assert event.membership == rater and event.detail["consent_version"] == 3


def test_consenting_twice_keeps_the_first_record(fresh):
    _, rater = fresh
    first = participation.consent_record(rater=rater, agreed=True, prior_knowledge=False)
    again = participation.consent_record(
        rater=rater, agreed=True, prior_knowledge=True, disclosure="x"
    )
    assert again.pk == first.pk
    assert ConsentRecord.objects.count() == 1


def test_a_new_consent_version_asks_again(fresh):
    study, rater = fresh
    participation.consent_record(rater=rater, agreed=True, prior_knowledge=False)
    study.consent_version = 4
    study.save()
    rater.refresh_from_db()
    assert onboarding_state(rater=rater).blocking_step == "consent"


@pytest.mark.parametrize(
    ("agreed", "prior", "disclosure", "message"),
    [
        (False, False, "", "agree"),
        (True, None, "", "prior knowledge"),
        (True, True, "", "Describe"),
    ],
)
def test_consent_needs_agreement_and_an_answer(fresh, agreed, prior, disclosure, message):
    _, rater = fresh
    with pytest.raises(participation.ParticipationError, match=message):
        participation.consent_record(
            rater=rater, agreed=agreed, prior_knowledge=prior, disclosure=disclosure
        )
    assert not ConsentRecord.objects.exists()


def test_feedback_is_stored_and_replaced(membership):
    participation.feedback_submit(
        rater=membership,
        dimensions={"depth": {"clarity": "unclear", "comment": "Granularity"}, "nope": {}},
        suggestions="Define a factor",
        patterns="",
        notes="",
    )
    feedback = participation.feedback_submit(
        rater=membership,
        dimensions={"depth": {"clarity": "mostly", "comment": ""}},
        suggestions="",
        patterns="A had more alternatives",
        notes="",
    )
    assert feedback.dimensions == {"depth": {"clarity": "mostly", "comment": ""}}
    assert feedback.patterns == "A had more alternatives"
    assert feedback.submitted_at <= feedback.updated_at


def test_feedback_refuses_an_unknown_clarity(membership):
    with pytest.raises(participation.ParticipationError):
        participation.feedback_submit(
            rater=membership, dimensions={"depth": {"clarity": "meh"}}, suggestions="",
            patterns="", notes="",
        )  # fmt: skip


def submit_one(membership):
    assignment = membership.assignments.first()
    services.rating_submit(assignment=assignment, payload=full_marks_payload(), expected_version=0)
    lower = full_marks_payload()
    lower["responses"]["A"]["evidence"] = {"checked": [False, False, False]}
    services.rating_submit(assignment=assignment, payload=lower, expected_version=1)
    return assignment


def test_withdrawal_keeping_data_keeps_ratings_and_records_the_choice(membership):
    submit_one(membership)
    withdrawal = participation.withdrawal_record(rater=membership, data="keep", reason="Busy")
    membership.refresh_from_db()
    assert membership.status == Membership.Status.WITHDRAWN
    assert withdrawal.chosen_by_rater and withdrawal.data == "keep"
    assert Rating.objects.filter(assignment__rater=membership).count() == 2
    event = StudyEvent.objects.get(kind="rater_withdrew")
    assert event.reason == "Busy" and event.detail["data"] == "keep"
    with pytest.raises(services.RatingClosedError):
        services.draft_save(
            assignment=membership.assignments.last(), payload={}, expected_version=0
        )


def test_withdrawal_deleting_data_removes_ratings_history_and_drafts(membership, study):
    assignment = submit_one(membership)
    other = membership.assignments.exclude(pk=assignment.pk).first()
    services.draft_save(assignment=other, payload=full_marks_payload(), expected_version=0)
    withdrawal = participation.withdrawal_record(rater=membership, data="delete")
    assert withdrawal.ratings_deleted == 2
    assert not Rating.objects.filter(assignment__rater=membership).exists()
    assert not RatingRevision.objects.filter(assignment__rater=membership).exists()
    assert set(membership.assignments.values_list("status", flat=True)) == {Assignment.Status.TODO}
    assert all(a.draft == {} for a in membership.assignments.all())
    # The other rater's data are untouched.
    assert Withdrawal.objects.count() == 1


def test_the_studys_policy_overrides_the_raters_choice(membership, study):
    submit_one(membership)
    onboarding_settings_save(study=study, withdrawal_data="keep")
    withdrawal = participation.withdrawal_record(rater=membership, data="delete")
    assert withdrawal.data == "keep" and not withdrawal.chosen_by_rater
    assert Rating.objects.filter(assignment__rater=membership).count() == 2


def test_withdrawal_needs_a_choice_and_happens_once(membership):
    with pytest.raises(participation.ParticipationError, match="Choose"):
        participation.withdrawal_record(rater=membership, data=None)
    participation.withdrawal_record(rater=membership, data="keep")
    with pytest.raises(participation.ParticipationError, match="already"):
        participation.withdrawal_record(rater=membership, data="keep")
    assert onboarding_state(rater=membership).blocking_step == "withdrawn"


def test_a_coordinator_cannot_be_withdrawn_as_a_rater(study, lead):
    # A coordinator marked withdrawn would keep the role and its access.
    coordinator = Membership.objects.create(
        study=study, user=UserFactory(), role=Membership.Role.COORDINATOR, pseudonym="C-09"
    )
    with pytest.raises(participation.ParticipationError, match="Only a rater"):
        participation.withdrawal_record(rater=coordinator, data="keep")
    coordinator.refresh_from_db()
    assert coordinator.status != Membership.Status.WITHDRAWN
    assert not Withdrawal.objects.filter(rater=coordinator).exists()
