"""A pairwise preference reads in the words of the rater's form ("A much better") wherever a
person reads one: training feedback, the adjudication screen, the self-check, the QC page's
missed items and the gold file; never as a signed number. The kind's class says it."""

import pytest
from django.urls import reverse

from agreement.selectors import qc_quality_answers
from annotation.exports import gold_rows
from annotation.models import Adjudication, Assignment
from annotation.services import assignments_create_all, rating_submit, training
from annotation.services.participation import consent_record
from studies.models import Membership, Study
from studies.models import TestCase as Case
from studies.rubric import dimension_from_config
from studies.services import membership_add, study_create
from studies.services import test_cases_add as cases_add
from studies.services.quality import (
    ExpectedCell,
    expected_answers_set,
    quality_settings_update,
)

from ..factories import AdjudicationFactory, UserFactory, make_cases

pytestmark = pytest.mark.django_db

SYSTEMS = ("Zephyr-Alpha-7", "Quokka-Omega-3")
FIVE = ["A much better", "A slightly better", "Tie", "B slightly better", "B much better"]


def preference(labels=FIVE):
    return dimension_from_config(
        key="preference", name="Preference", kind="pairwise", config={"labels": labels}
    )


def test_the_kind_says_a_preference_in_the_words_of_the_form():
    kind = preference()
    assert kind.answer_text(kind.score({"choice": -2})) == "A much better"
    assert kind.answer_text(kind.score({"choice": 0})) == "Tie"
    # Read in key order: a flipped screen's "A much better" is the key's B.
    assert kind.answer_text(kind.score({"choice": -2}), flipped=True) == "B much better"
    assert kind.answer_text(None) == ""
    # Named sides (a gold item's systems, for its coordinator): the label says the name.
    names = {"A": "beta", "B": "alpha"}
    assert kind.given_text(kind.score({"choice": 1}), names=names) == "alpha slightly better"
    assert kind.given_text(kind.score({"choice": 0}), names=names) == "Tie"
    assert kind.given_text(None, names=names) == "no answer"
    # Labels that do not say "A" or "B" keep their words and name the side after them.
    other = preference(["First", "Same", "Second"])
    assert other.given_text(other.score({"choice": -1}), names=names) == "First (beta)"
    # The review pages show the words, without points for a kind outside the total.
    shown = kind.display(kind.score({"choice": 2}))
    assert shown["text"] == "B much better" and not shown["scored"]


def test_an_expected_preference_is_written_in_words_and_read_back():
    kind = preference()
    names = {"A": "beta", "B": "alpha"}
    for choices in ([-2], [-1, 0], [1, 2], [0], [-2, 2]):
        text = kind.expected_text({"choices": choices}, names=names)
        assert not any(ch.isdigit() for ch in text), text
        assert kind.expected_in(text, names=names) == {"choices": choices}
    assert kind.expected_text({"choices": [-1, 0]}, names=names) == "beta slightly better|Tie"
    # The form's own labels are read in key order, as are the values written before.
    assert kind.expected_in("A much better|-1") == {"choices": [-2, -1]}


def _pairwise_study(*, slug, raters=2, cases=3, side_mode="fixed"):
    lead = UserFactory()
    study = study_create(slug=slug, name="Pref", lead=lead, rubric_preset="pairwise")
    cases_add(study=study, systems=list(SYSTEMS), cases=make_cases(cases, SYSTEMS))
    Study.objects.filter(pk=study.pk).update(side_mode=side_mode)
    study.refresh_from_db()
    users = [UserFactory() for _ in range(raters)]
    for user in users:
        membership = membership_add(study=study, user=user, role=Membership.Role.RATER)
        consent_record(rater=membership, agreed=True, prior_knowledge=False)
    return study, users


def _open(study):
    for membership in study.memberships.filter(role=Membership.Role.RATER):
        assignments_create_all(study=study, rater=membership)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    study.refresh_from_db()


