"""The rating screen of a pairwise study: explanation before the verdict, the next-step
layout, and empty responses shown as such."""

import json

import pytest
from django.urls import reverse

from annotation.services import RatingInvalidError, assignments_create_all, rating_submit
from annotation.services.participation import consent_record
from studies import services as study_services
from studies.models import Membership, Study
from studies.services import membership_add, study_create

from ..factories import UserFactory


@pytest.fixture
def pairwise(db):
    study = study_create(
        slug="steps",
        name="Steps",
        lead=UserFactory(),
        rubric_preset="pairwise",
        explanation_first=True,
        case_layout="next_step",
    )
    study_services.test_cases_add(
        study=study,
        systems=["m1", "m2"],
        cases=[
            {
                "id": "Q-1",
                "prompt": "What is 2 + 3 * 4?",
                "context": "Multiply first.\n3 * 4 = 12",
                "responses": {"m1": "2 + 12 = 14", "m2": "   "},
            }
        ],
    )
    user = UserFactory()
    membership = membership_add(study=study, user=user, role=Membership.Role.RATER)
    assignments_create_all(study=study, rater=membership)
    consent_record(rater=membership, agreed=True, prior_knowledge=False)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    return study, user, membership.assignments.get()


def test_a_preference_without_the_reasoning_is_refused(pairwise):
    _, _, assignment = pairwise
    payload = {"case": {"preference": {"choice": -1}}, "confidence": "high", "notes": "  "}
    with pytest.raises(RatingInvalidError, match="reasoning first"):
        rating_submit(assignment=assignment, payload=payload, any_version=True)
    assignment.refresh_from_db()
    assert assignment.status == "todo"
    payload["notes"] = "The first step is correct; the second is empty."
    rating_submit(assignment=assignment, payload=payload, any_version=True)
    assignment.refresh_from_db()
    assert assignment.status == "submitted"


def test_the_screen_refuses_it_too_and_says_why(client, pairwise):
    _, user, assignment = pairwise
    client.force_login(user)
    response = client.post(
        reverse("annotation:rate", args=[assignment.uuid]),
        {
            "payload": json.dumps({"case": {"preference": {"choice": 1}}, "confidence": "low"}),
            "version": "0",
        },
    )
    assert response.status_code == 400
    assert "reasoning first" in response.content.decode()


def test_next_step_layout_numbers_the_steps_and_marks_an_empty_response(client, pairwise):
    _, user, assignment = pairwise
    client.force_login(user)
    html = client.get(reverse("annotation:rate", args=[assignment.uuid])).content.decode()
    assert (
        '<ol class="reasoning-steps mb-0"><li>Multiply first.</li><li>3 * 4 = 12</li></ol>' in html
    )
    assert html.count("Candidate next step") == 2
    assert "(empty response)" in html
    # The reasoning box comes before the preference, and the page script enforces the order.
    assert html.index('id="notes"') < html.index('name="case-preference"')
    assert "data-explanation-first" in html and "js/explanation-first.js" in html
