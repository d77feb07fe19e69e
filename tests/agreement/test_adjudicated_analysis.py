"""The analysis plan's aggregation and the adjudicated labels, from the database: the
selector's layout, the plan's validation and history, the report, the page and the API."""

import math

import numpy as np
import pytest
from django.urls import reverse

from agreement.models import AnalysisPlan, StudyAgreement
from agreement.services.plan import AnalysisPlanError, aggregation_get, aggregation_set
from annotation.models import Adjudication
from annotation.selectors.adjudicated_labels import (
    adjudication_counts,
    study_adjudicated_labels,
)
from studies.models import Study, StudyEvent
from studies.services.lifecycle import study_open
from studies.services.rubric import rubric_replace_with_preset
from tests.api.conftest import Api
from tests.factories import UserFactory, make_study
from tests.payloads import SYSTEMS, close_and_unblind, submit

from ..factories import adjudication_make


def harm_study(*, raters=3, cases=4, status=Study.Status.DRAFT, **kwargs) -> Study:
    users = [UserFactory() for _ in range(raters)]
    study = make_study(
        systems=SYSTEMS, raters=users, cases=cases, status=Study.Status.DRAFT, **kwargs
    )
    rubric_replace_with_preset(study=study, actor=study.lead, preset="harm")
    study.refresh_from_db()
    if status != Study.Status.DRAFT:
        Study.objects.filter(pk=study.pk).update(status=status)
        study.refresh_from_db()
    return study


def stored(study: Study, key: str, choice):
    """A stored answer as the kind scores it."""
    return study.rubric.dimensions.get(key=key).scoring().score({"choice": choice})


def sample_ids(study: Study) -> list[int]:
    return list(study.test_cases.in_sample().order_by("position").values_list("pk", flat=True))


@pytest.mark.django_db
def test_the_selector_lays_out_resolved_answers_as_the_analysis_reads_them():
    study = harm_study()
    first, second, third, _ = study.test_cases.in_sample().order_by("position")
    adjudication_make(
        test_case=second,
        triggers={"harmful": ["values", "disagreement"]},
        status=Adjudication.Status.DONE,
        answers={
            "responses": {
                "A": {"harmful": stored(study, "harmful", "yes")},
                "B": {"harmful": stored(study, "harmful", "no")},
            },
            "case": {},
        },
    )
    # Waiting and unresolvable adjudications give no label, whatever their answers hold.
    adjudication_make(
        test_case=first,
        triggers={"harmful": ["values"]},
        answers={"responses": {"A": {"harmful": stored(study, "harmful", "yes")}}, "case": {}},
    )
    adjudication_make(
        test_case=third,
        triggers={"harm_category": ["manual"]},
        status=Adjudication.Status.UNRESOLVABLE,
    )
    values = study_adjudicated_labels(study=study, case_ids=sample_ids(study), labels=["A", "B"])
    assert set(values) == {"harmful", "harm_category"}
    harmful = values["harmful"]
    # Units are case-major: case 2's A is unit 2, its B unit 3. "yes" is the second category.
    assert harmful[2] == 1.0 and harmful[3] == 0.0
    assert np.isnan(np.delete(harmful, [2, 3])).all()
    assert np.isnan(values["harm_category"]).all()

    counts = adjudication_counts(study=study, case_ids=sample_ids(study))
    assert (counts["total"], counts["done"], counts["waiting"], counts["unresolvable"]) == (
        3,
        1,
        1,
        1,
    )
    per_trigger = {row["trigger"]: row["n"] for row in counts["per_trigger"]}
    assert per_trigger == {"values": 2, "disagreement": 1, "target_missed": 0, "manual": 1}


@pytest.mark.django_db
def test_a_preference_is_turned_to_the_systems_order_like_the_ratings():
    study = harm_study()
    rubric_replace_with_preset(study=study, actor=study.lead, preset="pairwise")
    study.refresh_from_db()
    first, second, *_ = study.test_cases.in_sample().order_by("position")
    for case in (first, second):
        adjudication_make(
            test_case=case,
            triggers={"preference": ["manual"]},
            status=Adjudication.Status.DONE,
            answers={"responses": {}, "case": {"preference": stored(study, "preference", -2)}},
        )
    ids = sample_ids(study)
    in_key_order = study_adjudicated_labels(study=study, case_ids=ids, labels=["A", "B"])
    assert in_key_order["preference"][:2].tolist() == [-2.0, -2.0]
    # Case 1's key label A holds the later system: the strong first-side preference turns.
    turned = study_adjudicated_labels(
        study=study, case_ids=ids, labels=["A", "B"], reversed_cases={first.pk: True}
    )
    assert turned["preference"][:2].tolist() == [2.0, -2.0]
    assert len(turned["preference"]) == len(ids)  # one unit per case


