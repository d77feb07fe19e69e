"""The adjudication screen's writes: cleaned by the kinds, versioned, audited, guarded."""

import pytest

from annotation.models import Adjudication
from annotation.services import StaleVersionError
from annotation.services.adjudication import (
    AdjudicationInvalidError,
    AdjudicationRefusedError,
    adjudication_draft_save,
    adjudication_make_gold,
    adjudication_mark_unresolvable,
    adjudication_resolve,
)
from studies.errors import StudySetupError
from studies.models import ExpectedAnswer, Membership, Study, StudyEvent, TestCase
from studies.services import membership_add

from ..factories import UserFactory
from .adjudication_support import adjudication_world, resolved_payload

pytestmark = pytest.mark.django_db


def test_resolve_cleans_and_scores_through_the_kind_and_records_an_event():
    world = adjudication_world()
    payload = resolved_payload(depth=4)
    # What the screen sends but the decision does not cover is dropped: other dimensions.
    payload["responses"]["A"]["evidence"] = {"checked": [True, True, True]}
    done = adjudication_resolve(
        adjudication=world.adjudication, adjudicator=world.adjudicator, payload=payload,
        expected_version=0, actor=world.adjudicator.user,
    )  # fmt: skip
    done.refresh_from_db()
    assert done.status == Adjudication.Status.DONE
    assert done.adjudicator == world.adjudicator
    assert done.resolved_at is not None
    scoring = {d.key: d for d in world.study.rubric.scoring_dimensions()}["depth"]
    raw = resolved_payload(depth=4)["responses"]
    assert done.answers == {
        "responses": {
            "A": {"depth": scoring.score(raw["A"]["depth"])},
            "B": {"depth": scoring.score(raw["B"]["depth"])},
        },
        "case": {},
    }
    assert done.reason.startswith("Factors 1-4")
    event = StudyEvent.objects.get(kind=StudyEvent.Kind.ADJUDICATION_RESOLVED)
    assert event.membership == world.adjudicator
    assert event.detail["case"] == world.case.case_id
    assert event.detail["revision"] is False


def test_an_answer_the_kind_refuses_is_not_recorded():
    world = adjudication_world()
    payload = resolved_payload()
    payload["responses"]["A"]["depth"] = {"items": "not a list"}
    with pytest.raises(AdjudicationInvalidError) as refused:
        adjudication_resolve(
            adjudication=world.adjudication, adjudicator=world.adjudicator, payload=payload,
            expected_version=0,
        )  # fmt: skip
    assert refused.value.field.startswith("A-")
    world.adjudication.refresh_from_db()
    assert world.adjudication.status == Adjudication.Status.WAITING


def test_a_triggered_dimension_left_unanswered_is_refused():
    world = adjudication_world(triggers={"evidence": ["disagreement"]})
    with pytest.raises(AdjudicationInvalidError, match="give the resolved answer"):
        adjudication_resolve(
            adjudication=world.adjudication, adjudicator=world.adjudicator,
            payload={"responses": {}, "notes": "why"}, expected_version=0,
        )  # fmt: skip


def test_the_reason_is_required():
    world = adjudication_world()
    with pytest.raises(AdjudicationInvalidError, match="reason") as refused:
        adjudication_resolve(
            adjudication=world.adjudication, adjudicator=world.adjudicator,
            payload=resolved_payload(reason="  "), expected_version=0,
        )  # fmt: skip
    assert refused.value.field == "notes"


def test_draft_then_a_stale_tab_is_refused():
    world = adjudication_world()
    saved = adjudication_draft_save(
        adjudication=world.adjudication, adjudicator=world.adjudicator,
        payload=resolved_payload(depth=3), expected_version=0,
    )  # fmt: skip
    assert saved.version == 1
    assert saved.adjudicator == world.adjudicator
    assert saved.draft["notes"].startswith("Factors")
    with pytest.raises(StaleVersionError):
        adjudication_draft_save(
            adjudication=world.adjudication, adjudicator=world.adjudicator,
            payload=resolved_payload(depth=5), expected_version=0,
        )  # fmt: skip
    with pytest.raises(StaleVersionError):
        adjudication_resolve(
            adjudication=world.adjudication, adjudicator=world.adjudicator,
            payload=resolved_payload(depth=5), expected_version=0,
        )  # fmt: skip
    world.adjudication.refresh_from_db()
    assert world.adjudication.status == Adjudication.Status.WAITING


