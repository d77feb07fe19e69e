"""The adaptive design (k_min to k_max raters per case): disagreeing cases get one more
rater, unanimous ones do not, agreement reads the first k_min ratings of each case, and two
runs at once add one rater, not two."""

import threading

import numpy as np
import pytest
from django.db import connection
from django.urls import reverse

from agreement.models import StudyAgreement
from agreement.services.recompute import agreement_recompute
from agreement.stats.krippendorff import krippendorff_alpha
from annotation.models import Adjudication, Assignment
from annotation.selectors.adaptive import adaptive_cases_waiting, adaptive_summary
from annotation.services.adaptive import adaptive_rater_add
from annotation.services.assignment import study_assign
from studies.models import AdjudicationRule, Membership, Study
from studies.services import membership_add, study_create, study_update
from studies.services import test_cases_add as cases_add
from studies.services.lifecycle import study_open
from tests.factories import UserFactory, make_cases
from tests.payloads import SYSTEMS, submit

A_MUCH, B_MUCH = -2, 2


def adaptive_study(*, raters=5, cases=4, k_min=2, k_max=3, side_mode="fixed") -> Study:
    lead = UserFactory()
    study = study_create(
        slug=f"adaptive-{lead.username}",
        name="Adaptive",
        lead=lead,
        rubric_preset="pairwise",
        raters_per_item=k_min,
        raters_per_item_max=k_max,
        side_mode=side_mode,
    )
    cases_add(study=study, systems=list(SYSTEMS), cases=make_cases(cases, SYSTEMS))
    for _ in range(raters):
        membership_add(study=study, user=UserFactory(), role=Membership.Role.RATER)
    study_assign(study=study, actor=lead)
    return study_open(study=study, actor=lead, acknowledge_warnings=True)


def holders(case) -> list[Assignment]:
    return list(
        Assignment.objects.filter(test_case=case)
        .exclude(status=Assignment.Status.SKIPPED)
        .order_by("pk")
    )


def prefer(assignment: Assignment, choice: int) -> None:
    """Submit a preference given in key order (the screen's side undone)."""
    shown = -choice if assignment.flipped else choice
    submit(assignment, {"case": {"preference": {"choice": shown}}, "confidence": "high"})


def rate_open(study: Study, choices: dict[str, list[int]]) -> None:
    """Each case's open assignments submit the next of its choices (by case id)."""
    for case in study.test_cases.order_by("position"):
        for assignment in holders(case):
            if assignment.status != Assignment.Status.SUBMITTED:
                done = sum(a.status == Assignment.Status.SUBMITTED for a in holders(case))
                prefer(assignment, choices[case.case_id][done])


@pytest.mark.django_db(transaction=True)
def test_disagreeing_cases_get_a_third_rater_and_agreement_reads_the_first_two():
    study = adaptive_study()
    cases = list(study.test_cases.order_by("position"))
    assert all(len(holders(case)) == 2 for case in cases)
    # TC-001 and TC-002 unanimous; TC-003 and TC-004 split, and their third rater sides
    # with the first.
    choices = {
        "TC-001": [A_MUCH, A_MUCH],
        "TC-002": [B_MUCH, B_MUCH],
        "TC-003": [A_MUCH, B_MUCH, A_MUCH],
        "TC-004": [B_MUCH, A_MUCH, B_MUCH],
    }
    rate_open(study, choices)
    agreement_recompute(study_id=study.pk)  # the worker (it ran after each submit too)
    assert [len(holders(case)) for case in cases] == [2, 2, 3, 3]
    # A second run adds nobody: the third raters have not submitted yet.
    agreement_recompute(study_id=study.pk)
    assert [len(holders(case)) for case in cases] == [2, 2, 3, 3]
    third = [holders(case)[2] for case in cases[2:]]
    assert len({a.rater_id for a in third}) >= 1
    for case, assignment in zip(cases[2:], third, strict=True):
        assert assignment.rater_id not in {a.rater_id for a in holders(case)[:2]}
    rate_open(study, choices)
    agreement_recompute(study_id=study.pk)
    # k_max reached: still three raters on the split cases.
    assert [len(holders(case)) for case in cases] == [2, 2, 3, 3]

    row = StudyAgreement.objects.get(study=study)
    (preference,) = row.result["dimensions"]
    # Agreement on the first two ratings of each case, laid out here by hand.
    first_two = np.array([[A_MUCH, B_MUCH, A_MUCH, B_MUCH], [A_MUCH, B_MUCH, B_MUCH, A_MUCH]])
    expected = krippendorff_alpha(first_two.astype(float), level="ordinal")
    assert preference["alpha"] == pytest.approx(expected)
    # A verdict per rater and case (a rubric of preferences only: issue 39), 8 screens.
    assert row.n_ratings == 8
    assert row.result["left_out"]["beyond_k_min_ratings"] == 2
    summary = adaptive_summary(study=study)
    assert (summary.cases, summary.extended, summary.ratings, summary.saved) == (4, 2, 10, 2)
    assert summary.by_raters == {2: 2, 3: 2}


