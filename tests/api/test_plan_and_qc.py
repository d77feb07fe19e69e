"""The analysis plan's primary question and stratum shares, the sample-size calculator and
quality control over the API: the pages' services and forms, the same answers."""

import pytest
from django.urls import reverse

from agreement.models import AnalysisPlan
from agreement.services.plan import stratum_shares_parse
from agreement.services.recompute import agreement_recompute, agreement_request_recompute
from annotation.services import rating_submit
from studies.models import Membership, Study, StudyEvent
from studies.models import TestCase as Case
from tests.factories import UserFactory, make_study
from tests.payloads import SYSTEMS, full_marks_payload, study_with_systems


@pytest.fixture
def admin(db):
    return UserFactory(username="api-admin", is_staff=True, is_superuser=True)


# The analysis plan -------------------------------------------------------------------------


@pytest.fixture
def strata_study(lead_user):
    study = make_study(lead=lead_user, slug="plan", cases=4, status="draft", systems=SYSTEMS)
    cases = list(study.test_cases.order_by("position"))
    Case.objects.filter(pk__in=[c.pk for c in cases[:3]]).update(stratum="policy")
    Case.objects.filter(pk=cases[3].pk).update(stratum="science")
    return study


def test_the_primary_question_and_stratum_shares_are_set_over_the_api(
    strata_study, lead_user, api_as
):
    api = api_as(lead_user)
    plan = api("GET", "studies/plan/analysis-plan/").json()
    assert plan["primary_measure"] == "" and plan["stratum_shares"] == ""
    choices = plan["primary_measures"]
    assert "total" in choices or any("Total score" in q for q in choices.values())
    measure = next(key for key, question in choices.items() if "Total score" in question)
    changed = api(
        "PATCH",
        "studies/plan/analysis-plan/",
        {"primary_measure": measure, "stratum_shares": "policy: 70\nscience: 30"},
    )
    assert changed.status_code == 200, changed.content
    body = changed.json()
    assert body["primary_measure"] == measure
    assert body["stratum_shares"] == "policy: 70\nscience: 30"
    stored = AnalysisPlan.objects.get(study=strata_study)
    # The page's parser's reading of the same text.
    assert stored.stratum_shares == stratum_shares_parse(
        text="policy: 70\nscience: 30", strata=["policy", "science"]
    )
    reasons = list(
        strata_study.events.filter(kind=StudyEvent.Kind.SETTINGS_CHANGED).values_list(
            "reason", flat=True
        )
    )
    assert any(r.startswith("Primary question: Total score") for r in reasons)
    assert any(r.startswith("Stratum shares") for r in reasons)


@pytest.mark.parametrize(
    "body, problem",
    [
        ({"stratum_shares": "policy: 70\nscience: 20"}, "add up to 90"),
        ({"stratum_shares": "policy: 100"}, "missing: science"),
        ({"primary_measure": "no-such-measure"}, "Choose one of the measures"),
        ({"primary_measure": 3}, "primary_measure: send a text."),
        # A misspelt field is no change to answer 200 for: the pipeline would believe it set.
        (
            {"stratum_share": "policy: 50\nscience: 50"},
            "stratum_share: not part of the analysis plan; use primary_measure, "
            "stratum_shares, aggregation, min_ratings.",
        ),
    ],
)
def test_a_bad_plan_is_refused_whole(strata_study, lead_user, api_as, body, problem):
    api = api_as(lead_user)
    measure = next(iter(api("GET", "studies/plan/analysis-plan/").json()["primary_measures"]))
    # A good change sent with the bad one is not kept either: all or nothing.
    refused = api("PATCH", "studies/plan/analysis-plan/", {"primary_measure": measure, **body})
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert problem in error["message"] + " ".join(error["problems"])
    assert not AnalysisPlan.objects.filter(study=strata_study).exclude(primary_measure="").exists()
    assert not strata_study.events.filter(kind=StudyEvent.Kind.SETTINGS_CHANGED).exists()


