import json

import pytest
from django.urls import reverse

from annotation.models import Rating
from jobs.models import Job
from jobs.services import job_create
from studies.models import Membership
from studies.services import rater_pause_automatic, rater_status_change
from tests.payloads import full_marks_payload

from ..factories import UserFactory, make_study


@pytest.fixture
def assignment(membership):
    return membership.assignments.first()


def rate_url(assignment):
    return reverse("annotation:rate", args=[assignment.uuid])


def test_anonymous_visitors_are_sent_to_sign_in(client, assignment):
    response = client.get(rate_url(assignment))
    assert response.status_code == 302
    assert reverse("login") in response["Location"]


def test_rater_sees_their_cases_with_progress(client, rater, study, assignment):
    client.force_login(rater)
    response = client.get(reverse("annotation:assignments", args=[study.slug]))
    assert response.status_code == 200
    assert "0 of 4 done" in response.text
    client.post(
        rate_url(assignment),
        {"payload": json.dumps(full_marks_payload()), "version": "0", "active_seconds": "5"},
    )
    response = client.get(reverse("annotation:assignments", args=[study.slug]))
    assert "1 of 4 done" in response.text


def test_rater_cannot_open_another_raters_assignment(client, other_rater, assignment):
    client.force_login(other_rater)
    assert client.get(rate_url(assignment)).status_code == 404
    response = client.post(
        reverse("annotation:draft", args=[assignment.uuid]),
        data=json.dumps({"payload": {}, "version": 0}),
        content_type="application/json",
    )
    assert response.status_code == 404


def test_rater_of_another_study_gets_404(client, study, assignment):
    outsider = UserFactory()
    make_study(slug="other-study", raters=[outsider])
    client.force_login(outsider)
    assert client.get(rate_url(assignment)).status_code == 404
    assert client.get(reverse("annotation:assignments", args=[study.slug])).status_code == 404


def test_stranger_gets_404_for_study_pages(client, stranger, study):
    client.force_login(stranger)
    assert client.get(reverse("annotation:assignments", args=[study.slug])).status_code == 404
    assert client.get(reverse("annotation:overview", args=[study.slug])).status_code == 404


def test_rater_gets_403_on_coordinator_pages(client, rater, study):
    client.force_login(rater)
    assert client.get(reverse("annotation:overview", args=[study.slug])).status_code == 403


def test_lead_sees_progress_by_pseudonym_only(client, lead, rater, study):
    client.force_login(lead)
    response = client.get(reverse("annotation:overview", args=[study.slug]))
    assert response.status_code == 200
    assert "R-01" in response.text
    assert rater.username not in response.text


def test_submit_then_redirects_to_the_next_unrated_case(client, rater, membership, assignment):
    client.force_login(rater)
    response = client.post(
        rate_url(assignment), {"payload": json.dumps(full_marks_payload()), "version": "0"}
    )
    following = membership.assignments.exclude(pk=assignment.pk).order_by("position").first()
    assert response.status_code == 302
    assert response["Location"] == rate_url(following)
    assert Rating.objects.filter(assignment=assignment).count() == 2


def test_invalid_submit_shows_the_problem_and_saves_nothing(client, rater, assignment):
    client.force_login(rater)
    response = client.post(
        rate_url(assignment),
        {"payload": json.dumps(full_marks_payload(confidence="")), "version": "0"},
    )
    assert response.status_code == 400
    assert "Choose your confidence" in response.text
    assert not Rating.objects.exists()


def test_garbled_payload_is_refused_clearly(client, rater, assignment):
    client.force_login(rater)
    response = client.post(rate_url(assignment), {"payload": "{not json", "version": "0"})
    assert response.status_code == 400
    assert "could not be read" in response.text


def test_draft_autosave_and_stale_tab(client, rater, assignment):
    client.force_login(rater)
    url = reverse("annotation:draft", args=[assignment.uuid])
    first = client.post(
        url,
        json.dumps({"payload": full_marks_payload(), "version": 0}),
        content_type="application/json",
    )
    assert first.status_code == 200
    assert first.json()["version"] == 1
    stale = client.post(
        url, json.dumps({"payload": {}, "version": 0}), content_type="application/json"
    )
    assert stale.status_code == 409
    assert "another tab" in stale.json()["error"]
    assignment.refresh_from_db()
    assert assignment.draft["confidence"] == "high"


