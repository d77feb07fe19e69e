"""Gold items (QC-001) and attention checks (QC-002): scored after every submission, the
automatic pause through the rating views, and the administrator's reinstatement."""

import json

import pytest
from django.urls import reverse

from agreement.models import StudyAgreement
from agreement.selectors import qc_quality_answers
from annotation.models import Assignment
from annotation.services import assignments_create_all
from annotation.services.participation import consent_record
from studies.models import Membership, Study, StudyEvent
from studies.models import TestCase as Case
from studies.services import membership_add, study_create
from studies.services import test_cases_add as cases_add
from studies.services.quality import (
    ExpectedCell,
    attention_check_create,
    expected_answers_set,
    quality_settings_update,
)
from tests.payloads import response_scores

from ..factories import UserFactory, make_cases

pytestmark = pytest.mark.django_db(transaction=True)

SYSTEMS = ("baseline", "improved")


def good(confidence="high"):
    """Answers that meet the gold key below: depth 6+ (5 points) and every evidence box."""
    return {
        "responses": {label: response_scores(depth=6) for label in "AB"},
        "confidence": confidence,
    }


def bad(confidence="high"):
    return {
        "responses": {label: response_scores(depth=0, evidence=(False,) * 3) for label in "AB"},
        "confidence": confidence,
    }


def gold_study(*, sample=10, gold=6, attention=0, raters=1, gold_percent=50):
    lead = UserFactory()
    study = study_create(slug=f"reasoning-{lead.username}", name="Reasoning", lead=lead)
    cases = make_cases(sample + gold)
    for case in cases[sample:]:
        case["id"] = f"Q-{case['id']}"
    cases_add(study=study, systems=list(SYSTEMS), cases=cases)
    for case in cases[sample:]:
        test_case = study.test_cases.get(case_id=case["id"])
        cells = [ExpectedCell(s, "depth", "5") for s in SYSTEMS]
        cells += [ExpectedCell(s, "evidence", "yes;yes;yes") for s in SYSTEMS]
        expected_answers_set(
            test_case=test_case,
            purpose=Case.Purpose.GOLD,
            cells=cells,
            explanation="Six factors are listed.",
            actor=lead,
        )
    for n in range(attention):
        attention_check_create(
            study=study, case_id=f"X-{n}", prompt="Should the lab do Y?", text="", actor=lead
        )
    quality_settings_update(
        study=study, values={"gold_percent": gold_percent, "attention_every": 5}, actor=lead
    )
    users = [UserFactory() for _ in range(raters)]
    for user in users:
        membership = membership_add(study=study, user=user, role=Membership.Role.RATER)
        assignments_create_all(study=study, rater=membership)
        consent_record(rater=membership, agreed=True, prior_knowledge=False)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    study.refresh_from_db()
    return study, users


def post(client, assignment, payload):
    assignment.refresh_from_db()
    return client.post(
        reverse("annotation:rate", args=[assignment.uuid]),
        {"payload": json.dumps(payload), "version": str(assignment.version)},
    )


def queue(user, study):
    return list(
        Assignment.objects.filter(rater__user=user, rater__study=study)
        .select_related("test_case")
        .order_by("position")
    )


def test_gold_items_are_mixed_in_never_first_never_two_in_a_row():
    study, (user,) = gold_study(sample=10, gold=6)
    purposes = [a.test_case.purpose for a in queue(user, study)]
    # 50% of the screens: as many gold items as sample cases, capped by the 6 there are.
    assert purposes.count("gold") == 6 and purposes.count("sample") == 10
    assert purposes[0] == "sample"
    assert all(not (a == b == "gold") for a, b in zip(purposes, purposes[1:], strict=False))
    # Seeded: the same study and rater give the same queue.
    assert [a.position for a in queue(user, study)] == list(range(16))


def test_gold_items_follow_the_rate_and_a_rater_never_gets_one_twice():
    study, (user,) = gold_study(sample=18, gold=6, gold_percent=10)
    cases = [a.test_case for a in queue(user, study)]
    # 10% of the screens: 18 sample cases and 2 gold items.
    assert sum(c.purpose == "gold" for c in cases) == 2
    assert len({c.pk for c in cases}) == len(cases)


def test_gold_items_are_left_out_of_agreement():
    study, users = gold_study(sample=3, gold=3, raters=2, gold_percent=50)
    for user in users:
        for assignment in queue(user, study):
            from annotation.services import rating_submit

            rating_submit(assignment=assignment, payload=good(), any_version=True)
    result = StudyAgreement.objects.get(study=study)
    # Three sample cases with two responses each: gold ratings are not units.
    assert result.result["left_out"]["excluded_rater_ratings"] == 0
    assert result.n_ratings == 2 * 3 * 2