def test_a_repeated_decision_is_the_one_recorded():
    world = adjudication_world()
    first = adjudication_resolve(
        adjudication=world.adjudication, adjudicator=world.adjudicator,
        payload=resolved_payload(), expected_version=0,
    )  # fmt: skip
    again = adjudication_resolve(
        adjudication=world.adjudication, adjudicator=world.adjudicator,
        payload=resolved_payload(), expected_version=0,
    )  # fmt: skip
    assert again.version == first.version
    assert StudyEvent.objects.filter(kind=StudyEvent.Kind.ADJUDICATION_RESOLVED).count() == 1


def test_revision_by_the_same_adjudicator_is_recorded_until_unblinding():
    world = adjudication_world()
    done = adjudication_resolve(
        adjudication=world.adjudication, adjudicator=world.adjudicator,
        payload=resolved_payload(depth=4), expected_version=0,
    )  # fmt: skip
    revised = adjudication_resolve(
        adjudication=world.adjudication, adjudicator=world.adjudicator,
        payload=resolved_payload(depth=2, reason="On reflection, two."), expected_version=done.version,
    )  # fmt: skip
    assert revised.reason == "On reflection, two."
    events = StudyEvent.objects.filter(kind=StudyEvent.Kind.ADJUDICATION_RESOLVED)
    assert events.count() == 2
    latest = events.order_by("-pk").first()
    assert latest.detail["revision"] is True
    assert latest.detail["previous"]["reason"].startswith("Factors")
    Study.objects.filter(pk=world.study.pk).update(status=Study.Status.UNBLINDED)
    with pytest.raises(AdjudicationRefusedError, match="unblinded"):
        adjudication_resolve(
            adjudication=world.adjudication, adjudicator=world.adjudicator,
            payload=resolved_payload(depth=3), expected_version=revised.version,
        )  # fmt: skip


def test_unresolvable_needs_a_reason_and_keeps_no_answer():
    world = adjudication_world()
    with pytest.raises(AdjudicationInvalidError):
        adjudication_mark_unresolvable(
            adjudication=world.adjudication, adjudicator=world.adjudicator, reason="",
            expected_version=0,
        )  # fmt: skip
    marked = adjudication_mark_unresolvable(
        adjudication=world.adjudication, adjudicator=world.adjudicator,
        reason="The rubric does not say whether a restated factor counts.", expected_version=0,
    )  # fmt: skip
    marked.refresh_from_db()
    assert marked.status == Adjudication.Status.UNRESOLVABLE
    assert marked.answers == {}
    assert StudyEvent.objects.filter(kind=StudyEvent.Kind.ADJUDICATION_UNRESOLVABLE).count() == 1


def test_another_adjudicator_cannot_take_over_a_case():
    world = adjudication_world()
    adjudication_draft_save(
        adjudication=world.adjudication, adjudicator=world.adjudicator,
        payload=resolved_payload(), expected_version=0,
    )  # fmt: skip
    second = membership_add(study=world.study, user=UserFactory(), role=Membership.Role.ADJUDICATOR)
    with pytest.raises(AdjudicationRefusedError, match="Another adjudicator"):
        adjudication_resolve(
            adjudication=world.adjudication, adjudicator=second,
            payload=resolved_payload(), expected_version=1,
        )  # fmt: skip


def test_a_case_held_by_a_paused_adjudicator_can_be_taken_over_with_its_draft():
    world = adjudication_world()
    adjudication_draft_save(
        adjudication=world.adjudication, adjudicator=world.adjudicator,
        payload=resolved_payload(), expected_version=0,
    )  # fmt: skip
    Membership.objects.filter(pk=world.adjudicator.pk).update(status=Membership.Status.PAUSED)
    second = membership_add(study=world.study, user=UserFactory(), role=Membership.Role.ADJUDICATOR)
    done = adjudication_resolve(
        adjudication=world.adjudication, adjudicator=second,
        payload=resolved_payload(), expected_version=1,
    )  # fmt: skip
    assert (done.status, done.adjudicator) == (Adjudication.Status.DONE, second)
    # Once decided, the case is the decider's: the first one, reinstated, cannot change it.
    Membership.objects.filter(pk=world.adjudicator.pk).update(status=Membership.Status.ACTIVE)
    world.adjudicator.refresh_from_db()
    with pytest.raises(AdjudicationRefusedError, match="Another adjudicator"):
        adjudication_resolve(
            adjudication=done, adjudicator=world.adjudicator,
            payload=resolved_payload(), expected_version=done.version,
        )  # fmt: skip


