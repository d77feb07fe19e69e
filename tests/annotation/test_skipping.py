"""Skipping a case: the rater's record, the case handed on so that k holds, and where it cannot."""

from collections import Counter

import pytest
from django.utils import timezone

from annotation.models import Assignment
from annotation.services import RatingClosedError, RatingInvalidError, draft_save, rating_submit
from annotation.services import assignment as design
from annotation.services.skipping import SkipError, case_skip, skip_undo
from studies.models import Membership, Study, StudyEvent
from tests.payloads import payload_for

from ..factories import UserFactory, make_study
from .test_assignment import raters_only_study


def balanced(raters=3, cases=3, k=2) -> Study:
    study = raters_only_study(raters=raters, cases=cases, raters_per_item=k)
    design.study_assign(study=study, actor=None)
    return study


def kept_raters(test_case) -> int:
    return test_case.assignments.exclude(status=Assignment.Status.SKIPPED).count()


def first_assignment(study, pseudonym="R-01") -> Assignment:
    rater = study.memberships.get(pseudonym=pseudonym)
    return rater.assignments.select_related("test_case").order_by("position").first()


@pytest.mark.django_db
def test_a_skip_hands_the_case_to_the_rater_who_does_not_have_it():
    study = balanced(raters=3, cases=3, k=2)
    skipped = first_assignment(study)
    case = skipped.test_case
    before = set(case.assignments.values_list("rater__pseudonym", flat=True))
    outcome = case_skip(assignment=skipped, reason="distressing", note="  Too graphic.  ")
    skipped.refresh_from_db()
    assert skipped.status == Assignment.Status.SKIPPED
    assert (skipped.skip_reason, skipped.skip_note) == ("distressing", "Too graphic.")
    assert skipped.skipped_at is not None
    (newcomer,) = {"R-01", "R-02", "R-03"} - before
    assert outcome.reassigned_to == newcomer and not outcome.k_unmet
    assert case.assignments.filter(rater__pseudonym=newcomer).exists()
    assert kept_raters(case) == 2  # the design's k holds
    event = StudyEvent.objects.get(study=study, kind=StudyEvent.Kind.CASE_SKIPPED)
    assert event.detail["reassigned_to"] == newcomer and event.membership == skipped.rater
    # The newcomer's list gained the case at its end, in a place of its own.
    positions = list(
        study.memberships.get(pseudonym=newcomer).assignments.values_list("position", flat=True)
    )
    assert sorted(positions) == list(range(len(positions)))


@pytest.mark.django_db
def test_where_nobody_can_take_the_case_the_skip_says_k_is_not_met():
    study = balanced(raters=2, cases=2, k=2)  # both raters have every case
    outcome = case_skip(assignment=first_assignment(study))
    assert outcome.reassigned_to == "" and outcome.k_unmet
    event = StudyEvent.objects.get(study=study, kind=StudyEvent.Kind.CASE_SKIPPED)
    assert event.detail["k_unmet"] is True
    # A rater who joins later gets the case from "Assign", and never the skipper again.
    newcomer = Membership.objects.create(
        study=study, user=UserFactory(), role=Membership.Role.RATER, pseudonym="R-03"
    )
    design.study_assign(study=study, actor=None)
    case = first_assignment(study).test_case
    assert case.assignments.filter(rater=newcomer).exists()
    assert kept_raters(case) == 2
    assert Counter(case.assignments.values_list("rater__pseudonym", flat=True)) == Counter(
        {"R-01": 1, "R-02": 1, "R-03": 1}
    )


@pytest.mark.django_db
def test_in_the_full_design_a_skip_is_not_handed_on_and_is_counted_short():
    study = make_study(cases=2, raters=[UserFactory(), UserFactory()])
    outcome = case_skip(assignment=first_assignment(study))
    assert outcome.k_unmet and not outcome.reassigned_to


@pytest.mark.django_db
def test_skipping_twice_changes_nothing_the_second_time():
    study = balanced(raters=4, cases=4, k=2)
    skipped = first_assignment(study)
    first = case_skip(assignment=skipped, reason="expertise")
    second = case_skip(assignment=skipped, reason="other", note="changed my mind")
    assert second.already and not first.already
    skipped.refresh_from_db()
    assert skipped.skip_reason == "expertise" and skipped.skip_note == ""
    assert StudyEvent.objects.filter(kind=StudyEvent.Kind.CASE_SKIPPED).count() == 1
    assert kept_raters(skipped.test_case) == 2  # handed on once


