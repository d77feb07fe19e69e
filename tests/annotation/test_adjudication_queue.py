"""The adjudication queue: computed after submissions, idempotent, and sent to by hand."""

import pytest
from django.utils import timezone

from annotation.models import Adjudication, Assignment
from annotation.services.adjudication_queue import (
    AdjudicationSendError,
    adjudication_queue_refresh,
    adjudication_send,
    expected_ratings,
)
from studies import services
from studies.models import Membership, Study, StudyEvent
from studies.models import TestCase as Case
from studies.presets import CORRECTNESS_RUBRIC, HARM_RUBRIC, PAIRWISE_RUBRIC
from studies.services.adjudication_rules import adjudication_rule_switch, adjudication_rules_set

from ..factories import UserFactory, make_study
from ..payloads import submit

RUBRIC = {
    "name": "Harm, correctness and preference",
    "dimensions": [
        HARM_RUBRIC["dimensions"][0],
        CORRECTNESS_RUBRIC["dimensions"][0],
        PAIRWISE_RUBRIC["dimensions"][0],
    ],
}


def payload(harmful="no", correctness=2, preference=0):
    one = {"harmful": {"choice": harmful}, "correctness": {"choice": correctness}}
    return {
        "responses": {"A": dict(one), "B": {"harmful": {"choice": "no"}, "correctness": {"choice": 2}}},
        "case": {"preference": {"choice": preference}},
        "confidence": "medium",
    }  # fmt: skip


@pytest.fixture
def world(lead):
    raters = [UserFactory(username=f"q-rater-{n}") for n in range(3)]
    study = make_study(
        lead=lead, slug="queue", cases=3, raters=raters, status=Study.Status.DRAFT, consented=True
    )
    services.rubric_replace(study=study, actor=lead, definition=RUBRIC)
    adjudication_rules_set(
        study=study,
        actor=lead,
        rules=[
            {"dimension": "harmful", "trigger": "values", "values": ["yes"]},
            {"dimension": "correctness", "trigger": "disagreement", "tolerance": 1},
        ],
    )
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    study.refresh_from_db()
    return study


def case(study, number: int) -> Case:
    return study.test_cases.get(case_id=f"TC-{number:03d}")


def rate(study, number: int, payloads: list[dict]):
    """Each rater in pseudonym order submits their payload for the case."""
    assignments = Assignment.objects.filter(test_case=case(study, number)).order_by(
        "rater__pseudonym"
    )
    for assignment, answer in zip(assignments, payloads, strict=False):
        submit(assignment, answer)


def queue(study) -> dict:
    return {
        a.test_case.case_id: (a.status, a.triggers)
        for a in Adjudication.objects.filter(test_case__study=study).select_related("test_case")
    }


def test_a_case_enters_the_queue_once_it_has_all_its_ratings(world):
    assert expected_ratings(study=world) == 3
    rate(world, 1, [payload("yes"), payload()])
    assert adjudication_queue_refresh(study=world) == 0
    assert queue(world) == {}
    rate(world, 1, [payload("yes"), payload(), payload()])
    assert adjudication_queue_refresh(study=world) == 1
    assert queue(world) == {"TC-001": ("waiting", {"harmful": ["values"]})}
    # Idempotent.
    assert adjudication_queue_refresh(study=world) == 0
    assert queue(world) == {"TC-001": ("waiting", {"harmful": ["values"]})}


def test_each_rule_triggers_on_its_own_dimension(world):
    rate(world, 1, [payload(correctness=2), payload(correctness=1), payload(correctness=2)])
    rate(world, 2, [payload(correctness=2), payload(correctness=0), payload(correctness=2)])
    # A disagreement on the preference has no rule: nothing.
    rate(world, 3, [payload(preference=2), payload(preference=-2), payload()])
    adjudication_queue_refresh(study=world)
    assert queue(world) == {"TC-002": ("waiting", {"correctness": ["disagreement"]})}


def test_gold_and_attention_cases_are_not_adjudicated(world):
    Case.objects.filter(pk=case(world, 1).pk).update(
        purpose=Case.Purpose.GOLD, key_shown_at=timezone.now()
    )
    rate(world, 1, [payload("yes")] * 3)
    adjudication_queue_refresh(study=world)
    assert queue(world) == {}


