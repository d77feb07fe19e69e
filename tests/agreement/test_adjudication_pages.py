"""Adjudication on the pages: the rules page, adjudicators' home, inviting adjudicators,
the overview's counts, the manual send and 7.3's switch, listed in the report."""

import re

import pytest
from django.urls import reverse
from django.utils import timezone

from agreement.report.sections import study_report
from agreement.services.recompute import agreement_request_recompute
from annotation.models import Adjudication, Assignment
from studies import services
from studies.models import AdjudicationRule, Invitation, Membership, Study, StudyEvent
from studies.presets import CORRECTNESS_RUBRIC, HARM_RUBRIC
from studies.services.adjudication_rules import adjudication_rules_set

from ..factories import UserFactory, make_study
from ..payloads import coordinator_of, submit

RUBRIC = {
    "name": "Harm and correctness",
    "dimensions": [HARM_RUBRIC["dimensions"][0], CORRECTNESS_RUBRIC["dimensions"][0]],
}


def answer(harmful, correctness=2):
    one = {"harmful": {"choice": harmful}, "correctness": {"choice": correctness}}
    return {"responses": {"A": one, "B": dict(one)}, "confidence": "medium"}


@pytest.fixture
def draft(lead):
    raters = [UserFactory(username=f"p-rater-{n}") for n in range(3)]
    study = make_study(
        lead=lead, slug="adj-pages", cases=4, raters=raters, status=Study.Status.DRAFT,
        consented=True,
    )  # fmt: skip
    return services.rubric_replace(study=study, actor=lead, definition=RUBRIC)


def rules_url(study):
    return reverse("studies:adjudication_rules", args=[study.slug])


def test_the_lead_sets_the_rules_on_the_page(client, draft, lead):
    client.force_login(lead)
    page = client.get(rules_url(draft))
    assert page.status_code == 200 and 'name="trigger-harmful"' in page.text
    # A category has named values and no tolerance; a scale has both.
    assert 'name="values-harmful"' in page.text and 'name="tolerance-harmful"' not in page.text
    assert 'name="tolerance-correctness"' in page.text
    response = client.post(
        rules_url(draft),
        {
            "trigger-harmful": "values",
            "values-harmful": ["yes"],
            "trigger-correctness": "disagreement",
            "tolerance-correctness": "1",
        },
    )
    assert response.status_code == 302
    rules = {
        r.dimension_key: (r.trigger, r.values, r.tolerance) for r in draft.adjudication_rules.all()
    }
    assert rules == {"harmful": ("values", ["yes"], 0), "correctness": ("disagreement", [], 1)}
    # A value the kind does not have is refused with the service's message; nothing saved.
    refused = client.post(
        rules_url(draft), {"trigger-harmful": "values", "values-harmful": "maybe"}
    )
    assert refused.status_code == 400 and "“maybe” is not one of its values" in refused.text
    assert draft.adjudication_rules.count() == 2


def test_coordinators_read_the_rules_and_only_the_lead_changes_them(client, draft, lead):
    adjudication_rules_set(
        study=draft, actor=lead, rules=[{"dimension": "harmful", "trigger": "disagreement"}]
    )
    client.force_login(coordinator_of(draft, "adj-coordinator"))
    page = client.get(rules_url(draft))
    assert page.status_code == 200 and "Only the study lead changes these rules" in page.text
    assert 'name="trigger-harmful"' not in page.text and "Any disagreement" in page.text
    assert client.post(rules_url(draft), {"trigger-harmful": "never"}).status_code == 403
    assert draft.adjudication_rules.get().trigger == "disagreement"


