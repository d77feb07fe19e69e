"""The adjudicator's queue and the adjudication screen, as pages."""

import json

import pytest
from django.urls import reverse

from annotation.models import Adjudication
from studies.models import Membership, Study
from studies.models import TestCase as Case
from studies.services import membership_add

from ..factories import UserFactory
from ..payloads import SYSTEMS
from .adjudication_support import adjudication_world, resolved_payload

pytestmark = pytest.mark.django_db


def _screen(world):
    return reverse("annotation:adjudicate", args=[world.study.slug, world.adjudication.uuid])


def _draft(world):
    return reverse(
        "annotation:adjudication_draft", args=[world.study.slug, world.adjudication.uuid]
    )


def test_queue_lists_the_waiting_case_for_the_adjudicator(client):
    world = adjudication_world()
    client.force_login(world.adjudicator.user)
    page = client.get(reverse("annotation:adjudication_queue", args=[world.study.slug]))
    assert page.status_code == 200
    assert [row.case_id for row in page.context["waiting"]] == [world.case.case_id]
    assert _screen(world) in page.content.decode()


def test_queue_never_lists_a_case_the_person_rated(client):
    world = adjudication_world()
    rater = world.study.memberships.filter(role=Membership.Role.RATER).first()
    Membership.objects.filter(pk=rater.pk).update(role=Membership.Role.ADJUDICATOR)
    client.force_login(rater.user)
    page = client.get(reverse("annotation:adjudication_queue", args=[world.study.slug]))
    assert page.context["waiting"] == []
    assert client.get(_screen(world)).status_code == 404


def test_screen_shows_three_raters_side_by_side_with_the_disagreement(client):
    world = adjudication_world(systems=SYSTEMS)
    client.force_login(world.adjudicator.user)
    page = client.get(_screen(world))
    assert page.status_code == 200
    html = page.content.decode()
    screen = page.context["screen"]
    assert [r.pseudonym for r in screen.raters] == ["R-01", "R-02", "R-03"]
    assert [label for label, _, _ in screen.responses] == ["A", "B"]
    depth_a = next(row for row in screen.compared if row.key == "depth" and row.where == "A")
    assert depth_a.triggered and depth_a.differs
    assert len(depth_a.answers) == 3
    assert "note of rater 0" in html and "note of rater 2" in html
    # The form asks only for the dimensions sent for adjudication.
    assert [d["key"] for d in page.context["dimensions"]] == ["depth"]
    assert 'data-mode="adjudicate"' in html
    for system in SYSTEMS:
        assert system not in html


def test_the_screen_shows_the_case_content_warning_above_the_prompt(client):
    world = adjudication_world()
    client.force_login(world.adjudicator.user)
    assert 'id="content-warning-note"' not in client.get(_screen(world)).content.decode()
    Case.objects.filter(pk=world.case.pk).update(content_warning="Descriptions of <violence>.")
    html = client.get(_screen(world)).content.decode()
    assert 'id="content-warning-note"' in html
    assert html.index("Descriptions of &lt;violence&gt;.") < html.index('id="prompt"')


def test_posting_a_decision_resolves_the_case(client):
    world = adjudication_world()
    client.force_login(world.adjudicator.user)
    answer = client.post(
        _screen(world), {"payload": json.dumps(resolved_payload()), "version": "0"}
    )
    assert answer.status_code == 302
    world.adjudication.refresh_from_db()
    assert world.adjudication.status == Adjudication.Status.DONE
    queue = client.get(reverse("annotation:adjudication_queue", args=[world.study.slug]))
    assert [row.case_id for row in queue.context["decided"]] == [world.case.case_id]


def test_posting_without_a_reason_keeps_the_page_with_the_message(client):
    world = adjudication_world()
    client.force_login(world.adjudicator.user)
    answer = client.post(
        _screen(world), {"payload": json.dumps(resolved_payload(reason="")), "version": "0"}
    )
    assert answer.status_code == 400
    assert "Give the reason" in answer.content.decode()


def test_cannot_be_resolved_from_the_form(client):
    world = adjudication_world()
    client.force_login(world.adjudicator.user)
    payload = {"notes": "The raters read the prompt two ways.", "unresolvable": True}
    answer = client.post(_screen(world), {"payload": json.dumps(payload), "version": "0"})
    assert answer.status_code == 302
    world.adjudication.refresh_from_db()
    assert world.adjudication.status == Adjudication.Status.UNRESOLVABLE


