"""What a skip does depends on the design, and every page that tells it says what this
study's design does: offered to another rater with k raters per case; given to no one
where every rater rates every case (issue 24: "say so where it cannot")."""

import pytest
from django.urls import reverse

from agreement.report.sections import study_report
from annotation.services.skipping import case_skip
from studies.models import Study, TestCase
from studies.services import tokens

HANDED_ON = "offered to another rater"
NOT_HANDED_ON = "not given to anyone else"


@pytest.fixture
def assignment(membership):
    return membership.assignments.select_related("test_case").order_by("position").first()


def balanced(study: Study) -> Study:
    Study.objects.filter(pk=study.pk).update(raters_per_item=2)
    study.refresh_from_db()
    return study


def rater_pages(client, user, study, assignment) -> dict[str, str]:
    client.force_login(user)
    return {
        "information sheet": client.get(reverse("annotation:consent", args=[study.slug])).text,
        "skip form": client.get(reverse("annotation:rate", args=[assignment.uuid])).text,
    }


def coordinator_pages(client, lead, study) -> dict[str, str]:
    client.force_login(lead)
    return {
        "welfare page": client.get(reverse("annotation:welfare", args=[study.slug])).text,
        "QC page": client.get(reverse("agreement:qc", args=[study.slug])).text,
    }


def test_in_the_full_design_every_page_says_a_skipped_case_goes_to_no_one(
    client, lead, rater, study, assignment
):
    assert study.raters_per_item is None  # every rater rates every case
    for name, page in rater_pages(client, rater, study, assignment).items():
        assert NOT_HANDED_ON in page, name
        assert HANDED_ON not in page, name
    for name, page in coordinator_pages(client, lead, study).items():
        assert "a skipped case cannot go to anyone else" in page or NOT_HANDED_ON in page, name


def test_with_k_raters_per_case_the_pages_say_the_case_is_offered_to_another_rater(
    client, lead, rater, study, assignment
):
    study = balanced(study)
    for name, page in rater_pages(client, rater, study, assignment).items():
        assert HANDED_ON in page, name
        assert NOT_HANDED_ON not in page, name
    welfare = coordinator_pages(client, lead, study)["welfare page"]
    assert "goes to another active rater" in welfare and NOT_HANDED_ON not in welfare


def test_the_report_and_the_api_count_skips_per_case_and_say_what_the_design_did(
    client, lead, study, membership
):
    TestCase.objects.filter(study=study).update(stratum="harm")
    first, second = membership.assignments.select_related("test_case").order_by("position")[:2]
    case_skip(assignment=first, reason="distressing")
    case_skip(assignment=second)
    other = study.memberships.exclude(pk=membership.pk).get(role="rater")
    case_skip(assignment=other.assignments.get(test_case=first.test_case))

    skips = study_report(study=study)["quality"]["skips"]
    assert skips["per_case"] == [
        {"case": first.test_case.case_id, "stratum": "harm", "skips": 2},
        {"case": second.test_case.case_id, "stratum": "harm", "skips": 1},
    ]
    assert skips["handed_on"] is False
    client.force_login(lead)
    report = client.get(reverse("agreement:report", args=[study.slug])).text
    assert f"By case: {first.test_case.case_id} (harm) 2; {second.test_case.case_id}" in report
    assert "so a skipped case was not given to anyone else" in report
    _, secret = tokens.api_token_create(user=lead, name="tests")
    progress = client.get(
        reverse("api:progress", args=[study.slug]), HTTP_AUTHORIZATION=f"Bearer {secret}"
    ).json()["skips"]
    assert progress["per_case"] == {first.test_case.case_id: 2, second.test_case.case_id: 1}
    assert progress["handed_on"] is False