def test_rating_page_never_reveals_which_system_is_which(client, rater, assignment, study):
    client.force_login(rater)
    pages = [
        client.get(rate_url(assignment)).text,
        client.get(reverse("annotation:assignments", args=[study.slug])).text,
        client.get(reverse("home")).text,
    ]
    system_names = list(study.systems.values_list("name", flat=True))
    response_ids = [str(u) for u in assignment.test_case.responses.values_list("uuid", flat=True)]
    for page in pages:
        for secret in system_names + response_ids:
            assert secret not in page
    # The responses appear under their labels, in label order, whatever system wrote them.
    page = pages[0]
    labels = {row.label: row.response.text for row in assignment.test_case.labels.all()}
    assert page.index(labels["A"]) < page.index(labels["B"])


def test_response_text_is_rendered_safely(client, rater, assignment):
    response = assignment.test_case.labels.get(label="A").response
    response.text = "Plan <script>alert('x')</script> **bold**"
    response.save()
    client.force_login(rater)
    page = client.get(rate_url(assignment)).text
    assert "<script>alert('x')</script>" not in page
    assert "&lt;script&gt;" in page
    assert "<strong>bold</strong>" in page


def test_paused_rater_can_read_but_not_submit(client, rater, membership, assignment):
    membership.status = Membership.Status.PAUSED
    membership.save()
    client.force_login(rater)
    page = client.get(rate_url(assignment)).text
    assert "Your participation in this study is on hold." in page
    assert study_lead_name(membership) in page
    assert "You can revise" not in page
    response = client.post(
        rate_url(assignment), {"payload": json.dumps(full_marks_payload()), "version": "0"}
    )
    assert response.status_code == 400
    assert not Rating.objects.exists()


def study_lead_name(membership):
    lead = membership.study.lead
    return lead.get_full_name() or lead.get_username()


def test_paused_rater_is_told_on_the_study_and_home_pages(client, rater, membership, study):
    membership.status = Membership.Status.PAUSED
    membership.save()
    client.force_login(rater)
    page = client.get(reverse("annotation:assignments", args=[study.slug])).text
    assert "Your participation in this study is on hold." in page
    assert "Next unrated case" not in page
    assert "On hold" in client.get(reverse("home")).text


def test_excluded_rater_is_told_their_participation_ended(client, rater, membership, assignment):
    membership.status = Membership.Status.EXCLUDED
    membership.save()
    client.force_login(rater)
    page = client.get(rate_url(assignment)).text
    assert "Your participation in this study has ended." in page
    assert "not accepting ratings" not in page


def test_closed_study_says_so_once_without_offering_revisions(client, rater, study, assignment):
    client.force_login(rater)
    client.post(rate_url(assignment), {"payload": json.dumps(full_marks_payload()), "version": "0"})
    study.status = study.Status.CLOSED
    study.save()
    page = client.get(rate_url(assignment)).text
    assert "This study is closed" in page
    assert "You can revise" not in page
    assert "not accepting ratings" not in page
    assert "Closed" in client.get(reverse("home")).text


def test_draft_study_tells_invited_raters_it_has_not_started(client, rater, study):
    study.status = study.Status.DRAFT
    study.save()
    client.force_login(rater)
    page = client.get(reverse("annotation:assignments", args=[study.slug])).text
    assert "This study has not started yet." in page
    assert "submitted." not in page
    for name in ("consent", "practice", "training", "qualification", "next"):
        response = client.get(reverse(f"annotation:{name}", args=[study.slug]))
        assert response.status_code == 302
        assert response["Location"] == reverse("annotation:assignments", args=[study.slug])
    assert "Not started yet" in client.get(reverse("home")).text


def test_withdrawn_study_on_the_home_page(client, rater, membership):
    membership.status = Membership.Status.WITHDRAWN
    membership.save()
    client.force_login(rater)
    page = client.get(reverse("home")).text
    assert "You withdrew" in page
    assert "0 of 4 done" not in page


