"""A rater completes a pairwise study that asks for the explanation before the verdict."""

import pytest
from playwright.sync_api import expect

from annotation.models import Assignment
from annotation.services import assignments_create_all
from annotation.services.participation import consent_record
from studies import services as study_services
from studies.models import Membership, Study
from studies.services import membership_add, study_create

from ..factories import PASSWORD, UserFactory
from .conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def explained_study():
    rater = UserFactory(username="explaining-rater")
    study = study_create(
        slug="explained",
        name="Explained pairs",
        lead=UserFactory(),
        rubric_preset="pairwise",
        side_mode="balanced",
        explanation_first=True,
        case_layout="next_step",
    )
    study_services.test_cases_add(
        study=study,
        systems=["s1", "s2"],
        cases=[
            {
                "id": f"NS-{n}",
                "prompt": f"Question {n}: what is {n} + {n} * 2?",
                "context": f"Multiply first.\n{n} * 2 = {2 * n}",
                "responses": {"s1": f"{n} + {2 * n} = {3 * n}", "s2": ""},
            }
            for n in (1, 2)
        ],
    )
    membership = membership_add(study=study, user=rater, role=Membership.Role.RATER)
    assignments_create_all(study=study, rater=membership)
    consent_record(rater=membership, agreed=True, prior_knowledge=False)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    return rater, study, membership


def test_rater_writes_the_reasoning_before_choosing_and_completes_the_study(
    page, live_server, explained_study, screenshot
):
    rater, study, membership = explained_study
    sign_in(page, live_server, rater.username, PASSWORD)
    page.get_by_role("link", name=study.name).click()
    page.get_by_role("link", name="Next unrated case").click()

    for done in (1, 2):
        expect(page.locator(".reasoning-steps li")).to_have_count(2)
        expect(page.get_by_text("(empty response)")).to_be_visible()
        first_option = page.locator('input[name="case-preference"]').first
        expect(first_option).to_be_disabled()
        expect(page.locator("#explanation-hint")).to_be_visible()

        page.locator("#notes").fill("The filled-in step is correct; the other one is empty.")
        expect(first_option).to_be_enabled()
        expect(page.locator("#explanation-hint")).to_be_hidden()
        # The empty response is the worse one, whichever side it is shown on.
        empty_side = page.locator(".response-card:has(.empty-response)").get_attribute("data-shown")
        choice = "B much better" if empty_side == "A" else "A much better"
        page.get_by_text(choice, exact=True).click()
        page.get_by_label("High").check()
        if done == 1:
            screenshot(page, "pairwise-explanation-first")
        page.get_by_role("button", name="Submit and next").click()
        if done == 1:
            expect(page.locator("#progress-text")).to_have_text("1 of 2 done")

    page.wait_for_url(lambda url: "self-check" in url or "check" in url)
    submitted = Assignment.objects.filter(rater=membership, status="submitted")
    assert submitted.count() == 2
    for assignment in submitted.select_related("test_case"):
        assert assignment.notes.startswith("The filled-in step is correct")
        # In key order the non-empty response (system s1) is preferred, on either screen.
        key_a = assignment.test_case.labels.get(label="A").response.system.name
        value = assignment.case_scores["preference"]["choice"]
        key_value = -value if assignment.flipped else value
        assert key_value == (-2 if key_a == "s1" else 2)
