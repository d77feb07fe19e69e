"""The rating screen's content warning, "Skip this case" and its undoing."""

import pytest
from django.urls import reverse

from annotation.models import Assignment
from studies.models import StratumSetting
from studies.models import TestCase as Case


@pytest.fixture
def assignment(membership):
    return membership.assignments.select_related("test_case").order_by("position").first()


def rate_url(assignment, **query):
    url = reverse("annotation:rate", args=[assignment.uuid])
    return url + ("?show=1" if query.get("show") else "")


def test_a_warned_case_hides_its_prompt_and_responses_until_the_rater_chooses(
    client, rater, study, assignment
):
    case = assignment.test_case
    Case.objects.filter(pk=case.pk).update(stratum="harm", content_warning="Self-harm.")
    StratumSetting.objects.create(study=study, stratum="harm", content_warning="Harm probes.")
    client.force_login(rater)
    page = client.get(rate_url(assignment)).text
    assert "Harm probes." in page and "Self-harm." in page
    assert case.prompt not in page and 'id="rating-form"' not in page
    for response in case.responses.all():
        assert response.text not in page
    assert 'id="show-responses"' in page and 'id="skip-form"' in page
    shown = client.get(rate_url(assignment, show=True)).text
    assert case.prompt in shown and 'id="rating-form"' in shown
    assert "Self-harm." in shown  # still said, above the prompt


def test_a_case_without_warning_opens_as_always_with_skip_offered(client, rater, assignment):
    client.force_login(rater)
    page = client.get(rate_url(assignment)).text
    assert 'id="rating-form"' in page and 'id="content-warning"' not in page
    assert 'id="skip-case"' in page


def test_skipping_moves_on_counts_it_done_and_can_be_undone(client, rater, study, assignment):
    client.force_login(rater)
    response = client.post(
        reverse("annotation:skip", args=[assignment.uuid]),
        {"skip_reason": "expertise", "skip_note": "Legal detail beyond me."},
    )
    assert response.status_code == 302
    following = assignment.rater.assignments.get(position=assignment.position + 1)
    assert response["Location"] == rate_url(following)
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.SKIPPED
    assert assignment.skip_note == "Legal detail beyond me."
    listing = client.get(reverse("annotation:assignments", args=[study.slug])).text
    assert "1 of 4 done (1 skipped)" in listing
    page = client.get(rate_url(assignment)).text
    assert "You skipped this case" in page and assignment.test_case.prompt not in page
    client.post(reverse("annotation:unskip", args=[assignment.uuid]))
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.TODO


def test_a_bad_skip_says_why_and_changes_nothing(client, rater, assignment):
    client.force_login(rater)
    response = client.post(
        reverse("annotation:skip", args=[assignment.uuid]), {"skip_reason": "bored"}, follow=True
    )
    assert "Not skipped." in response.text
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.TODO


def test_a_refused_skip_keeps_what_the_rater_typed_once(client, rater, assignment):
    """The note and the reason come back in the open form for the rater to correct; on the
    next visit the form is empty again."""
    client.force_login(rater)
    note = "Too close to home <b>for me</b>. " * 40  # over the note's limit
    response = client.post(
        reverse("annotation:skip", args=[assignment.uuid]),
        {"skip_reason": "distressing", "skip_note": note},
        follow=True,
    )
    page = response.text
    assert "Not skipped." in page
    assert 'id="skip-case" open' in page
    assert "Too close to home &lt;b&gt;for me&lt;/b&gt;." in page
    assert 'value="distressing" id="skip-reason-distressing" checked' in page
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.TODO and assignment.skip_note == ""
    again = client.get(rate_url(assignment)).text
    assert "Too close to home" not in again and 'id="skip-case" open' not in again


def test_another_rater_cannot_skip_my_case(client, other_rater, assignment):
    client.force_login(other_rater)
    response = client.post(reverse("annotation:skip", args=[assignment.uuid]))
    assert response.status_code == 404
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.TODO


def test_the_qc_page_and_the_report_count_skips_and_the_cases_left_short(
    client, lead, rater, study, assignment
):
    from agreement.report.sections import study_report
    from annotation.services.skipping import case_skip

    case_skip(assignment=assignment, reason="distressing")  # full design: nobody to take it
    client.force_login(lead)
    page = client.get(reverse("agreement:qc", args=[study.slug])).text
    assert "1 skip." in page and "k not met for 1 case after skips" in page
    assert "The content is distressing or offensive to me" in page
    skips = study_report(study=study)["quality"]["skips"]
    assert (skips["total"], skips["k_unmet"], skips["per_rater"]) == (1, 1, {"R-01": 1})
