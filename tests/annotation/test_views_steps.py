"""Views before the first item and after the last: who may open them, and what they do."""

import json

import pytest
from django.urls import reverse

from annotation.models import ConsentRecord, StudyFeedback, TrainingAnswer, Withdrawal
from annotation.services import training
from studies.models import Membership
from tests.payloads import full_marks_payload, zero_payload

from ..factories import UserFactory, make_study
from .support import make_item

RATER_PAGES = [
    "annotation:assignments",
    "annotation:next",
    "annotation:consent",
    "annotation:practice",
    "annotation:training",
    "annotation:qualification",
    "annotation:self_check",
    "annotation:feedback",
    "annotation:withdraw",
]


@pytest.mark.parametrize("name", RATER_PAGES)
def test_rater_pages_are_scoped(client, study, rater, lead, stranger, name):
    url = reverse(name, args=[study.slug])
    assert client.get(url).status_code == 302  # anonymous: to sign in
    assert reverse("login") in client.get(url)["Location"]
    client.force_login(stranger)
    assert client.get(url).status_code == 404
    outsider = UserFactory()
    make_study(slug="elsewhere", cases=1, raters=[outsider])
    client.force_login(outsider)
    assert client.get(url).status_code == 404
    client.force_login(lead)
    assert client.get(url).status_code == 403
    client.force_login(rater)
    assert client.get(url).status_code in (200, 302)


@pytest.fixture
def unconsented(db):
    user = UserFactory(username="new-rater")
    study = make_study(slug="consent-study", cases=2, raters=[user])
    study.consent_text = (
        "**Purpose.** Compare responses. Pay: $500.\n\nYou may withdraw at any time."
    )
    study.consent_version = 2  # a version no rater has agreed to, whatever the factory did
    study.save()
    return study, user


def test_no_item_is_shown_before_consent(client, unconsented):
    study, user = unconsented
    rater = Membership.objects.get(user=user)
    assignment = rater.assignments.first()
    client.force_login(user)
    page = client.get(reverse("annotation:assignments", args=[study.slug])).text
    assert "Read and agree" in page and assignment.test_case.case_id not in page
    for url in (
        reverse("annotation:next", args=[study.slug]),
        reverse("annotation:rate", args=[assignment.uuid]),
        reverse("annotation:self_check", args=[study.slug]),
    ):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"] == reverse("annotation:consent", args=[study.slug])
    assert (
        assignment.test_case.prompt
        not in client.get(reverse("annotation:practice", args=[study.slug]), follow=True).text
    )
    draft = client.post(
        reverse("annotation:draft", args=[assignment.uuid]),
        json.dumps({"payload": {}, "version": 0}),
        content_type="application/json",
    )
    assert draft.status_code == 403
    submit = client.post(
        reverse("annotation:rate", args=[assignment.uuid]),
        {"payload": json.dumps(full_marks_payload()), "version": "0"},
    )
    assert submit.status_code == 302 and not assignment.ratings.exists()


def test_consent_page_records_agreement_and_disclosure(client, unconsented):
    study, user = unconsented
    client.force_login(user)
    url = reverse("annotation:consent", args=[study.slug])
    page = client.get(url).text
    assert "<strong>Purpose.</strong>" in page and "prior knowledge" in page
    refused = client.post(url, {"prior_knowledge": "yes", "disclosure": ""})
    assert refused.status_code == 400
    assert "Tick the box" in refused.text and "Describe your prior knowledge" in refused.text
    assert not ConsentRecord.objects.exists()
    done = client.post(url, {"agree": "on", "prior_knowledge": "yes", "disclosure": "Iteration 1"})
    assert done.status_code == 302
    record = ConsentRecord.objects.get()
    assert record.prior_knowledge is True and record.disclosure == "Iteration 1"
    assert "You disclosed prior knowledge" in client.get(url).text
    assert client.get(reverse("annotation:next", args=[study.slug])).status_code == 302
    assert "/rate/" in client.get(reverse("annotation:next", args=[study.slug]))["Location"]


