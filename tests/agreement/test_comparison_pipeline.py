"""The comparison of systems in the recompute: stored after unblinding, absent before."""

import json

import pytest

from agreement.models import StudyAgreement
from tests.payloads import SYSTEMS, close_and_unblind, study_with_systems, submit_all


@pytest.mark.django_db(transaction=True)
def test_the_comparison_is_computed_after_unblinding_and_never_before(settings):
    settings.AGREEMENT_BOOTSTRAP_RESAMPLES = 200
    study = study_with_systems(cases=6, consented=True)
    submit_all(study)
    blinded = StudyAgreement.objects.get(study=study).result
    assert "comparison" not in blinded
    assert blinded["summary"]["dimensions"][0]["n_judgments"] == 24  # 2 raters x 6 x 2
    text = json.dumps(blinded)
    assert all(system not in text for system in SYSTEMS)

    close_and_unblind(study)
    result = StudyAgreement.objects.get(study=study).result
    comparison = result["comparison"]
    assert comparison["systems"] == sorted(SYSTEMS)
    assert comparison["n_cases"] == 6
    total = comparison["per_system"][0]
    assert total["key"] == "total" and [r["n"] for r in total["systems"]] == [6, 6]
    # No primary question named: none is primary (every one Holm-corrected).
    assert not any(question["primary"] for question in comparison["questions"])
    assert "comparison_pending" not in result
