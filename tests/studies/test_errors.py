"""Only an ApplicationError becomes a message for the user; anything else is a logged 500."""

import json
import logging

import pytest
from django.urls import reverse

from annotation import services as annotation_services
from studies import services
from studies.errors import ApplicationError
from studies.models import Study
from tests.payloads import full_marks_payload

from ..factories import make_study


@pytest.fixture
def draft(lead):
    return make_study(lead=lead, slug="errors", cases=1, status=Study.Status.DRAFT)


def post_settings(client, study, **changes):
    data = {
        "name": study.name, "description": "", "instructions": "New", "consent_text": "",
        "disclosure_question": study.disclosure_question, "blinding_seed": study.blinding_seed,
        "raters_per_item": "", "side_mode": study.side_mode, "case_layout": study.case_layout,
        "success_alpha": study.success_alpha,
        "success_min_dimensions": study.success_min_dimensions,
    }  # fmt: skip
    return client.post(reverse("studies:edit", args=[study.slug]), data)


def broken(error):
    def service(**kwargs):
        raise error

    return service


def test_a_programming_error_in_a_form_view_is_a_logged_500(
    client, lead, draft, monkeypatch, caplog
):
    monkeypatch.setattr(services, "study_update", broken(RuntimeError("a bug, not a message")))
    client.force_login(lead)
    client.raise_request_exception = False
    with caplog.at_level(logging.ERROR, logger="django.request"):
        response = post_settings(client, draft)
    assert response.status_code == 500
    assert "a bug, not a message" not in response.text
    assert any(record.name == "django.request" for record in caplog.records)


def test_a_plain_value_error_is_a_500_too(client, lead, draft, monkeypatch):
    monkeypatch.setattr(services, "study_update", broken(ValueError("int() of 'x'")))
    client.force_login(lead)
    client.raise_request_exception = False
    assert post_settings(client, draft).status_code == 500


def test_an_application_error_is_a_form_message(client, lead, draft, monkeypatch):
    monkeypatch.setattr(services, "study_update", broken(ApplicationError("Not now, please.")))
    client.force_login(lead)
    response = post_settings(client, draft)
    assert response.status_code == 400
    assert "Not now, please." in response.text


def test_a_programming_error_while_rating_is_a_500_not_a_message(client, lead, rater, monkeypatch):
    study = make_study(lead=lead, slug="rate", cases=1, raters=[rater], consented=True)
    assignment = study.memberships.get(user=rater).assignments.get()
    monkeypatch.setattr(annotation_services, "rating_submit", broken(ValueError("a bug")))
    client.force_login(rater)
    client.raise_request_exception = False
    response = client.post(
        reverse("annotation:rate", args=[assignment.uuid]),
        {"payload": json.dumps(full_marks_payload()), "version": "0"},
    )
    assert response.status_code == 500
