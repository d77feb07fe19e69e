from datetime import timedelta

import pytest
from django.utils import timezone

from annotation import services
from annotation.models import Assignment, Rating
from annotation.services import drafts
from studies.models import Study
from tests.payloads import full_marks_payload, worked


@pytest.fixture
def assignment(membership):
    return membership.assignments.first()


def test_submit_records_one_rating_per_response_with_points_and_total(assignment):
    worked(assignment, 30)
    services.rating_submit(
        assignment=assignment, payload=full_marks_payload(), expected_version=0, active_seconds=30
    )
    ratings = Rating.objects.filter(assignment=assignment)
    assert sorted(r.label for r in ratings) == ["A", "B"]
    assert {r.total for r in ratings} == {20}
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SUBMITTED
    assert assignment.confidence == "high"
    assert assignment.active_seconds == 30
    # Each rating is tied to the response shown under its label.
    for rating in ratings:
        assert rating.response.blinded.label == rating.label


def test_submitting_twice_keeps_one_rating_per_response(assignment):
    payload = full_marks_payload()
    services.rating_submit(assignment=assignment, payload=payload, expected_version=0)
    # The same request again (a double click, a retry) carries the same version.
    services.rating_submit(assignment=assignment, payload=payload, expected_version=0)
    assert Rating.objects.filter(assignment=assignment).count() == 2
    assignment.refresh_from_db()
    assert assignment.version == 1


def test_revision_updates_the_same_ratings(assignment):
    services.rating_submit(assignment=assignment, payload=full_marks_payload(), expected_version=0)
    lower = full_marks_payload()
    lower["responses"]["A"]["evidence"] = {"checked": [False, False, False]}
    services.rating_submit(assignment=assignment, payload=lower, expected_version=1)
    assert Rating.objects.get(assignment=assignment, label="A").total == 17
    assert Rating.objects.filter(assignment=assignment).count() == 2


def test_a_stale_submission_is_refused_and_changes_nothing(assignment):
    services.draft_save(assignment=assignment, payload=full_marks_payload(), expected_version=0)
    other = full_marks_payload(confidence="low")
    with pytest.raises(services.StaleVersionError):
        services.rating_submit(assignment=assignment, payload=other, expected_version=0)
    assert not Rating.objects.filter(assignment=assignment).exists()


def test_a_stale_draft_is_refused(assignment):
    services.draft_save(assignment=assignment, payload=full_marks_payload(), expected_version=0)
    with pytest.raises(services.StaleVersionError):
        services.draft_save(assignment=assignment, payload={}, expected_version=0)
    assignment.refresh_from_db()
    assert assignment.draft["confidence"] == "high"


def test_draft_is_stored_and_is_not_a_rating(assignment):
    saved = services.draft_save(
        assignment=assignment, payload=full_marks_payload(), expected_version=0, active_seconds=12
    )
    assert saved.status == Assignment.Status.DRAFT
    assert saved.version == 1
    assert saved.draft["responses"]["A"]["depth"]["items"][0]["text"] == "factor 0"
    assert not Rating.objects.exists()


def test_submit_needs_a_confidence(assignment):
    with pytest.raises(services.RatingInvalidError, match="confidence"):
        services.rating_submit(
            assignment=assignment, payload=full_marks_payload(confidence=""), expected_version=0
        )
    assert not Rating.objects.exists()


def test_invalid_dimension_value_is_refused_with_the_response_named(assignment):
    payload = full_marks_payload()
    payload["responses"]["B"]["structure"] = {"checked": [True]}
    with pytest.raises(services.RatingInvalidError, match="Response B: Logical Structure"):
        services.rating_submit(assignment=assignment, payload=payload, expected_version=0)
    assert not Rating.objects.exists()


@pytest.mark.parametrize("status", [Study.Status.DRAFT, Study.Status.CLOSED])
def test_ratings_are_refused_when_the_study_is_not_running(assignment, study, status):
    study.status = status
    study.save()
    with pytest.raises(services.RatingClosedError):
        services.rating_submit(
            assignment=assignment, payload=full_marks_payload(), expected_version=0
        )
    assert not Rating.objects.exists()


def test_each_rater_gets_every_case_in_their_own_reproducible_order(study):
    orders = [
        list(m.assignments.values_list("test_case__case_id", flat=True))
        for m in study.memberships.filter(role="rater").order_by("pseudonym")
    ]
    assert all(sorted(o) == ["TC-001", "TC-002", "TC-003", "TC-004"] for o in orders)
    assert (
        services.assignments_create_all(study=study, rater=study.memberships.get(pseudonym="R-01"))
        == []
    )


def test_a_changed_resubmission_keeps_the_earlier_answer_as_a_revision(assignment):
    from annotation.models import RatingRevision

    services.rating_submit(assignment=assignment, payload=full_marks_payload(), expected_version=0)
    first_submitted_at = Assignment.objects.get(pk=assignment.pk).submitted_at
    lower = full_marks_payload(confidence="low")
    lower["responses"]["A"]["evidence"] = {"checked": [False, False, False]}
    services.rating_submit(assignment=assignment, payload=lower, expected_version=1)
    revision = RatingRevision.objects.get(assignment=assignment)
    assert revision.submitted["totals"] == {"A": 20, "B": 20}
    assert revision.submitted["confidence"] == "high"
    assert revision.submitted["responses"]["A"]["evidence"]["checked"] == [True, True, True]
    assert revision.submitted_at == first_submitted_at
    # Submitting the same answers again (a retry, or a review without changes) adds nothing.
    services.rating_submit(assignment=assignment, payload=lower, expected_version=2)
    services.rating_submit(assignment=assignment, payload=lower, expected_version=2)
    assert RatingRevision.objects.filter(assignment=assignment).count() == 1


