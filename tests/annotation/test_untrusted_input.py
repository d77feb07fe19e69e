"""Input that used to cost a 500: JSON nested 100,000 deep and NUL characters, at every
entry point of the rating side. Each is refused with a message and writes nothing."""

import hashlib
import html
import json

import pytest
from django.urls import reverse

from annotation.models import (
    Assignment,
    ConsentRecord,
    QualificationAttempt,
    Rating,
    StudyFeedback,
    TrainingAnswer,
    TrainingItem,
    Withdrawal,
)
from studies.models import Membership, StudyEvent
from tests.payloads import full_marks_payload

from ..factories import UserFactory, make_study
from .support import make_item

DEPTH = 100_000


def deep_json() -> str:
    """A value nested 100,000 deep: 200 KB of brackets, past any recursion limit."""
    return "[" * DEPTH + "]" * DEPTH


def deep_payload() -> str:
    return '{"responses": {"A": {"depth": {"items": ' + deep_json() + "}}}}"


def with_nul(where: str) -> dict:
    """A full-marks payload with a NUL character in one text the rater types."""
    payload = full_marks_payload()
    if where == "item":
        payload["responses"]["A"]["depth"]["items"][0]["text"] = "factor\x00one"
    elif where == "flag note":
        payload["responses"]["B"]["depth"].update(flagged=True, flag_note="hard\x00")
    elif where == "notes":
        payload["notes"] = "see\x00above"
    else:  # a key
        payload["responses"]["A"]["depth\x00"] = {}
    return payload


NUL_PLACES = ["item", "flag note", "notes", "key"]


def written() -> str:
    """Everything these entry points could write, as one fingerprint."""
    state = {
        "assignments": list(
            Assignment.objects.order_by("pk").values_list(
                "pk", "status", "version", "draft", "notes", "active_seconds"
            )
        ),
        "ratings": Rating.objects.count(),
        "answers": list(TrainingAnswer.objects.values_list("pk", "answer")),
        "keys": list(TrainingItem.objects.order_by("pk").values_list("pk", "key", "title")),
        "attempts": list(QualificationAttempt.objects.values_list("pk", "finished_at")),
        "consents": ConsentRecord.objects.count(),
        "feedback": StudyFeedback.objects.count(),
        "withdrawals": Withdrawal.objects.count(),
        "memberships": list(Membership.objects.order_by("pk").values_list("pk", "status")),
        "events": StudyEvent.objects.count(),
    }
    return hashlib.sha256(json.dumps(state, default=str).encode()).hexdigest()


@pytest.fixture
def assignment(membership):
    return membership.assignments.order_by("position").first()


def draft(client, assignment, payload_json: str):
    return client.post(
        reverse("annotation:draft", args=[assignment.uuid]),
        '{"payload": ' + payload_json + ', "version": 0, "active_seconds": 5}',
        content_type="application/json",
    )


# The rating screen: autosave and submit ------------------------------------------------


@pytest.mark.parametrize("payload", [deep_payload, lambda: "[" * 40 + "]" * 40])
def test_a_deeply_nested_draft_is_refused_and_saves_nothing(client, rater, assignment, payload):
    client.force_login(rater)
    before = written()
    response = draft(client, assignment, payload())
    assert response.status_code == 400
    assert "nested more than 32 levels deep" in response.json()["error"]
    assert written() == before


def test_a_deeply_nested_submit_is_refused_with_a_message(client, rater, assignment):
    client.force_login(rater)
    before = written()
    response = client.post(
        reverse("annotation:rate", args=[assignment.uuid]),
        {"payload": deep_payload(), "version": "0"},
    )
    assert response.status_code == 400
    assert "nested more than 32 levels deep" in response.text
    assert written() == before


@pytest.mark.parametrize("place", NUL_PLACES)
def test_a_nul_character_in_a_draft_is_refused(client, rater, assignment, place):
    client.force_login(rater)
    before = written()
    response = draft(client, assignment, json.dumps(with_nul(place)))
    assert response.status_code == 400 and "NUL character" in response.json()["error"]
    assert written() == before