def test_excluded_raters_do_not_count(world, lead):
    rate(world, 1, [payload("yes"), payload(), payload()])
    excluded = world.memberships.get(pseudonym="R-01")
    services.rater_status_change(membership=excluded, action="exclude", reason="QC", actor=lead)
    # The two others' ratings remain, but the design's k of active raters is now two.
    adjudication_queue_refresh(study=world)
    assert queue(world) == {}


def test_a_preference_switched_after_its_target_is_missed(world, lead):
    assignments = list(
        Assignment.objects.filter(test_case=case(world, 1)).order_by("rater__pseudonym")
    )
    # R-02 saw the pair flipped: -1 there is 1 in key order, the same as R-01's.
    Assignment.objects.filter(pk=assignments[1].pk).update(flipped=True)
    rate(world, 1, [payload(preference=1), payload(preference=-1), payload(preference=1)])
    rate(world, 2, [payload(preference=1), payload(preference=1), payload(preference=0)])
    adjudication_queue_refresh(study=world)
    assert queue(world) == {}
    adjudication_rule_switch(study=world, actor=lead, dimension_key="preference", reason="κ low")
    adjudication_queue_refresh(study=world)
    assert queue(world) == {"TC-002": ("waiting", {"preference": ["target_missed"]})}


def test_the_switch_adds_every_disagreement_to_a_rule(world, lead):
    # Within the tolerance of 1: no disagreement under the rule, one under the switch.
    rate(world, 1, [payload(correctness=2), payload(correctness=1), payload(correctness=2)])
    adjudication_queue_refresh(study=world)
    assert queue(world) == {}
    adjudication_rule_switch(study=world, actor=lead, dimension_key="correctness", reason="α")
    adjudication_queue_refresh(study=world)
    assert queue(world) == {"TC-001": ("waiting", {"correctness": ["target_missed"]})}


def test_a_resolved_case_keeps_its_resolution(world):
    rate(world, 1, [payload("yes"), payload(), payload()])
    adjudication_queue_refresh(study=world)
    Adjudication.objects.update(status=Adjudication.Status.DONE, reason="Harmless")
    # The ratings change after the decision: the resolution stands.
    rate(world, 1, [payload(), payload(), payload()])
    adjudication_queue_refresh(study=world)
    assert queue(world) == {"TC-001": ("done", {"harmful": ["values"]})}


def test_a_waiting_case_that_no_longer_triggers_leaves_the_queue(world):
    rate(world, 1, [payload("yes"), payload(), payload()])
    rate(world, 2, [payload("yes"), payload(), payload()])
    adjudication_queue_refresh(study=world)
    Adjudication.objects.filter(test_case=case(world, 2)).update(draft={"reason": "started"})
    rate(world, 1, [payload(), payload(), payload()])
    rate(world, 2, [payload(), payload(), payload()])
    adjudication_queue_refresh(study=world)
    # The one an adjudicator had begun stays, with its triggers as they were.
    assert queue(world) == {"TC-002": ("waiting", {"harmful": ["values"]})}


def test_a_lead_sends_a_case_by_hand(world, lead):
    with pytest.raises(AdjudicationSendError, match="no submitted rating"):
        adjudication_send(study=world, actor=lead, test_case=case(world, 1), reason="Odd")
    rate(world, 1, [payload("yes")])
    with pytest.raises(AdjudicationSendError, match="Give the reason"):
        adjudication_send(study=world, actor=lead, test_case=case(world, 1), reason="  ")
    adjudication_send(study=world, actor=lead, test_case=case(world, 1), reason="Looks odd")
    manual = {"harmful": ["manual"], "correctness": ["manual"], "preference": ["manual"]}
    assert queue(world) == {"TC-001": ("waiting", manual)}
    row = Adjudication.objects.get()
    assert row.sent_reason == "Looks odd" and row.sent_by == lead
    event = world.events.get(kind=StudyEvent.Kind.ADJUDICATION_SENT)
    assert event.reason == "Looks odd" and event.detail == {"case_id": "TC-001"}
    with pytest.raises(AdjudicationSendError, match="sent to adjudication already"):
        adjudication_send(study=world, actor=lead, test_case=case(world, 1), reason="Again")
    # Once every rating is in, the refresh adds its own triggers and keeps the manual ones;
    # with none of its own, the case stays for the manual one.
    rate(world, 1, [payload("yes"), payload(), payload()])
    adjudication_queue_refresh(study=world)
    assert queue(world)["TC-001"][1] == {**manual, "harmful": ["values", "manual"]}
    rate(world, 1, [payload(), payload(), payload()])
    adjudication_queue_refresh(study=world)
    assert queue(world) == {"TC-001": ("waiting", manual)}


