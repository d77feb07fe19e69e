"""The coordinator's worksheet counts the cases the statistics count: alpha computed from its
CSV with the krippendorff package (an independent implementation) is the app's alpha."""

import csv
import io
import random

import numpy as np
import pytest

from agreement.models import StudyAgreement
from agreement.services.recompute import agreement_recompute, agreement_request_recompute
from annotation import exports
from annotation.services import rating_submit
from annotation.worksheets.columns import dimension_columns
from studies.models import Membership
from studies.models import TestCase as Case
from tests.agreement.test_gold import gold_study
from tests.agreement.test_krippendorff import package_alpha
from tests.payloads import response_scores

pytestmark = pytest.mark.django_db


def _payload(rng: random.Random, labels: list[str], purpose: str) -> dict:
    if purpose == Case.Purpose.GOLD:  # what the gold key expects: nobody is paused
        scores = {label: response_scores(depth=6) for label in labels}
    elif purpose == Case.Purpose.ATTENTION:  # the lowest score an attention check asks for
        scores = {
            label: response_scores(depth=0, evidence=(False,) * 3, alternatives=0, actions=0)
            | {"structure": {"checked": [False] * 3}}
            for label in labels
        }
    else:
        scores = {
            label: response_scores(
                depth=rng.randint(0, 6),
                evidence=tuple(rng.random() < 0.6 for _ in range(3)),
                alternatives=rng.randint(0, 3),
                actions=rng.randint(0, 3),
            )
            for label in labels
        }
    return {"responses": scores, "confidence": "medium"}


@pytest.fixture
def rated():
    study, _ = gold_study(sample=8, gold=3, attention=1, raters=3, gold_percent=30)
    rng = random.Random(7)
    raters = study.memberships.filter(role=Membership.Role.RATER)
    for assignment in (
        a
        for membership in raters.order_by("pseudonym")
        for a in membership.assignments.select_related("test_case").order_by("position")
    ):
        labels = sorted(assignment.test_case.labels.values_list("label", flat=True))
        payload = _payload(rng, labels, assignment.test_case.purpose)
        rating_submit(assignment=assignment, payload=payload, any_version=True)
    return study


def _worksheet(study, **kwargs) -> list[dict]:
    text = "".join(exports.export_text(study=study, fmt=exports.WORKSHEET_CSV, **kwargs))
    return list(csv.DictReader(io.StringIO(text.removeprefix("\ufeff"))))


def test_the_worksheet_holds_the_sample_only_and_its_alpha_is_the_apps(rated):
    rows = _worksheet(rated)
    sample = set(rated.test_cases.in_sample().values_list("case_id", flat=True))
    assert {row["TC-ID"] for row in rows} == sample
    assert len(rows) == 3 * len(sample) * 2  # raters x cases x responses
    # The agreement page's result, as the recompute stores it.
    agreement_request_recompute(study_id=rated.pk)
    agreement_recompute(study_id=rated.pk)
    result = StudyAgreement.objects.get(study=rated).result
    computed = {d["key"]: d for d in result["dimensions"]}
    checked = 0
    for column in dimension_columns(study=rated):
        if column.key not in computed or column.scope != "response":
            continue
        raters = sorted({row["Rater"] for row in rows})
        units = sorted({(row["TC-ID"], row["Response"]) for row in rows})
        data = np.full((len(raters), len(units)), np.nan)
        for row in rows:
            if row[column.header] != "":
                cell = (raters.index(row["Rater"]), units.index((row["TC-ID"], row["Response"])))
                data[cell] = float(row[column.header])
        expected = package_alpha(data, computed[column.key]["level"])
        if np.isnan(expected):  # no variation (a fixed answer): neither gives an alpha
            assert computed[column.key]["alpha"] is None
            continue
        assert computed[column.key]["alpha"] == pytest.approx(expected, abs=1e-6)
        checked += 1
    assert checked >= 3


def test_one_raters_worksheet_still_lists_every_case_assigned_to_them(rated):
    """Their offline worksheet: quality items stay, unmarked (they are rated like the rest)."""
    rows = _worksheet(rated, rater="R-01")
    assigned = set(
        rated.memberships.get(pseudonym="R-01").assignments.values_list(
            "test_case__case_id", flat=True
        )
    )
    assert {row["TC-ID"] for row in rows} == assigned
    assert assigned - set(rated.test_cases.in_sample().values_list("case_id", flat=True))