def test_a_rater_below_70_percent_on_five_gold_items_is_paused_through_the_views(client):
    study, (user,) = gold_study(sample=10, gold=6)
    membership = Membership.objects.get(user=user, study=study)
    client.force_login(user)
    gold_seen = 0
    for assignment in queue(user, study):
        is_gold = assignment.test_case.purpose == "gold"
        response = post(client, assignment, bad() if is_gold else good())
        assert response.status_code == 302
        gold_seen += is_gold
        membership.refresh_from_db()
        if gold_seen < 5:
            assert membership.status == Membership.Status.ACTIVE
        else:
            break
    # Paused right after the fifth gold item, by the worker, with the evidence recorded.
    assert membership.status == Membership.Status.PAUSED
    assert response["Location"] == reverse("annotation:assignments", args=[study.slug])
    event = StudyEvent.objects.get(kind=StudyEvent.Kind.RATER_PAUSED, membership=membership)
    assert event.actor is None and event.detail["automatic"] and event.detail["rule"] == "QC-001"
    assert len(event.detail["evidence"]["missed"]) == 5
    from studies.selectors import study_setup_events

    history = study_setup_events(study=study)
    assert any(
        row["who"] == "(quality control)" and "paused automatically" in row["what"]
        for row in history
    )
    missed = event.detail["evidence"]["missed"][0]["details"][0]
    assert {missed["expected"], missed["given"]} == {"5", "0"}
    page = client.get(response["Location"]).text
    assert "on hold" in page
    # No next item, and a submission is refused by the service.
    assert client.get(reverse("annotation:next", args=[study.slug]))["Location"] == reverse(
        "annotation:assignments", args=[study.slug]
    )
    remaining = [a for a in queue(user, study) if a.status != Assignment.Status.SUBMITTED]
    refused = post(client, remaining[0], good())
    assert refused.status_code == 400 and "on hold" in refused.text
    remaining[0].refresh_from_db()
    assert remaining[0].status != Assignment.Status.SUBMITTED

    # An administrator sees the flag with the evidence and reinstates, with a reason.
    admin = UserFactory(is_staff=True)
    client.force_login(admin)
    qc_page = client.get(reverse("agreement:qc", args=[study.slug])).text
    assert "gold accuracy 0% on 5 items" in qc_page
    assert "Q-TC-" in qc_page  # which items were missed
    assert "data-time-chart" in qc_page and "by active seconds: 0 s:" in qc_page  # time
    reinstated = client.post(
        reverse("agreement:qc", args=[study.slug]),
        {"rater": membership.pseudonym, "action": "reinstate", "reason": "Retrained on gold"},
    )
    assert reinstated.status_code == 302
    membership.refresh_from_db()
    assert membership.status == Membership.Status.ACTIVE
    kinds = list(study.events.filter(membership=membership).values_list("kind", flat=True))
    assert StudyEvent.Kind.RATER_REINSTATED in kinds
    # Reinstated: a fresh start. The next (good) submission does not pause again.
    client.force_login(user)
    assert post(client, remaining[0], good()).status_code == 302
    membership.refresh_from_db()
    assert membership.status == Membership.Status.ACTIVE


def _half(evidence_a=False, depth_b=6):
    """Depth met on A (and on B unless ``depth_b`` is low); evidence met only if asked."""
    return {
        "responses": {
            "A": response_scores(depth=6, evidence=(True, True, evidence_a)),
            "B": response_scores(depth=depth_b, evidence=(True, True, False)),
        },
        "confidence": "low",
    }


@pytest.mark.parametrize(
    ("payloads", "paused"),
    [
        # Four expected answers per item; accuracy is the share met over the items.
        (["bad"] * 4, False),  # 0% but only four gold items: under the minimum of five
        (["half"] * 3 + ["good"] * 2, False),  # 6 + 8 = 14 of 20: 70%, not below
        (["half"] * 2 + ["quarter"] + ["good"] * 2, True),  # 4 + 1 + 8 = 13 of 20: 65%
    ],
)
def test_the_gold_rule_at_its_thresholds(payloads, paused):
    from annotation.services import rating_submit

    study, (user,) = gold_study(sample=10, gold=6)
    membership = Membership.objects.get(user=user, study=study)
    golds = [a for a in queue(user, study) if a.test_case.purpose == "gold"]
    answers = {"bad": bad(), "good": good(), "half": _half(), "quarter": _half(depth_b=0)}
    for assignment, name in zip(golds, payloads, strict=False):
        rating_submit(assignment=assignment, payload=answers[name], any_version=True)
    membership.refresh_from_db()
    expected = Membership.Status.PAUSED if paused else Membership.Status.ACTIVE
    assert membership.status == expected


def test_attention_checks_expect_the_lowest_score_and_two_misses_flag():
    from annotation.services import rating_submit

    study, (user,) = gold_study(sample=10, gold=0, attention=2, gold_percent=0)
    checks = [a for a in queue(user, study) if a.test_case.purpose == "attention"]
    assert len(checks) == 2  # one per five items, as set
    lowest = {
        "responses": {
            label: response_scores(depth=0, evidence=(False,) * 3, alternatives=0, actions=0)
            | {"structure": {"checked": [False] * 3}}
            for label in "AB"
        },
        "confidence": "high",
    }
    rating_submit(assignment=checks[0], payload=lowest, any_version=True)
    answers = qc_quality_answers(study=study)
    assert [a.correct for a in answers] == [True]
    rating_submit(assignment=checks[0], payload=good(), any_version=True)
    rating_submit(assignment=checks[1], payload=good(), any_version=True)
    qc = StudyAgreement.objects.get(study=study).result["qc"]
    rater = Membership.objects.get(user=user).pseudonym
    assert "missed 2 attention checks" in qc[rater]["flags"]
    # A flag for review only: the rater stays active.
    assert Membership.objects.get(user=user).status == Membership.Status.ACTIVE


