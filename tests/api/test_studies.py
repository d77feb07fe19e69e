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
