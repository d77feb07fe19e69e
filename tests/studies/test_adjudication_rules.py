"""Adjudication rules: what each kind says triggers, the rules' service, and the protocol."""

import json

import pytest

from studies import selectors, services
from studies.errors import ApplicationError
from studies.models import AdjudicationRule, Membership, Study, StudyEvent
from studies.presets import CORRECTNESS_RUBRIC, HARM_RUBRIC, PAIRWISE_RUBRIC, REFERENCE_RUBRIC
from studies.rubric import dimension_from_config
from studies.services.adjudication_rules import (
    AdjudicationRuleError,
    adjudication_rule_switch,
    adjudication_rules_set,
)
from studies.services.membership import membership_add

from ..factories import UserFactory, make_study


def kind(rubric: dict, key: str):
    dimension = next(d for d in rubric["dimensions"] if d["key"] == key)
    return dimension_from_config(
        key=key, name=dimension["name"], kind=dimension["kind"], config=dimension["config"]
    )


HARMFUL = kind(HARM_RUBRIC, "harmful")
CORRECTNESS = kind(CORRECTNESS_RUBRIC, "correctness")
PREFERENCE = kind(PAIRWISE_RUBRIC, "preference")
DEPTH = kind(REFERENCE_RUBRIC, "depth")  # counted
EVIDENCE = kind(REFERENCE_RUBRIC, "evidence")  # checklist


def answers(*choices, flipped=False):
    return [(None if c is None else {"choice": c}, flipped) for c in choices]


# --- the kinds -------------------------------------------------------------------------


def test_kinds_list_the_values_a_rule_may_name():
    assert HARMFUL.adjudication_values() == [("no", "No"), ("yes", "Yes")]
    assert CORRECTNESS.adjudication_values() == [
        (2, "Correct"), (1, "Partly correct"), (0, "Incorrect")
    ]  # fmt: skip
    assert [v for v, _ in PREFERENCE.adjudication_values()] == [-2, -1, 0, 1, 2]
    # Points only: nothing to name.
    assert DEPTH.adjudication_values() == [] and EVIDENCE.adjudication_values() == []
    assert [k.adjudication_spread for k in (HARMFUL, PREFERENCE)] == [False, False]
    assert all(k.adjudication_spread for k in (CORRECTNESS, DEPTH, EVIDENCE))


def test_categories_trigger_on_a_named_value_and_on_any_disagreement():
    assert HARMFUL.in_named_values(answers("no", "no", "yes"), values=["yes"])
    assert not HARMFUL.in_named_values(answers("no", "no", None), values=["yes"])
    assert HARMFUL.disagree(answers("no", "yes", "no"))
    assert not HARMFUL.disagree(answers("yes", "yes", "yes"))
    # Unanswered takes no part.
    assert not HARMFUL.disagree(answers("yes", None, "yes"))


def test_scales_disagree_by_a_spread_over_the_tolerance():
    assert CORRECTNESS.in_named_values(answers(2, 0), values=[0])
    assert not CORRECTNESS.in_named_values(answers(2, 1), values=[0])
    assert CORRECTNESS.disagree(answers(2, 1), tolerance=0)
    assert not CORRECTNESS.disagree(answers(2, 1), tolerance=1)
    assert CORRECTNESS.disagree(answers(2, 0), tolerance=1)
    assert not CORRECTNESS.disagree(answers(2, 2, None), tolerance=0)


def test_points_disagree_by_their_spread():
    def counted(n):
        return DEPTH.score({"items": [{"text": f"f{i}", "half": False} for i in range(n)]})

    two, six = counted(2), counted(6)
    assert DEPTH.points(two) != DEPTH.points(six)
    spread = DEPTH.points(six) - DEPTH.points(two)
    assert DEPTH.disagree([(two, False), (six, False)], tolerance=spread - 1)
    assert not DEPTH.disagree([(two, False), (six, False)], tolerance=spread)
    ticked = EVIDENCE.score({"checked": [True, True, True]})
    none = EVIDENCE.score({"checked": [False, False, False]})
    assert EVIDENCE.disagree([(ticked, False), (none, False)], tolerance=2)
    assert not EVIDENCE.disagree([(ticked, False), (none, False)], tolerance=3)
    assert not DEPTH.in_named_values([(two, False)], values=[2])


def test_a_preference_is_compared_in_key_order():
    # Two raters prefer the same response (key label B): one saw it second (1), the
    # other on a flipped screen saw it first (-1). They agree.
    same = [({"choice": 1}, False), ({"choice": -1}, True)]
    assert not PREFERENCE.disagree(same)
    assert PREFERENCE.disagree([({"choice": 1}, False), ({"choice": 1}, True)])
    # Named values are in key order too: "B much better" is 2, whatever the screen.
    assert PREFERENCE.in_named_values([({"choice": -2}, True)], values=[2])
    assert not PREFERENCE.in_named_values([({"choice": -2}, False)], values=[2])