def _prefer(assignment, choice):
    rating_submit(
        assignment=assignment,
        payload={"case": {"preference": {"choice": choice}}, "confidence": "high"},
        any_version=True,
    )


def test_the_self_check_shows_a_preference_in_words(client):
    study, (user, _) = _pairwise_study(slug="pref-self")
    _open(study)
    first = Assignment.objects.filter(rater__user=user).order_by("position").first()
    _prefer(first, -2)
    client.force_login(user)
    page = client.get(reverse("annotation:self_check", args=[study.slug])).content.decode()
    table = page[
        page.index('id="scores-table"') : page.index("</table>", page.index("scores-table"))
    ]
    assert "A much better" in table
    assert ">-2<" not in table and "/0" not in table
    # A study without counted dimensions says nothing about counting factors.
    assert "count factors" not in page


def test_the_adjudication_screen_shows_each_raters_preference_in_words_in_key_order(client):
    study, users = _pairwise_study(slug="pref-adj", side_mode="balanced")
    _open(study)
    case = study.test_cases.order_by("position").first()
    assignments = list(Assignment.objects.filter(test_case=case).order_by("rater__pseudonym"))
    # Each rater preferred the response the key calls A, whichever side their screen showed.
    for assignment in assignments:
        _prefer(assignment, 2 if assignment.flipped else -2)
    assert {a.flipped for a in assignments} == {True, False}
    AdjudicationFactory(
        test_case=case, triggers={"preference": [Adjudication.Trigger.DISAGREEMENT]}
    )
    adjudicator = membership_add(study=study, user=UserFactory(), role=Membership.Role.ADJUDICATOR)
    client.force_login(adjudicator.user)
    adjudication = Adjudication.objects.get(test_case=case)
    page = client.get(
        reverse("annotation:adjudicate", args=[study.slug, adjudication.uuid])
    ).content.decode()
    compared = page[page.index("<table") :]
    assert compared.count("A much better</span>") >= len(assignments)
    assert "B much better</span>" not in compared
    assert "0 / 0 points" not in page and "-2</span>" not in page


def test_the_qc_details_and_the_gold_file_say_a_preference_in_words():
    study, (user,) = _pairwise_study(slug="pref-gold", raters=1, cases=4)
    gold = study.test_cases.order_by("position").last()
    expected_answers_set(
        test_case=gold,
        purpose=Case.Purpose.GOLD,
        cells=[ExpectedCell("", "preference", SYSTEMS[1])],
        explanation="",
        actor=study.lead,
    )
    quality_settings_update(study=study, values={"gold_percent": 50}, actor=study.lead)
    _open(study)
    assignment = Assignment.objects.get(rater__user=user, test_case=gold)
    _prefer(assignment, 0)
    (answer,) = qc_quality_answers(study=study)
    (detail,) = answer.details
    # "expected Quokka-Omega-3, given Tie", not "given 0".
    assert (detail["expected"], detail["given"], detail["met"]) == (SYSTEMS[1], "Tie", False)
    header, *rows = list(gold_rows(study=study))
    assert [row[header.index("given")] for row in rows] == ["Tie"]


def test_training_feedback_shows_both_preferences_in_words(client):
    study, (user, _) = _pairwise_study(slug="pref-train")
    item = training.training_item_save(
        study=study, kind="training", title="Worked", prompt="p", responses=["one", "two"],
        explanation="Why",
    )  # fmt: skip
    training.training_item_key_save(
        item=item, payload={"case": {"preference": {"choice": 1}}, "confidence": "high"}
    )
    _open(study)
    membership = Membership.objects.get(user=user)
    training.training_answer_submit(
        rater=membership, item=item,
        payload={"case": {"preference": {"choice": -2}}, "confidence": "high"},
    )  # fmt: skip
    client.force_login(user)
    page = client.get(
        reverse("annotation:training_item", args=[study.slug, item.uuid])
    ).content.decode()
    assert "A much better" in page and "B slightly better" in page
    assert "/ 0 points" not in page
