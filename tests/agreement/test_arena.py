"""Varying pairings end to end: cases comparing two of four systems, rated on the screen,
then the win matrix and the Bradley-Terry ranking after unblinding."""

import json
from itertools import combinations

import pytest
from django.urls import reverse

from agreement.stats.ranking import bradley_terry
from annotation.services import assignments_create_all
from annotation.services.participation import consent_record
from studies import services as study_services
from studies.models import Membership, Study
from studies.selectors import study_open_problems
from studies.services import membership_add, study_create

from ..factories import UserFactory
from ..payloads import close_and_unblind
from .analysis_pages import computed_page

SYSTEMS = ["delta", "echo", "foxtrot", "golf"]
# How good each system is: the rater prefers the better one of each pair.
QUALITY = {"delta": 4, "echo": 3, "foxtrot": 2, "golf": 1}


def arena_cases():
    """Each of the six pairings twice; each case carries the responses of its two systems."""
    cases = []
    for n, (one, two) in enumerate(list(combinations(SYSTEMS, 2)) * 2, 1):
        cases.append(
            {
                "id": f"AR-{n:02d}",
                "prompt": f"Question {n}",
                "context": "First step\nSecond step",
                "stratum": "",
                "responses": {one: f"Candidate one for {n}.", two: f"Candidate two for {n}."},
            }
        )
    return cases


@pytest.fixture
def arena(db):
    lead = UserFactory(username="arena-lead")
    study = study_create(
        slug="arena", name="Arena", lead=lead, rubric_preset="pairwise", side_mode="balanced"
    )
    # Imported as a file: each JSONL line's responses are that case's two systems.
    data = "\n".join(
        json.dumps({k: case[k] for k in ("id", "prompt", "context", "responses")})
        for case in arena_cases()
    ).encode()
    study_services.test_cases_import(study=study, actor=lead, filename="arena.jsonl", data=data)
    raters = [UserFactory(username=f"arena-rater-{n}") for n in range(3)]
    for user in raters:
        membership = membership_add(study=study, user=user, role=Membership.Role.RATER)
        assignments_create_all(study=study, rater=membership)
        consent_record(rater=membership, agreed=True, prior_knowledge=False)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    study.refresh_from_db()
    return study, raters


def test_each_case_is_blinded_among_its_own_two_systems(arena):
    study, _ = arena
    assert not any("compares two" in p for p in study_open_problems(study=study))
    for case in study.test_cases.prefetch_related("labels__response__system"):
        labels = {label.label: label.response.system.name for label in case.labels.all()}
        assert set(labels) == {"A", "B"}
        assert set(labels.values()) < set(SYSTEMS)
    # Across the cases the first system of a pairing is shown as A sometimes, B other times.
    shown_a = {(case.labels.get(label="A").response.system.name) for case in study.test_cases.all()}
    assert len(shown_a) >= 3


def test_varying_pairings_rated_on_the_screen_give_the_win_matrix_and_ranking(client, arena):
    study, raters = arena
    for user in raters:
        client.force_login(user)
        membership = study.memberships.get(user=user)
        flipped = 0
        for assignment in membership.assignments.select_related("test_case"):
            page = client.get(reverse("annotation:rate", args=[assignment.uuid]))
            html = page.content.decode()
            assert page.status_code == 200
            assert not any(name in html for name in SYSTEMS)
            labels = {
                label.label: label.response.system.name
                for label in assignment.test_case.labels.select_related("response__system")
            }
            better_is_a = QUALITY[labels["A"]] > QUALITY[labels["B"]]
            key_choice = -2 if better_is_a else 2
            # On a flipped screen the key's A is shown second: the rater clicks that side.
            choice = -key_choice if assignment.flipped else key_choice
            flipped += assignment.flipped
            response = client.post(
                reverse("annotation:rate", args=[assignment.uuid]),
                {
                    "payload": json.dumps(
                        {"case": {"preference": {"choice": choice}}, "confidence": "high"}
                    ),
                    "version": str(assignment.version),
                },
            )
            assert response.status_code in (200, 302), response.content[:500]
        # Balanced: half of each rater's twelve screens show the pair the other way round.
        assert flipped == 6

    client.force_login(study.lead)
    before = client.get(reverse("agreement:ranking", args=[study.slug]))
    assert "once the study is unblinded" in before.content.decode()
    assert not any(name in before.content.decode() for name in SYSTEMS)

    close_and_unblind(study)
    page = computed_page(client, "agreement:ranking", study.slug)
    arena_view = page.context["arena"]
    assert arena_view["available"] and arena_view["n_comparisons"] == 36
    cells = {row["system"]: row["cells"] for row in arena_view["matrix"]}
    index = {name: i for i, name in enumerate(arena_view["systems"])}
    # Each pairing: two cases x three raters = six comparisons, all won by the better system.
    assert cells["delta"][index["golf"]]["wins"] == 6
    assert cells["golf"][index["delta"]]["wins"] == 0
    assert cells["golf"][index["delta"]]["losses"] == 6
    # Perfect separation has no finite maximum-likelihood fit: said, not hidden.
    assert arena_view["ranking"] is None and "cannot rank" in arena_view["problem"]


def test_ranking_follows_the_preferences_and_equals_the_direct_fit(client, arena):
    study, raters = arena
    from annotation.services import rating_submit

    # The better system of a pairing wins five of its six comparisons and the worse one the
    # first: every system beats and loses to another, so the fit exists, and its order is
    # the systems' quality.
    upset_pairings = set()
    expected = ([], [], [], [])
    for user in raters:
        membership = study.memberships.get(user=user)
        for assignment in membership.assignments.select_related("test_case"):
            labels = {
                label.label: label.response.system.name
                for label in assignment.test_case.labels.select_related("response__system")
            }
            pairing = frozenset(labels.values())
            better, worse = sorted(pairing, key=QUALITY.get, reverse=True)
            winner = better if pairing in upset_pairings else worse
            upset_pairings.add(pairing)
            prefers_a = labels["A"] == winner
            key_choice = -1 if prefers_a else 1
            choice = -key_choice if assignment.flipped else key_choice
            rating_submit(
                assignment=assignment,
                payload={"case": {"preference": {"choice": choice}}, "confidence": "high"},
                any_version=True,
            )
            expected[0].append(SYSTEMS.index(labels["A"]))
            expected[1].append(SYSTEMS.index(labels["B"]))
            expected[2].append(1.0 if prefers_a else 0.0)
            expected[3].append(assignment.test_case_id)
    assert len(upset_pairings) == 6 and len(expected[2]) == 36
    close_and_unblind(study)
    client.force_login(study.lead)
    arena_view = computed_page(client, "agreement:ranking", study.slug).context["arena"]
    direct = bradley_terry(*expected[:3], len(SYSTEMS), items=expected[3], n_resamples=0)
    assert arena_view["ranking"] is not None, arena_view["problem"]
    scores = {row["system"]: row["score"] for row in arena_view["ranking"]}
    for i, name in enumerate(SYSTEMS):
        assert scores[name] == pytest.approx(direct.scores[i])
    assert [row["system"] for row in arena_view["ranking"]] == SYSTEMS  # best first
    assert arena_view["ranking"][0]["system"] == SYSTEMS[int(direct.order[0])]