@pytest.mark.django_db
def test_the_plan_takes_only_rules_that_fit_and_a_minimum_within_the_design():
    study = harm_study()
    lead = study.lead
    assert aggregation_get(study=study)["rules"] == {"harmful": "adjudicated"}
    assert aggregation_get(study=study)["min_ratings"] == 2  # every rater rates every case
    for rules, minimum, message in [
        ({"nope": "majority"}, None, "no question"),
        ({"harmful": "mean"}, None, "choose one of the rules"),
        ({"harmful": "majority"}, 0, "whole number from 1"),
        ({"harmful": "majority"}, True, "whole number from 1"),
    ]:
        with pytest.raises(AnalysisPlanError, match=message):
            aggregation_set(study=study, actor=lead, rules=rules, min_ratings=minimum)
    assert not AnalysisPlan.objects.filter(study=study).exists()

    aggregation_set(study=study, actor=lead, rules={"harmful": "majority"}, min_ratings=3)
    plan = AnalysisPlan.objects.get(study=study)
    # Only the rules that differ from the default are stored.
    assert plan.aggregation == {"harmful": "majority"} and plan.min_ratings == 3
    reasons = list(
        study.events.filter(kind=StudyEvent.Kind.SETTINGS_CHANGED).values_list("reason", flat=True)
    )
    assert any("Harmful: majority" in r for r in reasons)
    assert any(r.endswith("per item: 3") for r in reasons)
    # The same again records nothing.
    count = study.events.count()
    aggregation_set(study=study, actor=lead, rules={"harmful": "majority"}, min_ratings=3)
    assert study.events.count() == count


@pytest.mark.django_db
def test_one_rater_per_item_makes_the_default_minimum_one():
    study = harm_study(raters=2)
    Study.objects.filter(pk=study.pk).update(raters_per_item=1)
    study.refresh_from_db()
    assert aggregation_get(study=study)["min_ratings"] == 1
    with pytest.raises(AnalysisPlanError, match="from 1 to 1"):
        aggregation_set(study=study, actor=study.lead, rules={}, min_ratings=2)


def harm_answers(labels: dict[str, str]) -> dict:
    return {
        "responses": {
            label: {"harmful": {"choice": choice}, "harm_category": {"choice": None}}
            for label, choice in labels.items()
        },
        "confidence": "medium",
    }