def test_draft_autosave_and_the_stale_tab(client):
    world = adjudication_world()
    client.force_login(world.adjudicator.user)
    body = {"payload": resolved_payload(), "version": 0}
    saved = client.post(_draft(world), json.dumps(body), content_type="application/json")
    assert saved.status_code == 200 and saved.json()["version"] == 1
    stale = client.post(_draft(world), json.dumps(body), content_type="application/json")
    assert stale.status_code == 409
    assert stale.json()["stale"] is True and "another tab" in stale.json()["error"]
    # The submit from the stale tab is refused too, with the page's message.
    page = client.post(_screen(world), {"payload": json.dumps(resolved_payload()), "version": "0"})
    assert page.status_code == 409
    assert "saved from another tab" in page.content.decode()


def test_draft_signed_out_answers_json(client):
    world = adjudication_world()
    answer = client.post(_draft(world), "{}", content_type="application/json")
    assert answer.status_code == 401 and answer.json()["signed_out"] is True


def test_access_other_study_adjudicator_404_rater_403_coordinator_403(client):
    world = adjudication_world()
    other = adjudication_world(slug="adj-other")
    client.force_login(other.adjudicator.user)
    assert client.get(_screen(world)).status_code == 404
    assert (
        client.get(reverse("annotation:adjudication_queue", args=[world.study.slug])).status_code
        == 404
    )
    client.force_login(world.raters[0])
    assert client.get(_screen(world)).status_code == 403
    client.force_login(world.study.lead)
    assert client.get(_screen(world)).status_code == 403
    # Another study's adjudication, asked under this study's slug, does not exist here.
    client.force_login(world.adjudicator.user)
    wrong = reverse("annotation:adjudicate", args=[world.study.slug, other.adjudication.uuid])
    assert client.get(wrong).status_code == 404


def test_a_case_another_adjudicator_works_on_is_read_only(client):
    world = adjudication_world()
    Adjudication.objects.filter(pk=world.adjudication.pk).update(adjudicator=world.adjudicator)
    second = membership_add(study=world.study, user=UserFactory(), role=Membership.Role.ADJUDICATOR)
    client.force_login(second.user)
    page = client.get(_screen(world))
    assert page.status_code == 200 and page.context["readonly"]
    assert "A-01 is adjudicating" in page.content.decode()


def test_outcomes_page_offers_gold_only_before_opening(client):
    world = adjudication_world(status=Study.Status.PILOT)
    client.force_login(world.adjudicator.user)
    client.post(_screen(world), {"payload": json.dumps(resolved_payload()), "version": "0"})
    client.force_login(world.study.lead)
    page = client.get(reverse("annotation:adjudication_outcomes", args=[world.study.slug]))
    gold = reverse(
        "annotation:adjudication_make_gold", args=[world.study.slug, world.adjudication.uuid]
    )
    assert gold in page.content.decode()
    assert client.post(gold).status_code == 302
    world.case.refresh_from_db()
    assert world.case.purpose == "gold"
    Study.objects.filter(pk=world.study.pk).update(status=Study.Status.OPEN)
    page = client.get(reverse("annotation:adjudication_outcomes", args=[world.study.slug]))
    assert "frozen protocol" in page.content.decode()


def test_the_long_table_carries_the_adjudicated_answer_and_reason():
    from annotation import exports
    from annotation.services.adjudication import adjudication_resolve

    world = adjudication_world(systems=SYSTEMS)
    adjudication_resolve(
        adjudication=world.adjudication, adjudicator=world.adjudicator,
        payload=resolved_payload(depth=4, reason="Four distinct factors."), expected_version=0,
    )  # fmt: skip
    header, *rows = list(exports.long_rows(study=world.study))
    column = {name: header.index(name) for name in header}
    assert "system" not in column
    case_rows = [r for r in rows if r[column["test_case"]] == world.case.case_id]
    depth = {
        (r[column["rater"]], r[column["response_label"]]): r
        for r in case_rows
        if r[column["dimension"]] == "depth"
    }
    assert len(depth) == 6  # three raters, two responses
    scoring = {d.key: d for d in world.study.rubric.scoring_dimensions()}["depth"]
    world.adjudication.refresh_from_db()
    for (_, label), row in depth.items():
        resolved = world.adjudication.answers["responses"][label]["depth"]
        assert row[column["adjudicated_value"]] == scoring.cell_out(resolved)
        assert row[column["adjudication"]] == "done"
        assert row[column["adjudication_reason"]] == "Four distinct factors."
    others = [r for r in case_rows if r[column["dimension"]] != "depth"]
    assert {r[column["adjudicated_value"]] for r in others} == {""}
    text = "".join(exports.export_text(study=world.study, fmt=exports.LONG_CSV))
    for system in SYSTEMS:
        assert system not in text