def test_practice_shows_the_practice_case_and_records_nothing(client, rater, study):
    client.force_login(rater)
    response = client.get(reverse("annotation:practice", args=[study.slug]))
    first = study.test_cases.order_by("position").first()
    assert response.status_code == 200
    assert first.prompt in response.text and 'data-mode="practice"' in response.text
    assert "data-draft-url" not in response.text
    for name in study.systems.values_list("name", flat=True):
        assert name not in response.text


def test_a_warned_practice_case_shows_its_warning_before_the_responses(client, rater, study):
    # The practice screen is the rating screen: a case with a content warning (its own or
    # its stratum's) is hidden behind the warning until the rater chooses to see it.
    first = study.test_cases.order_by("position").first()
    first.content_warning = "Describes graphic violence."
    first.save(update_fields=["content_warning"])
    response_text = first.responses.first().text
    client.force_login(rater)
    url = reverse("annotation:practice", args=[study.slug])
    gated = client.get(url).text
    assert "Describes graphic violence." in gated and "Skip the practice" in gated
    assert first.prompt not in gated and response_text not in gated
    shown = client.get(url + "?show=1").text
    assert first.prompt in shown and response_text in shown
    assert "Describes graphic violence." in shown


def test_training_example_shows_the_coordinators_answers_after_answering(client, rater, study):
    item = make_item(study, key=full_marks_payload())
    client.force_login(rater)
    listing = client.get(reverse("annotation:training", args=[study.slug])).text
    assert item.title in listing
    url = reverse("annotation:training_item", args=[study.slug, item.uuid])
    before = client.get(url).text
    assert "Check my answers" in before and "Staged release counts" not in before
    response = client.post(url, {"payload": json.dumps(zero_payload())})
    assert response.status_code == 302
    after = client.get(url).text
    assert "Your answers and the coordinator" in after
    assert "<strong>one</strong>" in after  # the explanation, rendered
    assert TrainingAnswer.objects.filter(item=item).count() == 1
    assert "Check my answers" in client.get(url + "?again=1").text


def test_a_rater_cannot_open_qualification_items_or_unkeyed_items_by_id(client, rater, study):
    quiz = make_item(study, "qualification", full_marks_payload())
    draft = make_item(study, "training")
    client.force_login(rater)
    for item in (quiz, draft):
        assert (
            client.get(
                reverse("annotation:training_item", args=[study.slug, item.uuid])
            ).status_code
            == 404
        )


def test_qualification_flow_gates_rating_until_passed(client, rater, study):
    items = [make_item(study, "qualification", full_marks_payload(), f"Q{n}") for n in (1, 2)]
    client.force_login(rater)
    url = reverse("annotation:qualification", args=[study.slug])
    assert client.get(reverse("annotation:next", args=[study.slug]))["Location"] == url
    assert "Start the test" in client.get(url).text
    client.post(url, {"start": "1"})
    page = client.get(url).text
    assert "Qualification item 1 of 2" in page and items[0].prompt in page
    for item in items:
        client.post(url, {"item": str(item.uuid), "payload": json.dumps(full_marks_payload())})
    assert "You passed" in client.get(url).text
    assert "/rate/" in client.get(reverse("annotation:next", args=[study.slug]))["Location"]


def test_qualification_result_names_misses_without_revealing_the_key(client, rater, study):
    item = make_item(study, "qualification", full_marks_payload())
    training.onboarding_settings_save(study=study, max_attempts=1)
    client.force_login(rater)
    url = reverse("annotation:qualification", args=[study.slug])
    client.post(url, {"start": "1"})
    client.post(url, {"item": str(item.uuid), "payload": json.dumps(zero_payload())})
    page = client.get(url).text
    assert "not passed" in page and "used every attempt" in page
    assert "depth" in page  # the dimension outside the tolerance
    # Each dimension's share, and the rule on the page.
    assert 'id="dimension-results"' in page and "Depth of Analysis: 0 of 2 within" in page
    assert 'id="pass-rule"' in page and "on every dimension" in page.replace("<strong>", "")
    assert client.post(url, {"start": "1"}).status_code == 400


