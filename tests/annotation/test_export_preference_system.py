"""After unblinding, a preference row of the long export names the pair of systems."""

import csv
import io

import pytest

from annotation.exports import LONG_CSV, export_text
from annotation.services import assignments_create_all, rating_submit
from studies.models import BlindedLabel, Membership, Study
from studies.services import membership_add, study_create
from studies.services import test_cases_add as cases_add
from tests.payloads import close_and_unblind

from ..factories import UserFactory, make_cases


@pytest.mark.django_db
def test_preference_rows_carry_the_pair_in_key_order_after_unblinding():
    study = study_create(slug="pref-export", name="P", lead=UserFactory(), rubric_preset="pairwise")
    cases_add(study=study, systems=["x", "y"], cases=make_cases(2, systems=("x", "y")))
    rater = membership_add(study=study, user=UserFactory(), role=Membership.Role.RATER)
    assignments_create_all(study=study, rater=rater)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    for assignment in rater.assignments.all():
        rating_submit(
            assignment=assignment,
            payload={"case": {"preference": {"choice": 1}}, "confidence": "high"},
            any_version=True,
        )

    def rows():
        text = "".join(export_text(study=Study.objects.get(pk=study.pk), fmt=LONG_CSV))
        return list(csv.DictReader(io.StringIO(text)))

    assert "system" not in rows()[0]
    close_and_unblind(study)
    expected = {}
    for case_id, label, system in BlindedLabel.objects.filter(test_case__study=study).values_list(
        "test_case__case_id", "label", "response__system__name"
    ):
        expected.setdefault(case_id, {})[label] = system
    exported = rows()
    assert exported and all(row["system"] for row in exported)
    for row in exported:
        pair = expected[row["test_case"]]
        assert row["system"] == f"{pair['A']} vs {pair['B']}"