def test_a_case_already_in_the_queue_gains_the_manual_trigger(world, lead):
    rate(world, 1, [payload("yes"), payload(), payload()])
    adjudication_queue_refresh(study=world)
    adjudication_send(study=world, actor=lead, test_case=case(world, 1), reason="Also")
    assert queue(world)["TC-001"][1]["harmful"] == ["values", "manual"]
    Adjudication.objects.update(status=Adjudication.Status.UNRESOLVABLE)
    rate(world, 2, [payload()])
    adjudication_send(study=world, actor=lead, test_case=case(world, 2), reason="Check")
    Adjudication.objects.filter(test_case=case(world, 2)).update(status="done")
    with pytest.raises(AdjudicationSendError, match="adjudicated already"):
        adjudication_send(study=world, actor=lead, test_case=case(world, 2), reason="Again")


def test_only_sample_cases_of_the_study_are_sent(world, lead):
    other = make_study(slug="queue-other", cases=1)
    with pytest.raises(AdjudicationSendError, match="sample cases"):
        adjudication_send(
            study=world, actor=lead, test_case=other.test_cases.get(), reason="Not ours"
        )
    Case.objects.filter(pk=case(world, 1).pk).update(
        purpose=Case.Purpose.ATTENTION, key_shown_at=timezone.now()
    )
    with pytest.raises(AdjudicationSendError, match="sample cases"):
        adjudication_send(study=world, actor=lead, test_case=case(world, 1), reason="Attention")


def test_with_raters_per_item_k_is_the_design(world):
    Study.objects.filter(pk=world.pk).update(raters_per_item=2)
    world.refresh_from_db()
    assert expected_ratings(study=world) == 2
    rate(world, 1, [payload("yes"), payload()])
    adjudication_queue_refresh(study=world)
    assert set(queue(world)) == {"TC-001"}
    Study.objects.filter(pk=world.pk).update(raters_per_item=None)
    world.refresh_from_db()
    Membership.objects.filter(study=world, role=Membership.Role.RATER).update(
        status=Membership.Status.PAUSED
    )
    # No active rater to wait for: the queue is left as it is.
    assert expected_ratings(study=world) == 0
    assert adjudication_queue_refresh(study=world) == 0
    assert set(queue(world)) == {"TC-001"}


def test_the_worker_refreshes_the_queue_with_the_other_checks(world):
    from agreement.services.recompute import agreement_request_recompute

    rate(world, 1, [payload("yes"), payload(), payload()])
    agreement_request_recompute(study_id=world.pk)
    assert set(queue(world)) == {"TC-001"}


def test_the_switch_fills_the_queue_without_waiting_for_another_rating(
    world, lead, django_capture_on_commit_callbacks
):
    # A closed study gets no more ratings: the switch itself starts the worker's run.
    rate(world, 1, [payload(correctness=2), payload(correctness=1), payload(correctness=2)])
    assert queue(world) == {}
    with django_capture_on_commit_callbacks(execute=True):
        adjudication_rule_switch(study=world, actor=lead, dimension_key="harmful", reason="α")
    assert queue(world) == {}  # harm is unanimous; correctness keeps its tolerance of 1
    with django_capture_on_commit_callbacks(execute=True):
        adjudication_rule_switch(study=world, actor=lead, dimension_key="correctness", reason="α")
    assert queue(world) == {"TC-001": ("waiting", {"correctness": ["target_missed"]})}


def test_after_unblinding_the_queue_no_longer_changes(world):
    rate(world, 1, [payload("yes"), payload(), payload()])
    Study.objects.filter(pk=world.pk).update(status=Study.Status.UNBLINDED)
    world.refresh_from_db()
    assert adjudication_queue_refresh(study=world) == 0
    assert queue(world) == {}