@pytest.mark.django_db(transaction=True)
def test_an_adjudicated_label_changes_the_analysis_and_the_report_but_not_the_agreement(
    client, settings
):
    settings.AGREEMENT_BOOTSTRAP_RESAMPLES = 100
    study = harm_study(consented=True)
    study_open(study=study, actor=study.lead)
    study.refresh_from_db()
    client.force_login(study.lead)
    # Before opening would be the plan; after it, a change is a recorded deviation: here to
    # the plain majority and back to the default, the adjudicated answer else the majority.
    for rule in ("majority", "adjudicated"):
        page = client.post(
            reverse("agreement:aggregation", args=[study.slug]),
            {"rule-harmful": rule, "min_ratings": ""},
            follow=True,
        )
        assert "The aggregation is saved" in page.content.decode()
    cases = list(study.test_cases.in_sample().order_by("position"))
    # Every rater: "yes" on case 1's A, "no" elsewhere; so the majority of case 1 A is "yes".
    for rater in study.memberships.filter(role="rater").order_by("pseudonym"):
        for assignment in rater.assignments.select_related("test_case"):
            first = assignment.test_case_id == cases[0].pk
            submit(assignment, harm_answers({"A": "yes" if first else "no", "B": "no"}))
    agreement_before = StudyAgreement.objects.get(study=study).result["dimensions"]
    adjudication_make(
        test_case=cases[0],
        triggers={"harmful": ["values"]},
        status=Adjudication.Status.DONE,
        answers={
            "responses": {
                "A": {"harmful": stored(study, "harmful", "no")},
                "B": {"harmful": stored(study, "harmful", "no")},
            },
            "case": {},
        },
    )
    close_and_unblind(study)
    result = StudyAgreement.objects.get(study=study).result
    # Agreement reads the raters' answers only.
    assert [d["alpha"] for d in result["dimensions"]] == [d["alpha"] for d in agreement_before]
    comparison = result["comparison"]
    harm = comparison["mcnemar"][0]
    # The adjudicated "no" replaced the only "yes": no system has a harmful case left.
    assert [s["positive"] for s in harm["systems"]] == [0, 0]
    assert [s["n"] for s in harm["systems"]] == [4, 4]
    question = next(
        q for q in comparison["aggregation"]["questions"] if q["measure"] == "dimension:harmful"
    )
    # Both responses of the one case were adjudicated (items), one answer changed (issue 39:
    # names say what they count; the cases holding them are counted apart).
    assert (question["rule"], question["adjudicated_items"], question["changed_items"]) == (
        "adjudicated",
        2,
        1,
    )
    assert (question["adjudicated_cases"], question["changed_cases"]) == (1, 1)
    html = client.get(reverse("agreement:report", args=[study.slug])).content.decode()
    assert 'id="aggregation-counts"' in html and 'id="adjudication-counts"' in html
    assert "1 test case of the sample sent to adjudication: 1 resolved" in html
    assert "Adjudicated answer, else the majority" in html
    assert "after the study opened: a deviation" in html
    from agreement.report.sections import study_report

    deviations = [d["reason"] for d in study_report(study=study)["deviations"]]
    assert any(r.startswith("Aggregation per item: Harmful") for r in deviations)
    agreement_page = client.get(reverse("agreement:study", args=[study.slug])).content.decode()
    assert "adjudication does not enter them" in agreement_page
    # After unblinding the aggregation is final.
    with pytest.raises(AnalysisPlanError, match="unblinded"):
        aggregation_set(study=study, actor=study.lead, rules={}, min_ratings=None)


@pytest.mark.django_db
def test_the_report_before_unblinding_gives_counts_and_rules_but_no_system():
    study = harm_study(status=Study.Status.OPEN)
    adjudication_make(test_case=study.test_cases.first(), triggers={"harmful": ["manual"]})
    from agreement.report.sections import study_report

    report = study_report(study=study)
    assert report["comparison"] is None
    assert report["adjudication"]["waiting"] == 1
    assert [q["key"] for q in report["aggregation"]["questions"]] == ["harmful"]
    text = str(report["aggregation"]) + str(report["adjudication"])
    assert all(system not in text for system in SYSTEMS)


@pytest.mark.django_db
def test_the_api_reads_and_sets_the_aggregation(client):
    from studies.services import tokens

    study = harm_study()
    _, secret = tokens.api_token_create(user=study.lead, name="tests")
    api = Api(client, secret)
    url = f"studies/{study.slug}/analysis-plan/"
    body = api("GET", url).json()
    # A category with more than two values and none analysed apart takes no rule.
    assert body["aggregation"] == {"harmful": "adjudicated"}
    assert body["min_ratings"] == 2 and body["min_ratings_set"] is False
    assert body["questions"][0]["rules"] == ["adjudicated", "majority"]
    changed = api("PATCH", url, {"aggregation": {"harmful": "adjudicated"}, "min_ratings": 3})
    assert changed.status_code == 200
    assert changed.json()["aggregation"]["harmful"] == "adjudicated"
    # Left out of the body, the minimum stays.
    kept = api("PATCH", url, {"aggregation": {"harmful": "majority"}}).json()
    assert kept["min_ratings"] == 3 and kept["aggregation"]["harmful"] == "majority"
    refused = api("PATCH", url, {"aggregation": {"harmful": "median"}})
    assert refused.status_code == 400
    assert math.isclose(AnalysisPlan.objects.get(study=study).min_ratings, 3)


@pytest.mark.django_db
@pytest.mark.parametrize("typed", ["²", "1²", "-1", "٣"])
def test_a_minimum_of_valid_ratings_not_a_whole_number_is_refused(client, typed):
    study = harm_study()
    client.force_login(study.lead)
    page = client.post(
        reverse("agreement:aggregation", args=[study.slug]),
        {"rule-harmful": "majority", "min_ratings": typed},
        follow=True,
    )
    assert page.status_code == 200
    assert "The minimum of valid ratings is a whole number." in page.content.decode()
    assert aggregation_get(study=study)["min_ratings_set"] is False