def test_flags_and_notes_are_kept_with_the_rating(assignment):
    payload = full_marks_payload()
    payload["responses"]["B"]["depth"]["flagged"] = True
    payload["responses"]["B"]["depth"]["flag_note"] = "  Are sub-factors separate?  "
    services.rating_submit(assignment=assignment, payload=payload, expected_version=0)
    depth = Rating.objects.get(assignment=assignment, label="B").scores["depth"]
    assert depth["flagged"] is True
    assert depth["flag_note"] == "Are sub-factors separate?"
    assert depth["points"] == 5


# What a save may store and claim --------------------------------------------------------


def test_a_draft_keeps_only_what_the_rubric_defines(assignment):
    payload = full_marks_payload()
    payload["responses"]["A"]["depth"]["colour"] = "red"  # not a field of the kind
    payload["responses"]["A"]["depth"]["items"][0]["extra"] = "x" * 100
    payload["responses"]["A"]["mood"] = {"choice": 3}  # not a dimension of the rubric
    payload["responses"]["Z"] = {"depth": {"items": []}}  # not a label of the case
    payload["case"] = {"unknown": {"choice": 1}}
    payload["tracking"] = {"anything": ["at", "all"]}
    saved = services.draft_save(assignment=assignment, payload=payload, expected_version=0)
    assert set(saved.draft) == {"responses", "case", "confidence", "notes"}
    assert set(saved.draft["responses"]) == {"A", "B"}
    assert set(saved.draft["responses"]["A"]) == set(full_marks_payload()["responses"]["A"])
    assert set(saved.draft["responses"]["A"]["depth"]) == {"items", "flagged", "flag_note"}
    assert saved.draft["responses"]["A"]["depth"]["items"][0] == {"text": "factor 0", "half": False}
    assert saved.draft["case"] == {}
    assert saved.draft["confidence"] == "high"


def test_a_partial_draft_keeps_the_answers_given_so_far(assignment):
    payload = {"responses": {"B": {"structure": {"checked": [True, False, True]}}}, "notes": "hm"}
    saved = services.draft_save(assignment=assignment, payload=payload, expected_version=0)
    assert saved.draft["responses"] == {
        "B": {"structure": {"checked": [True, False, True], "flagged": False, "flag_note": ""}}
    }
    assert saved.draft["notes"] == "hm"


def test_an_oversized_draft_is_refused_and_changes_nothing(assignment, monkeypatch):
    monkeypatch.setattr(drafts, "MAX_DRAFT_BYTES", 2000)
    payload = full_marks_payload()
    payload["notes"] = "n" * 2500
    with pytest.raises(services.RatingInvalidError, match="too large"):
        services.draft_save(assignment=assignment, payload=payload, expected_version=0)
    assignment.refresh_from_db()
    assert (assignment.version, assignment.draft) == (0, {})


def test_a_submit_without_its_version_is_refused_unless_deliberately_unchecked(assignment):
    with pytest.raises(services.RatingInvalidError, match="which version"):
        services.rating_submit(assignment=assignment, payload=full_marks_payload())
    assert not Rating.objects.exists()
    services.draft_save(assignment=assignment, payload={}, expected_version=0)
    # The demo loader writes on the rater's behalf, whatever the version.
    services.rating_submit(assignment=assignment, payload=full_marks_payload(), any_version=True)
    assert Rating.objects.filter(assignment=assignment).count() == 2


def test_active_time_is_credited_only_as_far_as_wall_time_has_passed(assignment, monkeypatch):
    """One save cannot claim more than the time since the case was last saved (the first
    save: since it was assigned)."""
    clock = [timezone.now()]
    monkeypatch.setattr(timezone, "now", lambda: clock[0])
    Assignment.objects.filter(pk=assignment.pk).update(updated_at=clock[0] - timedelta(seconds=40))

    def save(version, claimed, *, after):
        clock[0] += timedelta(seconds=after)
        services.draft_save(
            assignment=assignment, payload={}, expected_version=version, active_seconds=claimed
        )
        return Assignment.objects.get(pk=assignment.pk).active_seconds

    assert save(0, 10**12, after=0) == 40  # assigned 40 s ago
    assert save(1, 10**12, after=90) == 40 + 90
    assert save(2, 25, after=3600) == 40 + 90 + 25  # a smaller claim is credited as made
    assert save(3, 10**12, after=0) == 40 + 90 + 25  # nothing has passed, nothing credited
    clock[0] += timedelta(seconds=30)
    services.rating_submit(
        assignment=assignment, payload=full_marks_payload(), expected_version=4, active_seconds=99
    )
    assert Assignment.objects.get(pk=assignment.pk).active_seconds == 40 + 90 + 25 + 30