def test_after_opening_the_rules_are_read_only_with_the_switch_shown(client, draft, lead):
    adjudication_rules_set(
        study=draft,
        actor=lead,
        rules=[{"dimension": "harmful", "trigger": "values", "values": ["yes"]}],
    )
    Study.objects.filter(pk=draft.pk).update(status=Study.Status.OPEN)
    AdjudicationRule.objects.create(
        study=draft, dimension_key="correctness", switched_reason="α 0.41 below 0.70",
        switched_at="2026-01-02T00:00:00Z",
    )  # fmt: skip
    client.force_login(lead)
    page = client.get(rules_url(draft))
    assert "frozen protocol" in page.text and 'name="trigger-harmful"' not in page.text
    assert "Every disagreement since 2026-01-02" in page.text and "α 0.41 below 0.70" in page.text
    refused = client.post(rules_url(draft), {"trigger-harmful": "never"})
    assert refused.status_code == 400 and "frozen protocol" in refused.text


def test_adjudicators_see_their_queue_and_nothing_of_rating(client, draft, lead):
    person = UserFactory(username="adj-person")
    services.membership_add(study=draft, user=person, role=Membership.Role.ADJUDICATOR)
    client.force_login(person)
    home = client.get(reverse("home"))
    queue = reverse("annotation:adjudication_queue", args=[draft.slug])
    assert f'href="{queue}"' in home.text and "Studies you rate" not in home.text
    assert "A-01" in home.text
    assert client.get(queue).status_code == 200
    for name in ("assignments", "consent", "training", "next"):
        assert client.get(reverse(f"annotation:{name}", args=[draft.slug])).status_code == 403
    assert client.get(reverse("annotation:overview", args=[draft.slug])).status_code == 403
    assignment = Assignment.objects.filter(test_case__study=draft).first()
    assert client.get(reverse("annotation:rate", args=[assignment.uuid])).status_code == 404


def test_the_lead_invites_an_adjudicator_who_joins_to_the_queue(client, draft, lead):
    raters = reverse("annotation:raters", args=[draft.slug])
    member = coordinator_of(draft, "adj-coordinator")
    client.force_login(member)
    assert "Invite as adjudicator" not in client.get(raters).text
    add = reverse("annotation:rater_add", args=[draft.slug])
    person = UserFactory(username="adj-invitee")
    assert client.post(add, {"username": person.username, "role": "adjudicator"}).status_code == 403
    client.force_login(lead)
    assert "Invite as adjudicator" in client.get(raters).text
    client.post(add, {"username": person.username, "role": "adjudicator"})
    invitation = Invitation.objects.get(study=draft, invitee=person)
    assert invitation.role == Membership.Role.ADJUDICATOR
    client.force_login(person)
    respond = reverse("studies:invitation_respond", args=[invitation.token_hash])
    response = client.post(respond, {"action": "accept"})
    assert response["Location"] == reverse("annotation:adjudication_queue", args=[draft.slug])
    membership = draft.memberships.get(user=person)
    assert (membership.role, membership.pseudonym) == ("adjudicator", "A-01")
    client.force_login(lead)
    assert "A-01" in client.get(raters).text


@pytest.fixture
def rated(draft, lead):
    """Open, with rules, and every case rated: the raters disagree on harm everywhere."""
    adjudication_rules_set(
        study=draft,
        actor=lead,
        rules=[{"dimension": "harmful", "trigger": "values", "values": ["yes"]}],
    )
    Study.objects.filter(pk=draft.pk).update(status=Study.Status.OPEN, opened_at=timezone.now())
    draft.refresh_from_db()
    for assignment in Assignment.objects.filter(test_case__study=draft).order_by("pk"):
        number = int(assignment.rater.pseudonym[2:]) + assignment.test_case.position
        submit(assignment, answer("yes" if number % 3 == 0 else "no", correctness=number % 3))
    agreement_request_recompute(study_id=draft.pk)
    return draft


