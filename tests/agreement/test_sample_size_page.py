"""The sample-size calculator on a study: the protocol's example, and clear refusals."""

import pytest
from django.urls import reverse

from tests.payloads import study_with_systems


@pytest.mark.django_db
def test_the_calculator_reproduces_the_protocols_example_and_judges_the_design(client):
    study = study_with_systems(cases=4)
    client.force_login(study.lead)
    url = reverse("agreement:sample_size", args=[study.slug])
    page = client.get(url)
    assert page.status_code == 200 and "4</strong> test cases" in page.content.decode()
    answer = client.get(url, {"which": "win", "win-p1": "0.58", "win-alpha": "0.05",
                              "win-power": "0.8", "win-tie_share": "0.2"})  # fmt: skip
    html = answer.content.decode()
    assert "Needed: <strong>382</strong>" in html and "too small: add 378 cases" in html
    answer = client.get(url, {"which": "mean", "mean-difference": "5", "mean-sd": "2",
                              "mean-alpha": "0.05", "mean-power": "0.8"})  # fmt: skip
    assert "Needed: <strong>2</strong>" in answer.content.decode()
    assert "large enough" in answer.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("value", ["0.5", "1.5", "abc", ""])
def test_impossible_inputs_are_refused_with_a_message(client, value):
    study = study_with_systems(cases=2)
    client.force_login(study.lead)
    url = reverse("agreement:sample_size", args=[study.slug])
    answer = client.get(url, {"which": "win", "win-p1": value, "win-alpha": "0.05",
                              "win-power": "0.8", "win-tie_share": "0"})  # fmt: skip
    assert answer.status_code == 400
    assert "Needed" not in answer.content.decode()