# --- the service -------------------------------------------------------------------------

MIXED = {
    "name": "Mixed",
    "dimensions": [
        *HARM_RUBRIC["dimensions"],
        *CORRECTNESS_RUBRIC["dimensions"],
        *REFERENCE_RUBRIC["dimensions"][:2],
    ],
}


@pytest.fixture
def draft(lead):
    study = make_study(lead=lead, slug="rules", cases=2, status=Study.Status.DRAFT)
    return services.rubric_replace(study=study, actor=lead, definition=MIXED)


def rules_of(study) -> dict:
    return {
        r.dimension_key: (r.trigger, r.values, r.tolerance)
        for r in AdjudicationRule.objects.filter(study=study)
    }


def test_rules_are_saved_and_replaced(draft, lead):
    adjudication_rules_set(
        study=draft,
        actor=lead,
        rules=[
            {"dimension": "harmful", "trigger": "values", "values": ["yes"]},
            {"dimension": "correctness", "trigger": "disagreement", "tolerance": 1},
            {"dimension": "depth", "trigger": "never"},
        ],
    )
    assert rules_of(draft) == {
        "harmful": ("values", ["yes"], 0),
        "correctness": ("disagreement", [], 1),
    }
    event = draft.events.get(kind=StudyEvent.Kind.ADJUDICATION_RULES_SET)
    assert event.actor == lead and set(event.detail["rules"]) == {"harmful", "correctness"}
    # The same rules again change nothing and record nothing.
    adjudication_rules_set(
        study=draft,
        actor=lead,
        rules=[
            {"dimension": "harmful", "trigger": "values", "values": ["yes"]},
            {"dimension": "correctness", "trigger": "disagreement", "tolerance": 1},
        ],
    )
    assert draft.events.filter(kind=StudyEvent.Kind.ADJUDICATION_RULES_SET).count() == 1
    # A dimension left out is never adjudicated.
    adjudication_rules_set(
        study=draft, actor=lead, rules=[{"dimension": "depth", "trigger": "disagreement"}]
    )
    assert rules_of(draft) == {"depth": ("disagreement", [], 0)}


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"dimension": "nope", "trigger": "values"}, "No dimension “nope”"),
        ({"dimension": "harmful", "trigger": "sometimes"}, "the trigger is one of"),
        ({"dimension": "harmful", "trigger": "values"}, "choose at least one value"),
        ({"dimension": "harmful", "trigger": "values", "values": ["maybe"]}, "“maybe” is not"),
        ({"dimension": "correctness", "trigger": "values", "values": ["2"]}, "“2” is not"),
        ({"dimension": "correctness", "trigger": "values", "values": [True]}, "True is not"),
        ({"dimension": "depth", "trigger": "values", "values": [2]}, "has no named values"),
        ({"dimension": "harmful", "trigger": "disagreement", "tolerance": 1}, "a tolerance"),
        ({"dimension": "correctness", "trigger": "disagreement", "tolerance": -1}, "from 0"),
        ({"dimension": "correctness", "trigger": "disagreement", "tolerance": "1"}, "whole"),
        ({"dimension": "harmful", "trigger": "disagreement", "values": ["yes"]}, "only for"),
        ({"dimension": "harmful", "trigger": "never", "colour": 1}, "unknown field colour"),
        ("harmful", "No dimension"),
    ],
)
def test_bad_rules_are_refused_with_a_clear_message(draft, lead, rule, message):
    adjudication_rules_set(
        study=draft, actor=lead, rules=[{"dimension": "evidence", "trigger": "disagreement"}]
    )
    with pytest.raises(AdjudicationRuleError, match=message):
        adjudication_rules_set(study=draft, actor=lead, rules=[rule])
    # Nothing half-saved.
    assert rules_of(draft) == {"evidence": ("disagreement", [], 0)}


def test_one_rule_per_dimension(draft, lead):
    rule = {"dimension": "harmful", "trigger": "disagreement"}
    with pytest.raises(AdjudicationRuleError, match="one rule per dimension"):
        adjudication_rules_set(study=draft, actor=lead, rules=[rule, rule])


def test_values_are_stored_in_the_kinds_order(draft, lead):
    adjudication_rules_set(
        study=draft,
        actor=lead,
        rules=[{"dimension": "correctness", "trigger": "values", "values": [0, 2, 0]}],
    )
    assert rules_of(draft)["correctness"] == ("values", [2, 0], 0)


def test_rules_are_frozen_once_the_study_opens(draft, lead):
    services.study_open(study=draft, actor=lead)
    with pytest.raises(AdjudicationRuleError, match="frozen protocol"):
        adjudication_rules_set(
            study=draft, actor=lead, rules=[{"dimension": "harmful", "trigger": "disagreement"}]
        )
    assert rules_of(draft) == {}


