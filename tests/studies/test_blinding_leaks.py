"""Places where a coordinator, who knows which system wrote which text, could learn the key."""

import csv
import io

import pytest
from django.urls import reverse

from annotation.export_files import csv_lines
from annotation.exports import long_rows
from annotation.services import rating_submit
from annotation.worksheets import neutralise
from studies.models import Membership, Response, Study
from studies.services import membership_add

from ..factories import UserFactory, make_study


@pytest.fixture
def coordinator_study(db):
    study = make_study(slug="leaks", cases=3, raters=[UserFactory()])
    coordinator = UserFactory()
    membership_add(study=study, user=coordinator, role=Membership.Role.COORDINATOR)
    return study, coordinator


def test_the_rubric_preview_never_shows_real_responses_under_labels(client, coordinator_study):
    study, coordinator = coordinator_study
    client.force_login(coordinator)
    page = client.get(reverse("annotation:rubric_preview", args=[study.slug])).text
    first = study.test_cases.order_by("position").first()
    assert first.prompt in page
    for text in Response.objects.filter(test_case__study=study).values_list("text", flat=True):
        assert text not in page


def test_the_admin_cannot_change_status_or_the_frozen_protocol(client, coordinator_study):
    study, _ = coordinator_study
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    page = client.get(reverse("admin:studies_study_change", args=[study.pk])).text
    for field in ("status", "lead", "blinding_seed", "protocol_fingerprint"):
        assert f'name="{field}"' not in page


@pytest.mark.parametrize(
    ("value", "expected"),
    [("-2", "-2"), ("-0.5", "-0.5"), ("=1+1", "'=1+1"), ("-2+3", "'-2+3"), ("@SUM(A1)", "'@SUM(A1)"),
     ("+1", "'+1"), ("\tx", "'\tx"), ("plain", "plain"), (3, 3)],
)  # fmt: skip
def test_formulas_are_neutralised_but_plain_numbers_kept(value, expected):
    assert neutralise(value) == expected


@pytest.mark.django_db(transaction=True)
def test_a_negative_preference_is_exported_as_a_number():
    from studies.services import study_create, test_cases_add

    from ..factories import make_cases

    rater = UserFactory()
    study = study_create(slug="pref", name="Pref", lead=UserFactory(), rubric_preset="pairwise")
    test_cases_add(study=study, systems=["x", "y"], cases=make_cases(1, systems=("x", "y")))
    membership = membership_add(study=study, user=rater, role=Membership.Role.RATER)
    from annotation.services import assignments_create_all

    assignments_create_all(study=study, rater=membership)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    rating_submit(
        assignment=membership.assignments.get(),
        payload={"case": {"preference": {"choice": -2}}, "confidence": "low"},
        any_version=True,
    )
    exported = "".join(csv_lines(long_rows(study=study)))
    rows = list(csv.DictReader(io.StringIO(exported)))
    assert [row["value"] for row in rows] == ["-2"]


def test_a_dimension_answer_that_is_not_an_object_gets_a_clear_400(client, db):
    rater = UserFactory()
    study = make_study(slug="garbled", cases=1, raters=[rater], consented=True)
    assignment = study.memberships.get(user=rater).assignments.get()
    client.force_login(rater)
    response = client.post(
        reverse("annotation:draft", args=[assignment.uuid]),
        data={"payload": {"responses": {"A": {"depth": "x"}}}, "version": 0},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert "could not be read" in response.json()["error"]
    assignment.refresh_from_db()
    assert assignment.version == 0