def test_gold_answers_have_their_own_export_and_stay_out_of_the_long_table():
    from annotation.exports import gold_rows, long_rows
    from annotation.services import rating_submit

    study, (user,) = gold_study(sample=2, gold=2, gold_percent=50)
    for assignment in queue(user, study):
        payload = bad() if assignment.test_case.purpose == "gold" else good()
        rating_submit(assignment=assignment, payload=payload, any_version=True)
    long_header, *long_table = list(long_rows(study=study))
    long_cases = {row[long_header.index("test_case")] for row in long_table}
    assert long_cases == {"TC-001", "TC-002"}
    header, *rows = list(gold_rows(study=study))
    assert header[:4] == ["rater", "rater_status", "test_case", "purpose"]
    # Two gold items, four expected answers each, none met; no system named while blinded.
    assert len(rows) == 8 and {row[8] for row in rows} == {"no"}
    assert {row[6] for row in rows if row[5] == "depth"} == {"5"}
    assert "system" not in header


@pytest.mark.parametrize("feedback", [False, True])
def test_a_missed_gold_item_is_explained_only_if_the_study_gives_feedback(client, feedback):
    from studies.models import QualitySettings

    study, (user,) = gold_study(sample=4, gold=2)
    QualitySettings.objects.filter(study=study).update(gold_feedback=feedback)
    client.force_login(user)
    golds = [a for a in queue(user, study) if a.test_case.purpose == "gold"]
    response = post(client, golds[0], bad())
    page = client.get(response["Location"]).text
    assert ("Six factors are listed." in page) is feedback
    # A gold item answered right is never explained.
    page = client.get(post(client, golds[1], good())["Location"]).text
    assert "Six factors are listed." not in page


def test_an_admin_dismisses_a_flag_with_a_reason_and_it_is_in_the_history(client):
    from annotation.services import rating_submit
    from studies.selectors import study_setup_events

    study, (user,) = gold_study(sample=10, gold=0, attention=2, gold_percent=0)
    for assignment in queue(user, study):
        rating_submit(assignment=assignment, payload=good(), any_version=True)
    membership = Membership.objects.get(user=user)
    admin = UserFactory(is_staff=True)
    client.force_login(admin)
    url = reverse("agreement:qc", args=[study.slug])
    no_reason = client.post(url, {"rater": membership.pseudonym, "action": "dismiss"})
    assert no_reason.status_code == 400
    response = client.post(
        url,
        {"rater": membership.pseudonym, "action": "dismiss", "reason": "Checks were unclear"},
    )
    assert response.status_code == 302
    page = client.get(url).text
    assert "<s>missed 2 attention checks</s> (dismissed)" in page
    event = StudyEvent.objects.get(kind=StudyEvent.Kind.RATER_FLAG_DISMISSED)
    assert "missed 2 attention checks" in event.detail["flags"]
    membership.refresh_from_db()
    assert membership.status == Membership.Status.ACTIVE
    history = [row["what"] for row in study_setup_events(study=study)]
    assert any("flag dismissed (Checks were unclear)" in text for text in history)
    # Nothing left to dismiss: refused, and said so.
    again = client.post(url, {"rater": membership.pseudonym, "action": "dismiss", "reason": "x"})
    assert again.status_code == 400 and "no open flag" in again.text


def test_position_bias_reads_the_pairwise_preference_as_shown():
    from agreement.selectors import qc_case_records
    from annotation.services import rating_submit

    lead = UserFactory()
    study = study_create(slug="pref-qc", name="Pref", lead=lead, rubric_preset="pairwise")
    cases_add(study=study, systems=list(SYSTEMS), cases=make_cases(4))
    study.side_mode = "balanced"
    study.save(update_fields=["side_mode"])
    user = UserFactory()
    membership = membership_add(study=study, user=user, role=Membership.Role.RATER)
    assignments_create_all(study=study, rater=membership)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    # Always the response shown first, whichever system it was (half the screens flipped).
    for assignment in membership.assignments.all():
        rating_submit(
            assignment=assignment,
            payload={"case": {"preference": {"choice": -2}}, "confidence": "low"},
            any_version=True,
        )
    records = qc_case_records(study=study)
    assert [r.first_preferred for r in records] == [True] * 4
    qc = StudyAgreement.objects.get(study=study).result["qc"][membership.pseudonym]
    assert qc["position_basis"] == "preference" and qc["first_preferred"] == 1.0
    assert qc["decided"] == 4 and qc["position_p"] == pytest.approx(0.125)
