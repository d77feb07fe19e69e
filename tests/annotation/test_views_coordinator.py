import json

import pytest
from django.urls import reverse

from annotation.models import OnboardingSettings, TrainingItem
from tests.payloads import full_marks_payload

from .support import make_item


@pytest.fixture
def item(study):
    return make_item(study, "qualification")


def coordinator_urls(study, item):
    return [
        ("get", reverse("annotation:onboarding", args=[study.slug])),
        ("get", reverse("annotation:training_item_new", args=[study.slug])),
        ("get", reverse("annotation:training_item_edit", args=[study.slug, item.uuid])),
        ("get", reverse("annotation:training_item_key", args=[study.slug, item.uuid])),
        ("post", reverse("annotation:training_item_delete", args=[study.slug, item.uuid])),
    ]


def test_coordinator_pages_are_scoped(client, study, item, rater, stranger):
    for method, url in coordinator_urls(study, item):
        assert getattr(client, method)(url).status_code == 302
        client.force_login(stranger)
        assert getattr(client, method)(url).status_code == 404
        client.force_login(rater)
        assert getattr(client, method)(url).status_code == 403
        client.logout()
    assert TrainingItem.objects.filter(pk=item.pk).exists()


def test_another_studys_item_is_not_found(client, lead, study, item):
    from ..factories import make_study

    other = make_study(slug="other-led", lead=lead, cases=1)
    client.force_login(lead)
    url = reverse("annotation:training_item_edit", args=[other.slug, item.uuid])
    assert client.get(url).status_code == 404


def test_lead_creates_an_item_enters_its_key_and_sees_raters(client, lead, study, rater):
    client.force_login(lead)
    new = reverse("annotation:training_item_new", args=[study.slug]) + "?kind=training"
    response = client.post(
        new,
        {"kind": "training", "title": "Example 1", "prompt": "Prompt?", "response_a": "One.",
         "response_b": "Two.", "explanation": "Because."},
    )  # fmt: skip
    item = TrainingItem.objects.get(title="Example 1")
    assert item.kind == "training" and item.responses == ["One.", "Two."]
    assert response["Location"] == reverse(
        "annotation:training_item_key", args=[study.slug, item.uuid]
    )
    key_page = client.get(response["Location"])
    assert 'data-mode="key"' in key_page.text
    saved = client.post(response["Location"], {"payload": json.dumps(full_marks_payload())})
    assert saved.status_code == 302
    item.refresh_from_db()
    assert item.key["responses"]["B"]["actionability"]["points"] == 4
    page = client.get(reverse("annotation:onboarding", args=[study.slug])).text
    assert "Example 1" in page and "R-01" in page and rater.username not in page


def test_the_item_form_refuses_one_response_and_shows_explanation_only_for_training(
    client, lead, study
):
    client.force_login(lead)
    new = reverse("annotation:training_item_new", args=[study.slug])
    training_form = client.get(new + "?kind=training").text
    qualification_form = client.get(new + "?kind=qualification").text
    assert 'name="explanation"' in training_form
    assert 'name="explanation"' not in qualification_form
    response = client.post(
        new, {"kind": "training", "title": "One", "prompt": "P?", "response_a": "Only one."}
    )
    assert response.status_code == 400 and not TrainingItem.objects.filter(title="One").exists()
    assert "This field is required" in response.text


def test_lead_saves_settings(client, lead, study):
    client.force_login(lead)
    url = reverse("annotation:onboarding", args=[study.slug])
    response = client.post(
        url,
        {"practice_enabled": "on", "pass_percent": "90", "tolerance": "0", "max_attempts": "3",
         "withdrawal_data": "keep"},
    )  # fmt: skip
    assert response.status_code == 302
    settings = OnboardingSettings.objects.get(study=study)
    assert (settings.pass_percent, settings.tolerance, settings.withdrawal_data) == (90, 0, "keep")
    assert client.post(url, {"pass_percent": "150", "tolerance": "0", "max_attempts": "1",
                             "withdrawal_data": "keep"}).status_code == 400  # fmt: skip


def test_lead_deletes_an_item(client, lead, study, item):
    client.force_login(lead)
    client.post(reverse("annotation:training_item_delete", args=[study.slug, item.uuid]))
    assert not TrainingItem.objects.exists()