def test_revising_the_last_case_does_not_say_last_case_again(client, rater, membership):
    client.force_login(rater)
    assignments = list(membership.assignments.order_by("position"))
    for assignment in assignments:
        last = client.post(
            rate_url(assignment),
            {"payload": json.dumps(full_marks_payload()), "version": "0"},
            follow=True,
        )
    assert "That was the last case" in last.text  # the first time, it was
    first = assignments[0]
    first.refresh_from_db()
    response = client.post(
        rate_url(first),
        {"payload": json.dumps(full_marks_payload(confidence="low")), "version": first.version},
        follow=True,
    )
    page = response.text
    assert "That was the last case" not in page
    assert f"Your revision of {first.rater_label} is saved." in page
    assert response.redirect_chain[-1][0] == reverse(
        "annotation:assignments", args=[membership.study.slug]
    )


def test_a_refused_field_is_named_for_the_page(client, rater, assignment):
    client.force_login(rater)
    payload = full_marks_payload()
    del payload["confidence"]
    page = client.post(rate_url(assignment), {"payload": json.dumps(payload), "version": "0"})
    assert page.status_code == 400
    assert 'data-field="confidence"' in page.text
    payload = full_marks_payload()
    payload["responses"]["B"]["evidence"] = "not an answer"
    page = client.post(rate_url(assignment), {"payload": json.dumps(payload), "version": "0"})
    assert 'data-field="B-evidence"' in page.text


def test_draft_endpoint_answers_an_expired_session_in_json(client, assignment):
    response = client.post(
        reverse("annotation:draft", args=[assignment.uuid]),
        json.dumps({"payload": full_marks_payload(), "version": 0}),
        content_type="application/json",
    )
    assert response.status_code == 401
    body = response.json()
    assert body["signed_out"] is True and "expired" in body["error"]
    assert body["login_url"].startswith(reverse("login"))
    assignment.refresh_from_db()
    assert assignment.version == 0


def test_draft_endpoint_only_takes_posts(client, rater, assignment):
    client.force_login(rater)
    assert client.get(reverse("annotation:draft", args=[assignment.uuid])).status_code == 405


def test_stale_submit_keeps_the_tabs_answers_and_its_old_version(client, rater, assignment):
    from annotation import services

    services.draft_save(assignment=assignment, payload=full_marks_payload(), expected_version=0)
    client.force_login(rater)
    mine = full_marks_payload(confidence="low")
    mine["notes"] = "From the older tab"
    response = client.post(rate_url(assignment), {"payload": json.dumps(mine), "version": "0"})
    assert response.status_code == 409
    assert "From the older tab" in response.text  # the answers are on the page again
    assert 'data-stale data-current-version="1"' in response.text
    assert 'id="version" value="0"' in response.text  # a second click is refused too
    assert "Submit the answers on this page instead" in response.text
    # The footer says so too, never "Saved".
    assert "Not submitted: this case was saved elsewhere." in response.text
    assert ">Saved<" not in response.text
    assert not Rating.objects.exists()
    # Choosing to replace the newer version sends the current version: it is accepted.
    replaced = client.post(rate_url(assignment), {"payload": json.dumps(mine), "version": "1"})
    assert replaced.status_code == 302
    assignment.refresh_from_db()
    assert assignment.notes == "From the older tab"


def test_rating_page_offers_flags_navigation_help_and_shortcuts(client, rater, membership):
    cases = list(membership.assignments.order_by("position"))
    client.force_login(rater)
    page = client.get(rate_url(cases[1])).text
    assert "Case 2 <span" in page and "· 2 of 4 in your list" in page
    assert "case 2 of 4" not in page  # not "Case 2 case 2 of 4"
    assert reverse("annotation:rate", args=[cases[0].uuid]) in page
    assert reverse("annotation:rate", args=[cases[2].uuid]) in page
    assert page.count("data-flag ") + page.count("data-flag>") == 10  # 5 dimensions x 2 responses
    assert 'id="help"' in page and 'id="shortcuts"' in page
    assert 'data-local-key="rate:' in page


def test_rate_page_query_count_stays_flat(client, rater, assignment, django_assert_max_num_queries):
    client.force_login(rater)
    with django_assert_max_num_queries(30):
        assert client.get(rate_url(assignment)).status_code == 200


def test_a_submit_without_its_version_is_refused_clearly(client, rater, assignment):
    client.force_login(rater)
    response = client.post(rate_url(assignment), {"payload": json.dumps(full_marks_payload())})
    assert response.status_code == 400
    assert "which version" in response.text
    assert not Rating.objects.exists()
    assignment.refresh_from_db()
    assert assignment.version == 0