@pytest.mark.parametrize("place", NUL_PLACES)
def test_a_nul_character_in_a_submit_is_refused_with_a_message(client, rater, assignment, place):
    client.force_login(rater)
    before = written()
    response = client.post(
        reverse("annotation:rate", args=[assignment.uuid]),
        {"payload": json.dumps(with_nul(place)), "version": "0"},
    )
    assert response.status_code == 400
    assert "NUL character" in response.text
    assert written() == before


def with_surrogate(where: str) -> dict:
    """The NUL places again, each with half of a UTF-16 pair alone ("\\ud800" in the JSON)."""
    text = json.dumps(with_nul(where)).replace("\\u0000", "\\ud800")
    return json.loads(text)


SURROGATE_FIELDS = {
    "item": "the field {}responses.A.depth.items[0].text",
    "flag note": "the field {}responses.B.depth.flag_note",
    "notes": "the field {}notes",
    "key": "a field name in {}responses.A",
}


def named(place: str, prefix: str = "") -> str:
    """How the refusal names the place: the rating form's own payload, or the draft's body,
    which holds it as "payload"."""
    return SURROGATE_FIELDS[place].format('"' + prefix) + '"'


@pytest.mark.parametrize("place", NUL_PLACES)
def test_a_lone_surrogate_in_a_draft_is_refused_with_its_field(client, rater, assignment, place):
    client.force_login(rater)
    before = written()
    response = draft(client, assignment, json.dumps(with_surrogate(place)))
    assert response.status_code == 400
    error = response.json()["error"]
    assert "lone surrogate (\\ud800)" in error and named(place, "payload.") in error
    assert written() == before


@pytest.mark.parametrize("place", NUL_PLACES)
def test_a_lone_surrogate_in_a_submit_is_refused_with_its_field(client, rater, assignment, place):
    client.force_login(rater)
    before = written()
    response = client.post(
        reverse("annotation:rate", args=[assignment.uuid]),
        {"payload": json.dumps(with_surrogate(place)), "version": "0"},
    )
    assert response.status_code == 400
    assert "lone surrogate (\\ud800)" in response.text
    assert html.escape(named(place)) in response.text
    assert written() == before


def test_a_lone_surrogate_sent_in_a_form_arrives_as_replacement_characters(client, rater, study):
    """A form's fields cannot carry one: Django decodes a form body's UTF-8 with errors
    replaced, so the bytes of a lone surrogate arrive as U+FFFD, which can be stored, and
    only JSON's "\\ud800" escape can make one (refused above, and in the API's bodies)."""
    client.force_login(rater)
    response = client.post(
        reverse("annotation:withdraw", args=[study.slug]),
        "ratings=keep&reason=time%ED%A0%80",
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code != 500
    assert response.wsgi_request.POST["reason"] == "time\ufffd\ufffd\ufffd"


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ('{"notes": NaN}', "not a number JSON allows"),
        ('{"notes": -Infinity}', "not a number JSON allows"),
        ('{"notes": 1e400}', "too large to store"),
        ('{"notes": ' + "9" * 5000 + "}", "number longer than"),
    ],
)
def test_numbers_jsonb_cannot_store_are_refused(client, rater, assignment, raw, text):
    client.force_login(rater)
    before = written()
    response = client.post(
        reverse("annotation:rate", args=[assignment.uuid]), {"payload": raw, "version": "0"}
    )
    assert response.status_code == 400 and text in response.text
    assert draft(client, assignment, raw).status_code == 400
    assert written() == before


# Training, the answer key, qualification, the rubric preview ---------------------------