@pytest.mark.django_db
def test_a_skip_is_refused_like_a_rating_when_the_study_is_closed_or_the_rater_paused():
    study = balanced()
    skipped = first_assignment(study)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    with pytest.raises(RatingClosedError):
        case_skip(assignment=skipped)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    Membership.objects.filter(pk=skipped.rater_id).update(status=Membership.Status.PAUSED)
    with pytest.raises(RatingClosedError):
        case_skip(assignment=skipped)
    skipped.refresh_from_db()
    assert skipped.status == Assignment.Status.TODO
    assert not StudyEvent.objects.filter(kind=StudyEvent.Kind.CASE_SKIPPED).exists()


@pytest.mark.django_db
def test_bad_skip_input_is_refused_and_changes_nothing():
    study = balanced()
    skipped = first_assignment(study)
    for reason, note in (("bored", ""), ("", "x" * 1001), ("", "nul \x00 here")):
        with pytest.raises(SkipError):
            case_skip(assignment=skipped, reason=reason, note=note)
    skipped.refresh_from_db()
    assert skipped.status == Assignment.Status.TODO


@pytest.mark.django_db
def test_a_submitted_case_cannot_be_skipped_and_a_skipped_one_cannot_be_rated():
    study = balanced(raters=4, cases=4, k=2)
    submitted, other = first_assignment(study), first_assignment(study, "R-02")
    rating_submit(assignment=submitted, payload=payload_for(2), expected_version=0)
    with pytest.raises(SkipError):
        case_skip(assignment=submitted)
    case_skip(assignment=other)
    with pytest.raises(RatingInvalidError):
        rating_submit(assignment=other, payload=payload_for(2), expected_version=1)
    with pytest.raises(RatingInvalidError):
        draft_save(assignment=other, payload={}, expected_version=1)


@pytest.mark.django_db
def test_a_skip_can_be_undone_while_the_case_still_has_room_for_the_rater():
    study = make_study(cases=2, raters=[UserFactory(), UserFactory()])  # full design
    skipped = first_assignment(study)
    draft_save(assignment=skipped, payload={"notes": "half way"}, expected_version=0)
    case_skip(assignment=skipped)
    back = skip_undo(assignment=skipped)
    assert back.status == Assignment.Status.DRAFT and back.skip_reason == ""
    assert back.draft["notes"] == "half way"

    handed_on = balanced(raters=3, cases=3, k=2)
    gone = first_assignment(handed_on)
    case_skip(assignment=gone)
    with pytest.raises(SkipError, match="given to another rater"):
        skip_undo(assignment=gone)
    gone.refresh_from_db()
    assert gone.status == Assignment.Status.SKIPPED


@pytest.mark.django_db
def test_gold_items_are_never_handed_on():
    study = balanced(raters=3, cases=3, k=2)
    skipped = first_assignment(study)
    skipped.test_case.purpose = "gold"
    skipped.test_case.key_shown_at = timezone.now()
    skipped.test_case.save(update_fields=["purpose", "key_shown_at"])
    before = skipped.test_case.assignments.count()
    outcome = case_skip(assignment=skipped)
    assert not outcome.reassigned_to and not outcome.k_unmet
    assert skipped.test_case.assignments.count() == before


@pytest.mark.django_db
def test_a_worksheet_import_cannot_give_a_rater_a_case_whose_places_are_taken_but_a_skip_frees_one():
    study = balanced(raters=3, cases=3, k=2)
    case = first_assignment(study).test_case
    outsider = study.memberships.filter(role="rater").exclude(assignments__test_case=case).get()
    assert design.cases_beyond_design(study=study, rater=outsider, test_case_ids=[case.pk])
    Assignment.objects.filter(test_case=case, rater__pseudonym="R-01").update(
        status=Assignment.Status.SKIPPED
    )
    assert not design.cases_beyond_design(study=study, rater=outsider, test_case_ids=[case.pk])


@pytest.mark.django_db
def test_skips_are_counted_per_case_rater_and_stratum_with_the_cases_left_short():
    from annotation.selectors import study_skip_summary

    study = balanced(raters=2, cases=4, k=2)  # nobody to hand a skip to
    study.test_cases.update(stratum="harm")
    rater = study.memberships.get(pseudonym="R-01")
    for assignment in rater.assignments.select_related("test_case").order_by("position")[:3]:
        case_skip(assignment=assignment, reason="distressing")
    summary = study_skip_summary(study=study)
    assert summary.total == 3 and summary.k_unmet == 3
    assert summary.per_rater == [("R-01", 3)] and summary.per_stratum == [("harm", 3)]
    assert len(summary.per_case) == 3 and all(n == 1 for _, _, n in summary.per_case)
    (heavy,) = summary.heavy
    assert (heavy.rater, heavy.stratum, heavy.skipped, heavy.assigned) == ("R-01", "harm", 3, 4)
    # Pointed out, never paused.
    rater.refresh_from_db()
    assert rater.status == Membership.Status.ACTIVE
