"""Creating studies over the API: what the New study page offers, no more."""

from studies.models import Study
from tests.factories import UserFactory, make_study


def test_a_study_starts_from_a_protocol_a_preset_or_a_copy(lead_user, api_as):
    api = api_as(lead_user)
    protocol = api("POST", "studies/", {"slug": "from-protocol", "name": "P"}).json()
    assert protocol["blinding_seed"] == 42 and protocol["instructions"]
    rubric_only = api(
        "POST", "studies/", {"slug": "likert", "name": "L", "rubric_preset": "likert",
                             "blinding_seed": 7},
    ).json()  # fmt: skip
    assert rubric_only["blinding_seed"] == 7 and rubric_only["rubric"].startswith("Likert")
    api("PATCH", "studies/likert/", {"raters_per_item": 2})
    copied = api(
        "POST", "studies/", {"slug": "copied", "name": "C", "rubric_preset": "copy:likert"}
    )
    assert copied.status_code == 201, copied.json()
    assert (copied.json()["raters_per_item"], copied.json()["blinding_seed"]) == (2, 7)


def test_only_a_study_you_coordinate_can_be_copied(lead_user, api_as):
    make_study(lead=UserFactory(), slug="someone-elses", cases=1)
    api = api_as(lead_user)
    response = api(
        "POST", "studies/", {"slug": "x", "name": "X", "rubric_preset": "copy:someone-elses"}
    )
    assert response.status_code == 400
    assert response.json()["error"]["problems"][0].startswith(
        "rubric_preset: Select a valid choice"
    )
    assert not Study.objects.filter(slug="x").exists()


def test_raters_cannot_create_studies(db, api_as):
    response = api_as(UserFactory())("POST", "studies/", {"slug": "x", "name": "X"})
    assert response.status_code == 403


def test_the_adaptive_design_is_set_over_the_api_as_on_the_settings_page(lead_user, api_as, client):
    api = api_as(lead_user)
    api("POST", "studies/", {"slug": "adaptive", "name": "A", "rubric_preset": "pairwise"})
    refused = api("PATCH", "studies/adaptive/", {"raters_per_item_max": 4})
    assert refused.status_code == 400
    assert "needs raters per test case" in str(refused.json())
    changed = api("PATCH", "studies/adaptive/", {"raters_per_item": 2, "raters_per_item_max": 4})
    assert changed.status_code == 200, changed.json()
    assert (changed.json()["raters_per_item"], changed.json()["raters_per_item_max"]) == (2, 4)
    assert Study.objects.get(slug="adaptive").adaptive_raters == (2, 4)
    # The settings page shows the same field, and refuses the same range.
    client.force_login(lead_user)
    page = client.get("/s/adaptive/settings/")
    assert page.status_code == 200 and 'name="raters_per_item_max"' in page.content.decode()
    copied = api(
        "POST", "studies/", {"slug": "copied", "name": "C", "rubric_preset": "copy:adaptive"}
    )
    assert copied.json()["raters_per_item_max"] == 4