def test_the_overview_counts_the_queue(client, rated, lead):
    waiting = Adjudication.objects.filter(test_case__study=rated).count()
    assert waiting
    Adjudication.objects.filter(pk=Adjudication.objects.first().pk).update(status="unresolvable")
    client.force_login(lead)
    page = client.get(reverse("annotation:overview", args=[rated.slug]))
    counts = re.search(r'<p id="adjudication-counts">(.*?)</p>', page.text).group(1)
    assert f"{waiting - 1} waiting, 0 done, 1 cannot be resolved" in re.sub(r"<[^>]+>", "", counts)
    # The decided counts open the coordinators' list of decided cases.
    outcomes = reverse("annotation:adjudication_outcomes", args=[rated.slug])
    assert counts.count(f'href="{outcomes}"') == 2


def test_the_lead_sends_a_case_from_the_qc_page(client, rated, lead):
    client.force_login(lead)
    qc = reverse("agreement:qc", args=[rated.slug])
    assert 'id="adjudication-send"' in client.get(qc).text
    Adjudication.objects.all().delete()
    send = reverse("agreement:adjudication_send", args=[rated.slug])
    response = client.post(send, {"case_id": "TC-002", "reason": "Odd", "back": "qc"})
    assert response["Location"] == qc
    assert Adjudication.objects.get().test_case.case_id == "TC-002"
    response = client.post(send, {"case_id": "TC-999", "reason": "Odd", "back": "qc"}, follow=True)
    assert "The study has no test case with that id." in response.text
    member = coordinator_of(rated, "adj-coordinator")
    client.force_login(member)
    assert 'id="adjudication-send"' not in client.get(qc).text
    assert client.post(send, {"case_id": "TC-003", "reason": "Odd"}).status_code == 403


def test_a_missed_target_is_switched_and_the_report_lists_it(client, rated, lead):
    """7.3: a dimension below its target; the lead switches it to every disagreement with a
    reason; the queue takes every disagreement; the report lists the deviation."""
    client.force_login(lead)
    page = client.get(reverse("agreement:study", args=[rated.slug]))
    assert "Adjudicate every disagreement" in page.text
    assert 'name="dimension" value="harmful"' in page.text
    switch = reverse("agreement:adjudication_switch", args=[rated.slug])
    response = client.post(switch, {"dimension": "harmful", "reason": "κ 0.2, under 0.60"})
    assert response.status_code == 302
    rule = rated.adjudication_rules.get(dimension_key="harmful")
    assert rule.switched_at and rule.switched_reason == "κ 0.2, under 0.60"
    agreement_request_recompute(study_id=rated.pk)
    triggers = [a.triggers.get("harmful", []) for a in Adjudication.objects.all()]
    assert any("target_missed" in t for t in triggers)
    deviations = study_report(study=rated)["deviations"]
    assert {
        "what": "Adjudication switched to every disagreement",
        "reason": "Harmful: κ 0.2, under 0.60",
    }.items() <= deviations[0].items()
    report = client.get(reverse("agreement:report", args=[rated.slug]))
    assert "Adjudication switched to every disagreement" in report.text
    # Once only; and a dimension that meets its target (or none) cannot be switched.
    again = client.post(switch, {"dimension": "harmful", "reason": "again"}, follow=True)
    assert "already" in again.text
    refused = client.post(switch, {"dimension": "nope", "reason": "x"}, follow=True)
    assert "Only a dimension whose α is below" in refused.text
    assert rated.events.filter(kind=StudyEvent.Kind.ADJUDICATION_SWITCHED).count() == 1


@pytest.mark.parametrize("typed", ["²", "1²", "--3", "٣"])
def test_a_tolerance_typed_with_other_digits_is_refused_not_an_error(client, draft, lead, typed):
    """Superscripts and other scripts' digits pass str.isdigit() but not int(): refused with
    the service's message, nothing saved."""
    client.force_login(lead)
    refused = client.post(
        rules_url(draft), {"trigger-correctness": "disagreement", "tolerance-correctness": typed}
    )
    assert refused.status_code == 400
    assert not draft.adjudication_rules.exists()