def test_self_check_lists_the_raters_counted_items(client, rater, study, membership):
    assignment = membership.assignments.first()
    payload = full_marks_payload()
    payload["responses"]["A"]["depth"]["items"][0]["text"] = "Competitive pressure"
    client.force_login(rater)
    client.post(
        reverse("annotation:rate", args=[assignment.uuid]),
        {"payload": json.dumps(payload), "version": "0"},
    )
    page = client.get(reverse("annotation:self_check", args=[study.slug])).text
    assert "Competitive pressure" in page and assignment.rater_label in page
    for name in study.systems.values_list("name", flat=True):
        assert name not in page


def test_self_check_page_shows_points_counted_offline(client, rater, study, membership):
    assignment = membership.assignments.first()
    client.force_login(rater)
    client.post(
        reverse("annotation:rate", args=[assignment.uuid]),
        {"payload": json.dumps(full_marks_payload()), "version": "0"},
    )
    rating = assignment.ratings.get(label="A")
    rating.scores["depth"] = {"items": None, "points": 4, "flagged": False, "flag_note": ""}
    rating.save()
    page = client.get(reverse("annotation:self_check", args=[study.slug])).text
    assert "4 points (counted offline)" in page


def test_the_last_submit_leads_to_the_self_check(client, rater, study, membership):
    client.force_login(rater)
    for version, assignment in enumerate(membership.assignments.order_by("position")):
        response = client.post(
            reverse("annotation:rate", args=[assignment.uuid]),
            {"payload": json.dumps(full_marks_payload()), "version": "0"},
        )
        assert response.status_code == 302, version
    assert response["Location"] == reverse("annotation:self_check", args=[study.slug])


def test_feedback_form_is_recorded(client, rater, study):
    client.force_login(rater)
    url = reverse("annotation:feedback", args=[study.slug])
    assert "How clear was Depth of Analysis?" in client.get(url).text
    response = client.post(
        url,
        {"clarity_depth": "unclear", "comment_depth": "Granularity", "patterns": "A longer"},
    )
    assert response.status_code == 302
    feedback = StudyFeedback.objects.get()
    assert feedback.dimensions["depth"] == {"clarity": "unclear", "comment": "Granularity"}
    assert feedback.patterns == "A longer"
    assert 'value="Granularity"' in client.get(url).text


def test_withdrawal_page_records_the_choice_and_stops_rating(client, rater, study, membership):
    client.force_login(rater)
    url = reverse("annotation:withdraw", args=[study.slug])
    assert client.post(url, {"ratings": "keep"}).status_code == 400  # not confirmed
    response = client.post(url, {"ratings": "delete", "confirm": "on", "reason": "Time"})
    assert response.status_code == 302
    withdrawal = Withdrawal.objects.get()
    assert withdrawal.data == "delete" and withdrawal.reason == "Time"
    membership.refresh_from_db()
    assert membership.status == Membership.Status.WITHDRAWN
    assert "You withdrew" in client.get(reverse("annotation:assignments", args=[study.slug])).text
    rate = client.get(reverse("annotation:rate", args=[membership.assignments.first().uuid]))
    assert rate.status_code == 302


def test_a_garbled_qualification_answer_gets_a_message_not_an_error(client, rater, study):
    make_item(study, "qualification", full_marks_payload())
    client.force_login(rater)
    url = reverse("annotation:qualification", args=[study.slug])
    client.post(url, {"start": "1"})
    response = client.post(url, {"item": "not-a-uuid", "payload": "{}"})
    assert response.status_code in (200, 400)
    assert "not part of the test" in response.text


@pytest.mark.django_db
def test_self_check_folds_long_lists_of_counted_items(client):
    from annotation.services import rating_submit

    from .support import consent_all

    user = UserFactory()
    study = make_study(slug="long-self-check", cases=6, raters=[user])
    consent_all(study)
    membership = Membership.objects.get(study=study, user=user)
    for assignment in membership.assignments.order_by("position"):
        rating_submit(assignment=assignment, payload=full_marks_payload(), expected_version=0)
    client.force_login(user)
    page = client.get(reverse("annotation:self_check", args=[study.slug])).text
    # Six cases: each dimension's counted items folded, with the number of cases shown.
    assert page.count('<details class="counted-details">') == 3
    assert "(6 cases; show or hide)" in page
    assert 'class="counted-details" open' not in page