def test_an_oversized_draft_is_refused_clearly(client, rater, assignment):
    from annotation.services import MAX_DRAFT_BYTES

    client.force_login(rater)
    payload = {**full_marks_payload(), "padding": "x" * MAX_DRAFT_BYTES}
    response = client.post(
        reverse("annotation:draft", args=[assignment.uuid]),
        json.dumps({"payload": payload, "version": 0}),
        content_type="application/json",
    )
    assert response.status_code == 413
    assert "too large" in response.json()["error"]
    assignment.refresh_from_db()
    assert (assignment.version, assignment.draft) == (0, {})


def test_a_body_past_djangos_own_bound_is_answered_in_json_the_page_shows(
    client, rater, assignment
):
    """20 MB: Django refuses to read it at all (DATA_UPLOAD_MAX_MEMORY_SIZE, 12 MB), which
    used to answer the autosave with an HTML page it could not show."""
    client.force_login(rater)
    body = json.dumps({"payload": {"notes": "x" * (20 * 2**20)}, "version": 0})
    response = client.post(
        reverse("annotation:draft", args=[assignment.uuid]),
        body,
        content_type="application/json",
        HTTP_ACCEPT="application/json",
    )
    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert "too large" in response.json()["error"]  # rating.js shows body.error
    assignment.refresh_from_db()
    assert (assignment.version, assignment.draft) == (0, {})


def test_another_json_request_django_refuses_is_answered_in_json(client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10
    response = client.post(reverse("login"), {"a": "x" * 100}, HTTP_ACCEPT="application/json")
    assert response.status_code == 413 and "too large" in response.json()["error"]


def test_a_save_bringing_the_stored_answers_with_an_older_version_is_no_conflict(
    client, rater, assignment
):
    # The page's save as it unloads lands after the reloaded page was rendered: the new
    # page sends the same answers at the version it was rendered at.
    client.force_login(rater)
    url = reverse("annotation:draft", args=[assignment.uuid])

    def save(payload, version):
        body = json.dumps({"payload": payload, "version": version})
        return client.post(url, body, content_type="application/json")

    assert save(full_marks_payload(), 0).json()["version"] == 1
    again = save(full_marks_payload(), 0)
    assert again.status_code == 200 and again.json()["version"] == 1  # nothing new written
    different = save({**full_marks_payload(), "notes": "something else"}, 0)
    assert different.status_code == 409


def test_an_autosave_refused_by_a_pause_brings_the_pages_banner(client, rater, assignment, lead):
    client.force_login(rater)
    url = reverse("annotation:draft", args=[assignment.uuid])
    body = json.dumps({"payload": full_marks_payload(), "version": 0})
    rater_status_change(membership=assignment.rater, action="pause", reason="Look", actor=lead)
    refused = client.post(url, body, content_type="application/json")
    assert refused.status_code == 403 and refused.json()["closed"] is True
    assert "An administrator has paused it" in refused.json()["hold"]
    rater_status_change(membership=assignment.rater, action="reinstate", reason="ok", actor=lead)
    rater_pause_automatic(
        membership_id=assignment.rater_id, rule="QC-001", reason="Gold accuracy low", evidence={}
    )
    banner = client.post(url, body, content_type="application/json").json()["hold"]
    assert "paused automatically" in banner and "gold" not in banner.lower()
    page = client.get(rate_url(assignment)).text
    assert "paused automatically" in page and "An administrator has paused it" not in page


def test_a_rater_whose_cases_are_on_the_way_is_told_so(client, rater, membership, study):
    membership.assignments.all().delete()
    client.force_login(rater)
    page = client.get(reverse("annotation:assignments", args=[study.slug])).text
    assert "No cases have been assigned to you yet" in page and "0 of 0" not in page
    job_create(kind=Job.Kind.ASSIGN, study_id=study.pk)
    page = client.get(reverse("annotation:assignments", args=[study.slug])).text
    assert "Your cases are being assigned" in page and "0 of 0" not in page
    home = client.get(reverse("home")).text
    assert "No cases assigned yet" in home and "0 of 0" not in home
