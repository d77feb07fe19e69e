"""Gwet's AC and the intraclass correlations in a study's agreement result and on its page,
against irrCAC and pingouin on the same numbers laid out by hand."""

import numpy as np
import pytest
from django.urls import reverse

from agreement.analysis.agreement import DimensionData, dimension_point
from studies.models import Dimension
from studies.services import tokens

from .test_gwet import irrcac
from .test_icc import pingouin_iccs
from .test_pipeline import COUNTS, DEPTH_POINTS, submit_all, three_raters  # noqa: F401

NAN = np.nan
RATERS = ["R-01", "R-02", "R-03", "R-04"]
pytestmark = pytest.mark.filterwarnings("ignore:The inplace keyword:DeprecationWarning")


def point(matrix, level, categories=(1, 2, 3, 4, 5), raters=RATERS):
    data = DimensionData(
        key="d", name="D", level=level, matrix=np.asarray(matrix, float), categories=categories
    )
    return dimension_point(data, raters=raters[: len(matrix)])


def ratings(seed, raters=4, units=30):
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, size=units)
    data = np.where(rng.random((raters, units)) < 0.6, truth, rng.integers(1, 6, (raters, units)))
    return data.astype(float)


@pytest.mark.parametrize("seed", range(5))
def test_gwet_is_weighted_as_the_pages_kappa(seed):
    data = ratings(seed)
    data[3, :10] = NAN
    scale = [1, 2, 3, 4, 5]
    nominal = point(data, "nominal")
    assert nominal["gwet"]["coefficient"] == "AC1" and nominal["cohen_weights"] == "none"
    assert nominal["gwet"]["value"] == pytest.approx(irrcac(data, None, scale), abs=1e-6)
    interval = point(data, "interval")
    assert interval["gwet"]["weights"] == interval["cohen_weights"] == "quadratic"
    assert interval["gwet"]["value"] == pytest.approx(irrcac(data, "quadratic", scale), abs=1e-6)
    # Ordinal: linear on the positions, as kappa; uneven values 1, 2, 4, 8, 16 keep ranks.
    uneven = 2.0 ** (data - 1)
    ordinal = point(uneven, "ordinal", categories=(1, 2, 4, 8, 16))
    assert ordinal["gwet"]["weights"] == ordinal["cohen_weights"] == "linear"
    assert ordinal["gwet"]["distance"] == "position"
    assert ordinal["gwet"]["value"] == pytest.approx(irrcac(data, "linear", scale), abs=1e-6)


def test_icc_on_the_largest_fully_crossed_block():
    data = ratings(7) + np.arange(30) % 3  # some spread between units
    data[0, 20:] = NAN  # R-01 rated the first 20 cases only, R-04 the last 10
    data[3, :20] = NAN
    result = point(data, "interval", categories=())["icc"]
    # rated all 30 (60 ratings) against 20 x 3 = 60 for R-01..R-03: the tie
    # goes to more raters.
    assert result["raters"] == ["R-01", "R-02", "R-03"] and result["k"] == 3
    assert result["n_units"] == 20 and result["n_units_left_out"] == 10
    expected = pingouin_iccs(data[:3, :20])
    assert result["single"] == pytest.approx(expected["2,1"], abs=1e-6)
    assert result["average"] == pytest.approx(expected["2,k"], abs=1e-6)


def test_icc_is_not_computed_without_a_crossed_block():
    # Every case rated by a different pair of raters.
    data = np.full((4, 6), NAN)
    pairs = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    for unit, (a, b) in enumerate(pairs):
        data[[a, b], unit] = [unit % 5 + 1, (unit + 1) % 5 + 1]
    result = point(data, "ratio")["icc"]
    assert result["single"] is None and result["average"] is None
    assert "did not all rate the same cases" in result["note"]


def test_icc_is_only_for_interval_and_ratio():
    assert point(ratings(1), "nominal")["icc"] is None
    assert point(ratings(1), "ordinal")["icc"] is None


def test_a_scale_with_too_many_points_is_not_computed():
    data = np.vstack([np.arange(100.0)] * 2)
    gwet = point(data, "interval", categories=())["gwet"]
    assert gwet["value"] is None and "scale points" in gwet["note"]


@pytest.mark.django_db(transaction=True)
def test_page_and_api_show_gwet_and_icc(three_raters, client):  # noqa: F811
    study, _ = three_raters
    Dimension.objects.filter(rubric=study.rubric, key="depth").update(level="interval")
    submit_all(study, COUNTS)
    # The same layout built by hand: units (case, label), all three raters on every unit.
    rows = []
    for rater in ("R-01", "R-02", "R-03"):
        row = []
        for case in ("TC-001", "TC-002", "TC-003", "TC-004"):
            a, b = COUNTS[rater][case]
            row += [DEPTH_POINTS[a], DEPTH_POINTS[b]]
        rows.append(row)
    matrix = np.array(rows, dtype=float)
    expected_icc = pingouin_iccs(matrix)
    expected_ac2 = irrcac(matrix, "quadratic", [0, 2, 4, 5])
    client.force_login(study.lead)
    page = client.get(reverse("agreement:study", args=[study.slug])).text
    assert "More coefficients" in page
    assert f"{expected_ac2:.3f}" in page
    assert f"{expected_icc['2,1']:.3f}" in page and f"{expected_icc['2,k']:.3f}" in page
    assert "8 units rated by all of R-01, R-02, R-03 (k = 3)" in page
    _, secret = tokens.api_token_create(user=study.lead, name="tests")
    response = client.get(
        f"/api/v1/studies/{study.slug}/agreement/", HTTP_AUTHORIZATION=f"Bearer {secret}"
    )
    result = response.json()["result"]
    depth = next(d for d in result["dimensions"] if d["key"] == "depth")
    assert depth["gwet"]["value"] == pytest.approx(expected_ac2, abs=1e-6)
    assert depth["icc"]["single"] == pytest.approx(expected_icc["2,1"], abs=1e-6)
    assert depth["icc"]["average"] == pytest.approx(expected_icc["2,k"], abs=1e-6)


def test_icc_block_with_more_raters_than_an_integer_holds():
    # Past 62 raters the sets of raters are sorted as rows rather than as integers.
    rng = np.random.default_rng(4)
    data = rng.normal(size=(64, 8)) + np.arange(8)
    data[63, :3] = NAN
    names = [f"R-{i:02d}" for i in range(1, 65)]
    result = point(data, "interval", categories=(), raters=names)["icc"]
    # 63 raters x 8 units (504 ratings) beat 64 raters x 5 units (320).
    assert result["k"] == 63 and result["raters"] == names[:63]
    assert result["n_units"] == 8 and result["n_units_left_out"] == 0
    assert result["single"] == pytest.approx(pingouin_iccs(data[:63])["2,1"], abs=1e-6)