def test_the_primary_question_is_fixed_once_unblinded(strata_study, lead_user, api_as):
    Study.objects.filter(pk=strata_study.pk).update(status=Study.Status.UNBLINDED)
    api = api_as(lead_user)
    measure = next(iter(api("GET", "studies/plan/analysis-plan/").json()["primary_measures"]))
    refused = api("PATCH", "studies/plan/analysis-plan/", {"primary_measure": measure})
    assert refused.status_code == 400 and "unblinded" in refused.json()["error"]["message"]
    # Stratum shares are the estimate's weights, not a choice of question: the page takes
    # them after unblinding, and so does the API.
    shares = api(
        "PATCH", "studies/plan/analysis-plan/", {"stratum_shares": "policy: 0.25\nscience: 0.75"}
    )
    assert (
        shares.status_code == 200 and shares.json()["stratum_shares"] == "policy: 25\nscience: 75"
    )


# The sample-size calculator ----------------------------------------------------------------


def test_the_calculator_gives_the_pages_answers(client, lead_user, api_as):
    study_with_systems(lead=lead_user, slug="size", cases=4)
    api = api_as(lead_user)
    shown = api("GET", "studies/size/sample-size/").json()
    assert shown["cases"] == 4 and shown["answer"] is None
    assert shown["calculators"]["win"]["p1"]["initial"] == 0.58
    # The protocol's example, as the page answers it (tests/agreement/test_sample_size_page).
    win = {"which": "win", "p1": 0.58, "alpha": 0.05, "power": 0.8, "tie_share": 0.2}
    answer = api("POST", "studies/size/sample-size/", win).json()["answer"]
    assert (answer["needed"], answer["enough"], answer["short"]) == (382, False, 378)
    client.force_login(lead_user)
    page = client.get(
        reverse("agreement:sample_size", args=["size"]),
        {"which": "win", "win-p1": "0.58", "win-alpha": "0.05", "win-power": "0.8",
         "win-tie_share": "0.2"},
    )  # fmt: skip
    assert page.context["answer"]["needed"] == answer["needed"]
    mean = {"which": "mean", "difference": 5, "sd": 2}  # alpha and power: the defaults
    answer = api("POST", "studies/size/sample-size/", mean).json()["answer"]
    assert (answer["needed"], answer["enough"]) == (2, True)
    assert answer["inputs"] == {"difference": 5.0, "sd": 2.0, "alpha": 0.05, "power": 0.8}


@pytest.mark.parametrize(
    "body, problem",
    [
        ({"which": "win", "p1": 0.5}, "p1: A win rate of 0.5 is no effect: choose another value."),
        ({"which": "win", "p1": 1.5}, "p1: Ensure this value is less than or equal to 0.99."),
        ({"which": "mean", "sd": "abc"}, "sd: Enter a number."),
        ({"which": "odds"}, "which: win (a win rate) or mean (a difference)."),
        ({"p1": 0.6}, "which: win (a win rate) or mean (a difference)."),
        # A misspelt input must not take its default unseen (the answer would be for 80%).
        (
            {"which": "win", "p1": 0.6, "powr": 0.95},
            "powr: not an input of either calculator; "
            "use which, alpha, difference, p1, power, sd, tie_share.",
        ),
        (
            {"which": "mean", "difference": 1, "sd": 2, "tie_share": 0.2},
            "tie_share: not an input of the mean calculator; use difference, sd, alpha, power.",
        ),
    ],
)
def test_impossible_inputs_are_refused(lead_user, api_as, body, problem):
    study_with_systems(lead=lead_user, slug="size", cases=2)
    refused = api_as(lead_user)("POST", "studies/size/sample-size/", body)
    assert refused.status_code == 400
    assert problem in refused.json()["error"]["problems"]


# Quality control -----------------------------------------------------------------------------


