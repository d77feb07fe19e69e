"""Agreement corrections: full scales, value distances, orientation, counts, the criterion."""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from agreement.analysis.agreement import DimensionData, analyse_study_point, dimension_point
from agreement.models import StudyAgreement
from agreement.stats import krippendorff_alpha
from annotation.services import rating_submit
from studies.models import BlindedLabel, Membership, Study
from studies.services.unblinding import study_unblind

from ..factories import UserFactory

NAN = np.nan


def test_weighted_kappa_uses_the_dimensions_full_scale():
    # Nobody used the scale point 3 of 1..5: the kappa must not shrink the gaps.
    matrix = np.array([[1, 2, 4, 5, 5, 1, 2, 4], [1, 2, 5, 5, 4, 2, 1, 4]], dtype=float)
    data = DimensionData(
        key="q", name="Quality", level="ordinal", matrix=matrix, categories=(1, 2, 3, 4, 5)
    )
    result = dimension_point(data, raters=["R-01", "R-02"])
    expected = cohen_kappa_score(matrix[0], matrix[1], labels=[1, 2, 3, 4, 5], weights="linear")
    assert result["cohen"][0][1] == pytest.approx(expected, abs=1e-6)
    assert result["cohen_weights"] == "linear" and result["cohen_distance"] == "position"


def test_interval_dimensions_weigh_kappa_by_value():
    matrix = np.array([[0, 2, 4, 5, 5, 0, 2, 4], [0, 4, 5, 4, 5, 2, 2, 5]], dtype=float)
    data = DimensionData(
        key="d", name="Depth", level="interval", matrix=matrix, categories=(0, 2, 4, 5)
    )
    result = dimension_point(data, raters=["R-01", "R-02"])
    scale = np.array([0, 2, 4, 5])
    w = (scale[:, None] - scale[None, :]) ** 2.0
    table = np.zeros((4, 4))
    for a, b in zip(*(np.searchsorted(scale, row) for row in matrix), strict=True):
        table[a, b] += 1
    chance = np.outer(table.sum(1), table.sum(0)) / table.sum()
    assert result["cohen"][0][1] == pytest.approx(
        1 - (w * table).sum() / (w * chance).sum(), abs=1e-6
    )
    assert result["cohen_distance"] == "value"


def test_judgments_are_counted_per_unit_rated():
    matrix = np.array([[1, 2, NAN], [1, NAN, NAN], [2, 2, 1]])
    result = dimension_point(
        DimensionData(key="p", name="P", level="ordinal", matrix=matrix), raters=["a", "b", "c"]
    )
    assert result["n_judgments"] == 6


def test_the_success_criterion_reads_the_unrounded_alpha():
    # Find data whose alpha lies within rounding of the criterion, just below it.
    rng = np.random.default_rng(3)
    for _ in range(5000):
        matrix = rng.integers(0, 3, size=(3, 12)).astype(float)
        alpha = krippendorff_alpha(matrix, level="nominal")
        if alpha >= 0.3 and round(alpha, 6) > alpha:
            break
    criterion = round(alpha, 6)  # the rounded alpha reaches it; alpha itself does not
    assert alpha < criterion
    data = [DimensionData(key="x", name="X", level="nominal", matrix=matrix)]
    result = analyse_study_point(
        dimensions=data, raters=["a", "b", "c"], success_alpha=criterion, success_min_dimensions=1
    )
    assert result["success"]["passed"] is False
    result = analyse_study_point(
        dimensions=data, raters=["a", "b", "c"], success_alpha=alpha, success_min_dimensions=1
    )
    assert result["success"]["passed"] is True


@pytest.mark.django_db(transaction=True)
def test_preferences_read_in_system_order_after_unblinding():
    from annotation.services import assignments_create_all
    from studies.services import membership_add, study_create, test_cases_add

    from ..factories import make_cases

    study = study_create(
        slug="orient", name="Orient", lead=UserFactory(), rubric_preset="pairwise",
        side_mode="balanced",
    )  # fmt: skip
    test_cases_add(study=study, systems=["x", "y"], cases=make_cases(8, systems=("x", "y")))
    for user in (UserFactory(), UserFactory()):
        membership = membership_add(study=study, user=user, role=Membership.Role.RATER)
        assignments_create_all(study=study, rater=membership)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    # Both raters always prefer system x, wherever the key put it.
    x_label = dict(
        BlindedLabel.objects.filter(test_case__study=study, response__system__name="x").values_list(
            "test_case_id", "label"
        )
    )
    assert set(x_label.values()) == {"A", "B"}  # the key puts x on either side
    for membership in study.memberships.filter(role=Membership.Role.RATER):
        for assignment in membership.assignments.all():
            key_choice = -2 if x_label[assignment.test_case_id] == "A" else 2
            shown = -key_choice if assignment.flipped else key_choice
            rating_submit(
                assignment=assignment,
                payload={"case": {"preference": {"choice": shown}}, "confidence": "high"},
                any_version=True,
            )
    blinded = StudyAgreement.objects.get(study=study).result["dimensions"][0]
    assert blinded["orientation"] == "key" and blinded["key_order"] is None
    assert blinded["n_judgments"] == 16  # two raters x eight cases, not x two responses

    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    study_unblind(study=Study.objects.get(pk=study.pk), actor=study.lead)
    unblinded = StudyAgreement.objects.get(study=study).result["dimensions"][0]
    assert unblinded["orientation"] == "system"
    # In system order every judgment is "x much better": no variation, alpha undefined;
    # in key order the same data vary with the key and agree perfectly.
    assert unblinded["alpha"] is None
    assert unblinded["key_order"]["alpha"] == pytest.approx(1.0)
    assert unblinded["key_order"]["alpha"] == blinded["alpha"]
    assert unblinded["percent_agreement"] == 1.0
