import math

import krippendorff
import numpy as np
import pytest

from agreement.analysis.agreement import DimensionData, analyse_study_point, with_intervals


def dimension(key, matrix, level="ordinal", strata=None):
    return DimensionData(
        key=key, name=key.title(), level=level, matrix=np.asarray(matrix, float),
        unit_strata=strata or [],
    )  # fmt: skip


def analyse_study(*, dimensions, n_resamples=10_000, seed=0, **options):
    """A study's result as a run stores it: the point estimates, then the intervals."""
    point = analyse_study_point(dimensions=dimensions, **options)
    return with_intervals(point, dimensions=dimensions, n_resamples=n_resamples, seed=seed)


RNG = np.random.default_rng(3)
AGREEING = np.vstack([np.arange(12) % 5] * 3).astype(float)
NOISY = RNG.integers(0, 5, size=(3, 12)).astype(float)


def test_alpha_and_interval_per_dimension_match_the_krippendorff_package():
    result = analyse_study(
        dimensions=[dimension("depth", NOISY)], raters=["R-01", "R-02", "R-03"],
        success_alpha=0.7, success_min_dimensions=1, n_resamples=500,
    )  # fmt: skip
    depth = result["dimensions"][0]
    expected = krippendorff.alpha(reliability_data=NOISY, level_of_measurement="ordinal")
    assert depth["alpha"] == pytest.approx(expected, abs=1e-6)
    assert depth["low"] <= depth["alpha"] <= depth["high"]
    assert depth["n_units"] == 12
    assert depth["n_raters"] == 3
    assert depth["n_pairable"] == 36


def test_success_criterion_counts_dimensions_at_or_above_the_threshold():
    dims = [dimension("a", AGREEING), dimension("b", AGREEING), dimension("c", NOISY)]
    result = analyse_study(
        dimensions=dims, raters=["R-01", "R-02", "R-03"],
        success_alpha=0.7, success_min_dimensions=3, n_resamples=200,
    )  # fmt: skip
    assert result["success"]["passing"] == ["a", "b"]
    assert result["success"]["passed"] is False
    result = analyse_study(
        dimensions=dims, raters=["R-01", "R-02", "R-03"],
        success_alpha=0.7, success_min_dimensions=2, n_resamples=200,
    )  # fmt: skip
    assert result["success"]["passed"] is True


def test_fleiss_kappa_is_left_out_when_units_have_different_numbers_of_ratings():
    matrix = NOISY.copy()
    matrix[2, :4] = np.nan
    result = analyse_study(
        dimensions=[dimension("a", matrix, level="nominal")], raters=["R-01", "R-02", "R-03"],
        success_alpha=0.7, success_min_dimensions=1, n_resamples=100,
    )  # fmt: skip
    assert result["dimensions"][0]["fleiss_kappa"] is None
    assert "different numbers" in result["dimensions"][0]["fleiss_note"]


def test_left_out_alpha_per_rater_matches_the_package_without_that_rater():
    matrix = NOISY.copy()
    matrix[0] = AGREEING[0]  # rater 0 disagrees with the noisy others
    result = analyse_study(
        dimensions=[dimension("a", matrix)], raters=["R-01", "R-02", "R-03"],
        success_alpha=0.7, success_min_dimensions=1, n_resamples=100,
    )  # fmt: skip
    per_rater = result["dimensions"][0]["per_rater"]
    for index, row in enumerate(per_rater):
        rest = np.delete(matrix, index, axis=0)
        expected = krippendorff.alpha(reliability_data=rest, level_of_measurement="ordinal")
        assert row["alpha_without"] == pytest.approx(expected, abs=1e-6)


def test_alpha_per_stratum():
    strata = ["policy"] * 6 + ["operations"] * 6
    result = analyse_study(
        dimensions=[dimension("a", NOISY, strata=strata)], raters=["R-01", "R-02", "R-03"],
        success_alpha=0.7, success_min_dimensions=1, n_resamples=100,
    )  # fmt: skip
    strata_result = result["dimensions"][0]["strata"]
    expected = krippendorff.alpha(reliability_data=NOISY[:, :6], level_of_measurement="ordinal")
    assert strata_result["policy"]["alpha"] == pytest.approx(expected, abs=1e-6)
    assert strata_result["operations"]["n_units"] == 6


def test_undefined_statistics_are_none_not_nan():
    constant = np.ones((2, 5))
    result = analyse_study(
        dimensions=[dimension("a", constant)], raters=["R-01", "R-02"],
        success_alpha=0.7, success_min_dimensions=1, n_resamples=50,
    )  # fmt: skip
    a = result["dimensions"][0]
    assert a["alpha"] is None
    assert result["success"]["passed"] is False
    assert not any(isinstance(v, float) and math.isnan(v) for v in a.values())