@pytest.fixture
def rated_study(lead_user):
    study = make_study(lead=lead_user, slug="qc", cases=3, raters=[UserFactory() for _ in range(3)])
    for membership in study.memberships.filter(role=Membership.Role.RATER):
        for assignment in membership.assignments.all():
            rating_submit(assignment=assignment, payload=full_marks_payload(), expected_version=0)
    # What the submissions ask once they commit (the test's transaction never does).
    agreement_request_recompute(study_id=study.pk)
    agreement_recompute(study_id=study.pk)
    return study


def test_coordinators_read_the_flags_by_pseudonym(rated_study, lead_user, api_as):
    flags = api_as(lead_user)("GET", "studies/qc/qc/flags/")
    assert flags.status_code == 200
    body = flags.json()
    assert [row["rater"] for row in body["raters"]] == ["R-01", "R-02", "R-03"]
    first = body["raters"][0]
    # Submitted through the service with no active time: every rater is flagged as fast,
    # as on the QC page.
    assert any("median time per case 0 s" in flag for flag in first["flags"])
    assert first["status"] == "active" and "dismiss" in first["actions"]
    assert body["decisions"] == [] and body["stale"] is False
    usernames = set(rated_study.memberships.values_list("user__username", flat=True))
    assert not any(name in flags.content.decode() for name in usernames)


def test_an_administrator_decides_with_the_reason(rated_study, admin, api_as):
    api = api_as(admin)
    excluded = api(
        "POST",
        "studies/qc/qc/decisions/",
        {"rater": "R-02", "action": "exclude", "reason": "Failed gold items twice"},
    )
    assert excluded.status_code == 200, excluded.content
    assert excluded.json()["status"] == "excluded"
    membership = Membership.objects.get(study=rated_study, pseudonym="R-02")
    assert membership.status == Membership.Status.EXCLUDED
    event = StudyEvent.objects.get(study=rated_study, kind=StudyEvent.Kind.RATER_EXCLUDED)
    assert (event.actor, event.reason) == (admin, "Failed gold items twice")

    dismissed = api(
        "POST", "studies/qc/qc/decisions/", {"rater": "R-01", "action": "dismiss", "reason": "ok"}
    ).json()
    assert dismissed["flags"] == [] and dismissed["dismissed"] and dismissed["status"] == "active"
    listed = api("GET", "studies/qc/qc/flags/").json()
    assert [d["label"] for d in listed["decisions"]][:2] == [
        StudyEvent.Kind.RATER_FLAG_DISMISSED.label,
        StudyEvent.Kind.RATER_EXCLUDED.label,
    ]


@pytest.mark.parametrize(
    "body, status, problem",
    [
        ({"rater": "R-01", "action": "pause", "reason": "  "}, 400, "Give the reason"),
        ({"rater": "R-01", "action": "ban", "reason": "x"}, 400, "Choose an action"),
        ({"rater": "R-01", "action": "pause"}, 400, "reason: give a text."),
        ({"rater": "R-99", "action": "pause", "reason": "x"}, 404, "no rater"),
    ],
)
def test_a_decision_that_cannot_be_taken_changes_nothing(
    rated_study, admin, api_as, body, status, problem
):
    refused = api_as(admin)("POST", "studies/qc/qc/decisions/", body)
    assert refused.status_code == status
    error = refused.json()["error"]
    assert problem in error["message"] + " ".join(error["problems"])
    assert not rated_study.memberships.exclude(status="active").exists()
    assert (
        not rated_study.events.filter(kind__startswith="rater_")
        .exclude(kind=StudyEvent.Kind.RATER_ADDED)
        .exists()
    )


def test_coordinators_read_but_do_not_decide(rated_study, lead_user, api_as):
    body = {"rater": "R-01", "action": "exclude", "reason": "x"}
    assert api_as(lead_user)("POST", "studies/qc/qc/decisions/", body).status_code == 403
    assert Membership.objects.get(study=rated_study, pseudonym="R-01").status == "active"