def test_the_switch_is_for_an_open_study_with_a_reason(draft, lead):
    with pytest.raises(AdjudicationRuleError, match="not open yet"):
        adjudication_rule_switch(study=draft, actor=lead, dimension_key="harmful", reason="κ")
    services.study_open(study=draft, actor=lead)
    with pytest.raises(AdjudicationRuleError, match="Give the reason"):
        adjudication_rule_switch(study=draft, actor=lead, dimension_key="harmful", reason=" ")
    with pytest.raises(AdjudicationRuleError, match="no such dimension"):
        adjudication_rule_switch(study=draft, actor=lead, dimension_key="nope", reason="κ")
    rule = adjudication_rule_switch(
        study=draft, actor=lead, dimension_key="harmful", reason="κ 0.41 < 0.60"
    )
    assert rule.switched_at and rule.switched_by == lead and rule.trigger == "never"
    event = draft.events.get(kind=StudyEvent.Kind.ADJUDICATION_SWITCHED)
    assert event.reason == "Harmful: κ 0.41 < 0.60" and event.detail == {"dimension": "harmful"}
    with pytest.raises(AdjudicationRuleError, match="already"):
        adjudication_rule_switch(study=draft, actor=lead, dimension_key="harmful", reason="κ")


def test_the_rules_table_says_what_each_kind_allows(draft, lead):
    adjudication_rules_set(
        study=draft,
        actor=lead,
        rules=[{"dimension": "harmful", "trigger": "values", "values": ["yes"]}],
    )
    rows = {row["key"]: row for row in selectors.adjudication_rules_table(study=draft)}
    assert list(rows) == ["harmful", "harm_category", "correctness", "depth", "evidence"]
    assert rows["harmful"]["trigger"] == "values" and rows["harmful"]["values"] == ["yes"]
    assert rows["harmful"]["spread"] is False
    assert rows["depth"] == {**rows["depth"], "trigger": "never", "choices": [], "spread": True}


# --- the protocol ----------------------------------------------------------------------


def document(study) -> dict:
    return json.loads(b"".join(selectors.study_protocol_chunks(study=study)))


def fingerprint(study) -> str:
    return selectors.study_protocol_fingerprint(study=study)


def test_rules_are_in_the_protocol_and_its_fingerprint(draft, lead):
    before = fingerprint(draft)
    assert "adjudication" not in document(draft)
    # Rules of "never" only: the document and fingerprint of a study without rules.
    adjudication_rules_set(
        study=draft, actor=lead, rules=[{"dimension": "harmful", "trigger": "never"}]
    )
    assert fingerprint(draft) == before
    seen = {before}
    for rules in (
        [{"dimension": "harmful", "trigger": "values", "values": ["yes"]}],
        [{"dimension": "harmful", "trigger": "disagreement"}],
        [{"dimension": "correctness", "trigger": "disagreement", "tolerance": 0}],
        [{"dimension": "correctness", "trigger": "disagreement", "tolerance": 1}],
        [
            {"dimension": "correctness", "trigger": "disagreement", "tolerance": 1},
            {"dimension": "harmful", "trigger": "values", "values": ["yes"]},
        ],
    ):
        adjudication_rules_set(study=draft, actor=lead, rules=rules)
        seen.add(fingerprint(draft))
    assert len(seen) == 6
    assert document(draft)["adjudication"] == [
        {"dimension": "harmful", "trigger": "values", "values": ["yes"], "tolerance": 0},
        {"dimension": "correctness", "trigger": "disagreement", "values": [], "tolerance": 1},
    ]
    adjudication_rules_set(study=draft, actor=lead, rules=[])
    assert fingerprint(draft) == before


def test_a_study_without_rules_keeps_its_fingerprint(lead):
    """The document of a study without rules is the one written before adjudication
    existed: the same keys, and so the same bytes for the same study."""
    study = make_study(lead=lead, slug="old", cases=2, status=Study.Status.DRAFT, secret="s")
    assert set(document(study)) == {
        "format", "instructions", "rubric", "test_cases", "blinding", "success_criterion",
        "quality_control", "rating_screen",
    }  # fmt: skip
    opened = services.study_open(study=study, actor=lead)
    assert opened.protocol_fingerprint == fingerprint(study)


@pytest.mark.parametrize("role", [Membership.Role.RATER, Membership.Role.ADJUDICATOR])
def test_an_administrator_account_neither_rates_nor_adjudicates(draft, role):
    # Administrators coordinate every study: with the texts by system on the case pages
    # and the responses by label on a rating or adjudication screen, they would hold the key.
    admin = UserFactory(username=f"admin-{role}", is_staff=True)
    with pytest.raises(ApplicationError, match="administrator"):
        membership_add(study=draft, user=admin, role=role)
    assert not draft.memberships.filter(user=admin).exists()