@pytest.mark.django_db
def test_a_unanimous_case_waits_for_no_one_and_a_full_case_is_not_extended():
    study = adaptive_study(cases=2)
    first, second = study.test_cases.order_by("position")
    for assignment in holders(first):
        prefer(assignment, A_MUCH)
    assert adaptive_cases_waiting(study=study) == {first.pk: 2}
    # The case's count must be the one seen: a stale count adds nobody.
    assert adaptive_rater_add(study=study, test_case_id=first.pk, places=1) is None
    assert adaptive_rater_add(study=study, test_case_id=second.pk, places=2) is None
    added = adaptive_rater_add(study=study, test_case_id=first.pk, places=2)
    assert added is not None and added.status == Assignment.Status.TODO
    assert adaptive_rater_add(study=study, test_case_id=first.pk, places=2) is None
    assert adaptive_cases_waiting(study=study) == {}


@pytest.mark.django_db
def test_the_extra_rater_is_the_least_busy_and_the_balanced_sides_stay_within_one():
    study = adaptive_study(raters=4, cases=6, k_max=4, side_mode="balanced")
    for case in study.test_cases.order_by("position"):
        for assignment in holders(case):
            prefer(assignment, A_MUCH)
    busy = {}
    for case in study.test_cases.order_by("position"):
        added = adaptive_rater_add(study=study, test_case_id=case.pk, places=2)
        assert added is not None
        busy[case.case_id] = added.rater.pseudonym
    # Each new case went to a rater with nothing left to rate, so they spread out.
    assert len(set(busy.values())) == 4
    for rater in study.memberships.filter(role=Membership.Role.RATER):
        sides = list(rater.assignments.values_list("flipped", flat=True))
        assert abs(2 * sum(sides) - len(sides)) <= 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks")
def test_two_runs_at_once_add_one_rater_to_the_case(monkeypatch):
    # The worker runs inline after each submit here: keep it from adding the rater first.
    monkeypatch.setattr("agreement.services.recompute.adaptive_raters_extend", lambda **_: 0)
    study = adaptive_study(raters=6, cases=1, k_max=5)
    (case,) = study.test_cases.all()
    for assignment, choice in zip(holders(case), [A_MUCH, B_MUCH], strict=True):
        prefer(assignment, choice)
    barrier = threading.Barrier(4)
    results = []

    def run():
        barrier.wait()
        try:
            results.append(adaptive_rater_add(study=study, test_case_id=case.pk, places=2))
        except Exception as error:  # shown by the assertion below
            results.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not [r for r in results if isinstance(r, Exception)], results
    assert sum(result is not None for result in results) == 1
    assert len(holders(case)) == 3


@pytest.mark.django_db
def test_the_design_range_is_checked_and_frozen():
    lead = UserFactory()
    study = study_create(slug="range", name="Range", lead=lead, raters_per_item=2)
    for bad in ({"raters_per_item_max": 2}, {"raters_per_item_max": 21}):
        with pytest.raises(Exception, match="Most raters per test case"):
            study_update(study=study, actor=lead, changes=bad)
    with pytest.raises(Exception, match="needs raters per test case"):
        study_update(
            study=study, actor=lead, changes={"raters_per_item": None, "raters_per_item_max": 4}
        )
    study = study_update(study=study, actor=lead, changes={"raters_per_item_max": 4})
    assert study.adaptive_raters == (2, 4)


@pytest.mark.django_db
def test_the_report_and_the_agreement_page_state_the_design(client):
    study = adaptive_study(cases=2)
    first, second = study.test_cases.order_by("position")
    for assignment, choice in zip(holders(first), [A_MUCH, A_MUCH], strict=True):
        prefer(assignment, choice)
    for assignment, choice in zip(holders(second), [A_MUCH, B_MUCH], strict=True):
        prefer(assignment, choice)
    agreement_recompute(study_id=study.pk)
    assert len(holders(second)) == 3
    client.force_login(study.lead)
    page = client.get(reverse("agreement:study", args=[study.slug])).content.decode()
    assert "agreement is computed on the first 2 ratings of each case" in page
    report = client.get(reverse("agreement:report", args=[study.slug])).content.decode()
    assert "Adaptive design: 2 to 3 raters per test case" in report
    assert "Of 2 rated cases, 1 got extra raters (1 with 2 raters, 1 with 3 raters)" in report
    assert "They used 4 ratings where 3 raters on every case would have used 6: 2 saved" in report


@pytest.mark.django_db
def test_a_case_joins_the_adjudication_queue_once_its_extra_raters_have_rated():
    study = adaptive_study(cases=2)
    AdjudicationRule.objects.create(
        study=study, dimension_key="preference", trigger=AdjudicationRule.Trigger.DISAGREEMENT
    )
    first, second = study.test_cases.order_by("position")
    # TC-001 unanimous: no trigger, no extra rater.
    for assignment in holders(first):
        prefer(assignment, A_MUCH)
    for assignment, choice in zip(holders(second), [A_MUCH, B_MUCH], strict=True):
        prefer(assignment, choice)
    agreement_recompute(study_id=study.pk)
    assert len(holders(second)) == 3
    assert not Adjudication.objects.filter(test_case=second).exists()
    prefer(holders(second)[2], B_MUCH)
    agreement_recompute(study_id=study.pk)
    assert len(holders(second)) == 3  # k_max
    assert Adjudication.objects.get(test_case=second).triggers == {"preference": ["disagreement"]}
    assert not Adjudication.objects.filter(test_case=first).exists()
