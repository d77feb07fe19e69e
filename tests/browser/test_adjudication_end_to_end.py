"""Issue 23 from end to end: three raters disagree on a harm "Yes", the worker puts the case
in the queue, an adjudicator resolves it in the browser, and after unblinding the analysis,
the report and the long export use the adjudicated label, while agreement stays the same."""

import csv
import io

import pytest
from playwright.sync_api import expect

from agreement.models import StudyAgreement
from agreement.services.plan import aggregation_set
from annotation.models import Adjudication
from studies.models import BlindedLabel, Membership, Study
from studies.services import membership_add
from studies.services.adjudication_rules import adjudication_rules_set
from studies.services.lifecycle import study_open
from studies.services.rubric import rubric_replace_with_preset

from ..factories import PASSWORD, UserFactory, make_study
from ..payloads import SYSTEMS, close_and_unblind, submit
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REASON = "The answer tells the user to bypass a safety interlock: harmful."


def harm_payload(choices: dict[str, str]) -> dict:
    return {
        "responses": {
            label: {"harmful": {"choice": choice}, "harm_category": {"choice": None}}
            for label, choice in choices.items()
        },
        "confidence": "medium",
        "notes": "",
    }


def alphas() -> dict[str, float | None]:
    result = StudyAgreement.objects.get().result
    return {d["key"]: d["alpha"] for d in result["dimensions"]}


def harm_study_with_an_adjudicator():
    raters = [UserFactory(username=f"harm-rater-{n}") for n in range(3)]
    study = make_study(
        slug="harm-e2e", systems=SYSTEMS, raters=raters, cases=4, consented=True,
        status=Study.Status.DRAFT,
    )  # fmt: skip
    rubric_replace_with_preset(study=study, actor=study.lead, preset="harm")
    study.refresh_from_db()
    adjudicator = membership_add(
        study=study, user=UserFactory(username="harm-adjudicator"),
        role=Membership.Role.ADJUDICATOR,
    )  # fmt: skip
    # Protocol 5.3: any "Yes" on the harm question goes to adjudication; the analysis
    # plan labels each item by the adjudicated answer where there is one.
    adjudication_rules_set(
        study=study,
        actor=study.lead,
        rules=[{"dimension": "harmful", "trigger": "values", "values": ["yes"]}],
    )
    aggregation_set(
        study=study, actor=study.lead, rules={"harmful": "adjudicated"}, min_ratings=None
    )
    study_open(study=study, actor=study.lead, acknowledge_warnings=True)
    study.refresh_from_db()
    return study, adjudicator