@pytest.mark.parametrize("payload", [deep_payload, lambda: json.dumps(with_nul("item"))])
def test_training_answers_refuse_deep_json_and_nul(client, rater, study, payload):
    item = make_item(study, key=full_marks_payload())
    client.force_login(rater)
    before = written()
    response = client.post(
        reverse("annotation:training_item", args=[study.slug, item.uuid]), {"payload": payload()}
    )
    assert response.status_code == 400 and "could not be read" in response.text
    assert written() == before


@pytest.mark.parametrize("payload", [deep_payload, lambda: json.dumps(with_nul("flag note"))])
def test_the_answer_key_refuses_deep_json_and_nul(client, lead, study, payload):
    item = make_item(study, key=full_marks_payload())
    client.force_login(lead)
    before = written()
    response = client.post(
        reverse("annotation:training_item_key", args=[study.slug, item.uuid]),
        {"payload": payload()},
    )
    assert response.status_code == 400 and "could not be read" in response.text
    assert written() == before


@pytest.mark.parametrize("payload", [deep_payload, lambda: json.dumps(with_nul("notes"))])
def test_qualification_answers_refuse_deep_json_and_nul(client, rater, study, payload):
    item = make_item(study, "qualification", full_marks_payload())
    client.force_login(rater)
    url = reverse("annotation:qualification", args=[study.slug])
    client.post(url, {"start": "1"})
    before = written()
    response = client.post(url, {"item": str(item.uuid), "payload": payload()})
    assert response.status_code == 400 and "could not be read" in response.text
    assert written() == before
    assert not QualificationAttempt.objects.get().answers.exists()


def test_the_rubric_preview_answers_deep_json_with_a_message(client, lead, study):
    client.force_login(lead)
    before = written()
    response = client.post(
        reverse("annotation:rubric_preview", args=[study.slug]),
        {"payload": deep_payload()},
        follow=True,
    )
    assert response.status_code == 200
    assert "this would be refused" in response.text and "nested more than" in response.text
    assert written() == before


# Forms: Django's CharField refuses NUL; each page says so and writes nothing ------------


@pytest.fixture
def unconsented(db):
    user = UserFactory(username="new-rater")
    study = make_study(slug="consent-study", cases=2, raters=[user])
    study.consent_text = "Compare responses."
    study.disclosure_question = "Do you know the research?"
    study.consent_version = 2
    study.save()
    return study, user


def test_a_nul_in_the_consent_disclosure_is_refused(client, unconsented):
    study, user = unconsented
    client.force_login(user)
    before = written()
    response = client.post(
        reverse("annotation:consent", args=[study.slug]),
        {"agree": "on", "prior_knowledge": "yes", "disclosure": "I read\x00 it"},
    )
    assert response.status_code == 400 and "Null characters are not allowed" in response.text
    assert written() == before


@pytest.mark.parametrize("field", ["suggestions", "patterns", "notes", "comment_depth"])
def test_a_nul_in_feedback_is_refused(client, rater, study, field):
    client.force_login(rater)
    before = written()
    response = client.post(
        reverse("annotation:feedback", args=[study.slug]),
        {"clarity_depth": "clear", field: "a\x00"},
    )
    assert response.status_code == 400 and "Null characters are not allowed" in response.text
    assert written() == before


def test_a_nul_in_a_withdrawal_reason_is_refused(client, rater, study):
    client.force_login(rater)
    before = written()
    response = client.post(
        reverse("annotation:withdraw", args=[study.slug]),
        {"ratings": "keep", "confirm": "on", "reason": "time\x00"},
    )
    assert response.status_code == 400 and "Null characters are not allowed" in response.text
    assert written() == before


def test_a_nul_in_a_training_item_is_refused(client, lead, study):
    client.force_login(lead)
    before = written()
    response = client.post(
        reverse("annotation:training_item_new", args=[study.slug]) + "?kind=training",
        {"title": "Example\x00", "prompt": "P", "response_a": "a", "response_b": "b"},
    )
    assert response.status_code == 400 and "Null characters are not allowed" in response.text
    assert written() == before