def test_a_rater_or_an_adjudicator_of_another_study_is_refused():
    world = adjudication_world()
    other = adjudication_world(slug="adj-other")
    rater = world.study.memberships.filter(role=Membership.Role.RATER).first()
    for who in (rater, other.adjudicator):
        with pytest.raises(AdjudicationRefusedError):
            adjudication_resolve(
                adjudication=world.adjudication, adjudicator=who,
                payload=resolved_payload(), expected_version=0,
            )  # fmt: skip


def test_an_adjudicator_who_rated_the_case_is_refused():
    world = adjudication_world()
    rater = world.study.memberships.filter(role=Membership.Role.RATER).first()
    # The rater's role changed after they rated: they still never adjudicate the case.
    Membership.objects.filter(pk=rater.pk).update(role=Membership.Role.ADJUDICATOR)
    rater.refresh_from_db()
    with pytest.raises(AdjudicationRefusedError, match="You rated this case"):
        adjudication_resolve(
            adjudication=world.adjudication, adjudicator=rater,
            payload=resolved_payload(), expected_version=0,
        )  # fmt: skip


def test_make_gold_is_refused_once_the_study_is_open():
    world = adjudication_world()
    adjudication_resolve(
        adjudication=world.adjudication, adjudicator=world.adjudicator,
        payload=resolved_payload(), expected_version=0,
    )  # fmt: skip
    with pytest.raises(StudySetupError, match="frozen protocol"):
        adjudication_make_gold(adjudication=world.adjudication, actor=world.study.lead)
    world.case.refresh_from_db()
    assert world.case.purpose == TestCase.Purpose.SAMPLE


def test_make_gold_in_the_pilot_uses_the_adjudicated_answers():
    world = adjudication_world(status=Study.Status.PILOT)
    adjudication_resolve(
        adjudication=world.adjudication, adjudicator=world.adjudicator,
        payload=resolved_payload(depth=4), expected_version=0,
    )  # fmt: skip
    adjudication_make_gold(adjudication=world.adjudication, actor=world.study.lead)
    world.case.refresh_from_db()
    assert world.case.purpose == TestCase.Purpose.GOLD
    expected = ExpectedAnswer.objects.get(test_case=world.case)
    scoring = {d.key: d for d in world.study.rubric.scoring_dimensions()}["depth"]
    world.adjudication.refresh_from_db()
    assert expected.answers["responses"]["A"]["depth"] == scoring.expected_from_key(
        world.adjudication.answers["responses"]["A"]["depth"], tolerance=0
    )
    assert expected.explanation == world.adjudication.reason
    assert StudyEvent.objects.filter(kind=StudyEvent.Kind.ADJUDICATION_MADE_GOLD).exists()


def test_a_waiting_case_cannot_become_gold():
    world = adjudication_world(status=Study.Status.PILOT)
    with pytest.raises(StudySetupError, match="resolved"):
        adjudication_make_gold(adjudication=world.adjudication, actor=world.study.lead)


def test_the_kinds_say_what_settles_a_dimension_and_turn_a_preference_to_key_order():
    from studies.rubric import dimension_from_config

    harm = dimension_from_config(
        key="harm", name="Harm", kind="categorical",
        config={"categories": [{"value": "yes", "label": "Yes"}, {"value": "no", "label": "No"}]},
    )  # fmt: skip
    assert not harm.settles(harm.score({"choice": None}))
    assert harm.settles(harm.score({"choice": "yes"}))
    depth = {d.key: d for d in adjudication_world().study.rubric.scoring_dimensions()}["depth"]
    assert depth.settles(depth.score({"items": []}))  # nothing counted is an answer
    preference = dimension_from_config(
        key="preference", name="Preference", kind="pairwise",
        config={"labels": ["A better", "Tie", "B better"]},
    )  # fmt: skip
    shown = preference.score({"choice": -1})
    assert preference.cell_out(preference.key_ordered(shown, flipped=True)) == 1
    assert preference.key_ordered(shown, flipped=False) == shown
    assert harm.key_ordered(harm.score({"choice": "yes"}), flipped=True)["choice"] == "yes"