def test_a_disputed_harm_yes_is_adjudicated_and_the_analysis_uses_it(
    browser, page, live_server, settings
):
    settings.AGREEMENT_BOOTSTRAP_RESAMPLES = 100
    study, adjudicator = harm_study_with_an_adjudicator()
    cases = list(study.test_cases.in_sample().order_by("position"))
    disputed = cases[0]
    # On the disputed case one rater says Response A is harmful, two say it is not; every
    # other answer is "No". The raters rate through the rating service, and each
    # submission runs the worker's agreement run (tasks run inline in tests).
    raters = list(study.memberships.filter(role=Membership.Role.RATER).order_by("pseudonym"))
    for number, rater in enumerate(raters):
        for assignment in rater.assignments.order_by("position"):
            says_yes = assignment.test_case_id == disputed.pk and number == 0
            submit(assignment, harm_payload({"A": "yes" if says_yes else "no", "B": "no"}))

    # The point stage put the disputed case, and only it, in the queue.
    queued = Adjudication.objects.get(test_case__study=study)
    assert queued.test_case_id == disputed.pk
    assert queued.status == Adjudication.Status.WAITING
    assert "harmful" in queued.triggers
    before = alphas()
    assert before["harmful"] is not None

    # The adjudicator signs in, opens the queue and resolves the case with a reason.
    sign_in(page, live_server, adjudicator.user.username, PASSWORD)
    page.get_by_role("link", name=study.name).click()
    expect(page.locator("#waiting-cases")).to_contain_text(disputed.case_id)
    page.get_by_role("link", name=f"Adjudicate case {disputed.case_id}").click()
    page.wait_for_load_state("load")
    expect(page.locator('[data-dim-row="A-harmful"]')).to_have_attribute("data-differs", "")
    expect(page.locator('[data-dim-row="A-harmful"]')).to_contain_text("To resolve")
    # The adjudicator sides with the one rater who saw the harm; B is "No" for everyone.
    page.locator('input[name="A-harmful"][value="yes"]').check()
    page.locator('input[name="B-harmful"][value="no"]').check()
    page.locator("#notes").fill(REASON)
    page.get_by_role("button", name="Record the decision").click()
    expect(page.locator("#decided-cases")).to_contain_text(disputed.case_id)
    queued.refresh_from_db()
    assert (queued.status, queued.reason) == (Adjudication.Status.DONE, REASON)

    # What the raters' majority said, from the test's own data: "No" on every item. The
    # adjudicated label turns the disputed A to "Yes": the system behind it (known only
    # after unblinding) has one harmful case, the other none.
    study = close_and_unblind(study)
    harmful_system = BlindedLabel.objects.get(test_case=disputed, label="A").response.system.name
    expected_positive = {system: int(system == harmful_system) for system in SYSTEMS}

    # Agreement reads the raters' own answers: the adjudication changed nothing in it.
    assert alphas() == before

    # The analysis the report shows: the adjudicated label, counted as one that changed
    # the majority, and the adjudication counts.
    lead = browser.new_context(viewport={"width": 1366, "height": 900}).new_page()
    sign_in(lead, live_server, study.lead.username, PASSWORD)
    lead.goto(f"{live_server.url}/s/{study.slug}/report/")
    expect(lead.locator("#adjudication-counts")).to_contain_text(
        "1 test case of the sample sent to adjudication: 1 resolved"
    )
    expect(lead.locator('#aggregation-rules tr[data-rule="harmful"]')).to_contain_text(
        "Adjudicated answer, else the majority"
    )
    row = lead.locator('#aggregation-counts tr[data-measure="dimension:harmful"] td')
    # Question, rule, excluded, ties, adjudicated label used, adjudication changed the majority.
    expect(row.nth(4)).to_have_text("2 (1)")  # both responses of the one case
    expect(row.nth(5)).to_have_text("1 (1)")  # one item changed, in one case
    shares = lead.locator('table[data-shares="harmful"] tbody tr')
    expect(shares).to_have_count(len(SYSTEMS))
    for system, positive in expected_positive.items():
        expect(shares.filter(has_text=system).locator("td").nth(1)).to_have_text(
            f"{positive} / {len(cases)}"
        )

    # The overview's counts lead to the list of decided cases, with the reason.
    lead.goto(f"{live_server.url}/s/{study.slug}/")
    counts = lead.locator("#adjudication-counts")
    expect(counts).to_contain_text("0 waiting, 1 done, 0 cannot be resolved")
    counts.get_by_role("link", name="1 done").click()
    expect(lead.locator("#adjudication-outcomes")).to_contain_text(disputed.case_id)
    expect(lead.locator("#adjudication-outcomes")).to_contain_text(REASON)

    # The long export: the adjudicated answer and the reason beside the raters' answers.
    answer = lead.request.get(f"{live_server.url}/s/{study.slug}/results/export/long-csv/")
    assert answer.ok
    rows = list(csv.DictReader(io.StringIO(answer.text())))
    harmful = study.rubric.dimensions.get(key="harmful").scoring()
    resolved = {"A": "yes", "B": "no"}
    disputed_rows = [
        r for r in rows if r["test_case"] == disputed.case_id and r["dimension"] == "harmful"
    ]
    assert len(disputed_rows) == len(raters) * 2
    for r in disputed_rows:
        label = r["response_label"]
        assert r["adjudicated_value"] == harmful.cell_out(
            harmful.score({"choice": resolved[label]})
        )
        assert (r["adjudication"], r["adjudication_reason"]) == ("done", REASON)
    others = [r for r in rows if r["test_case"] != disputed.case_id]
    assert others and all(r["adjudicated_value"] == "" for r in others)
