"""The robustness check: each outcome refitted as a mixed model from the ratings as the
comparison reads them, beside the primary estimate; computed by a job after unblinding
only, and shown in the report."""

import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest
from django.core.cache import cache
from django.urls import reverse

from agreement.analysis.agreement import DimensionData
from agreement.analysis.comparison_data import ComparisonData
from agreement.analysis.robustness import robustness_check, robustness_rows
from agreement.analysis.roles import DimensionRole
from agreement.stats.mixed import system_effect
from jobs.models import Job
from tests.payloads import SYSTEMS, close_and_unblind, study_with_systems, submit_all

N_RATERS, N_CASES = 3, 12


def _comparison_data(seed: int = 0) -> ComparisonData:
    """Three raters, twelve cases; each case shows systems 0 and 1 under labels A and B in
    a varying order; a score, a yes/no dimension and a preference (system order)."""
    rng = np.random.default_rng(seed)
    case_systems = np.array([[0, 1] if c % 2 else [1, 0] for c in range(N_CASES)])
    score = rng.integers(0, 5, (N_RATERS, N_CASES, 2)).astype(float)
    score[..., :] += (case_systems == 1)[None] * 1.0  # system 1 scores higher
    score[0, 3, 1] = np.nan  # a rating not given
    yes_no = rng.integers(0, 2, (N_RATERS, N_CASES, 2)).astype(float)
    preference = rng.choice([-1.0, 0.0, 1.0, 1.0], (N_RATERS, N_CASES))
    dims = [
        DimensionData("depth", "Depth", "interval", score.reshape(N_RATERS, -1)),
        DimensionData("safe", "Safe", "nominal", yes_no.reshape(N_RATERS, -1), categories=(0, 1)),
        DimensionData("pref", "Preference", "ordinal", preference, categories=(-1, 0, 1)),
    ]
    roles = [
        DimensionRole("depth", "Depth", scored=True, max_points=5),
        DimensionRole("safe", "Safe", binary=True),
        DimensionRole("pref", "Preference", preference=True),
    ]
    return ComparisonData(
        systems=["alpha", "beta"],
        labels=["A", "B"],
        strata=[""] * N_CASES,
        case_systems=case_systems,
        totals=(score * 2).reshape(N_RATERS, -1),
        dimensions=dims,
        roles=roles,
        lengths=np.full((N_CASES, 2), 100.0),
        confidence=np.full((N_RATERS, N_CASES), 2.0),
    )


def _long(matrix: np.ndarray, case_systems: np.ndarray) -> pd.DataFrame:
    """The long table the export would give: one row per rating of a response."""
    cube = matrix.reshape(N_RATERS, N_CASES, 2)
    rows = [
        {"y": cube[r, c, label], "system": case_systems[c, label], "rater": r, "item": c}
        for r in range(N_RATERS)
        for c in range(N_CASES)
        for label in range(2)
    ]
    return pd.DataFrame(rows).dropna()


def test_every_outcome_is_fitted_from_its_long_table():
    data = _comparison_data()
    fits = {(f["measure"], f["kind"]): f for f in robustness_check(data)["fits"]}
    assert set(fits) == {
        ("total", "score"),
        ("dimension:depth", "score"),
        ("dimension:safe", "binary"),
        ("dimension:pref", "preference"),
    }
    depth = _long(data.dimensions[0].matrix, data.case_systems)
    expected = system_effect(depth["y"], depth["system"], depth["rater"], depth["item"])
    fit = fits[("dimension:depth", "score")]
    assert (fit["name"], fit["first"], fit["second"]) == ("Depth", "alpha", "beta")
    assert (fit["n"], fit["n_raters"], fit["n_items"]) == (N_RATERS * N_CASES * 2 - 1, 3, 12)
    for key in ("estimate", "se", "low", "high", "p"):
        assert fit[key] == pytest.approx(expected[key], abs=1e-9), key
    assert fit["variances"] == pytest.approx(expected["variances"], abs=1e-9)
    assert fits[("total", "score")]["estimate"] == pytest.approx(2 * expected["estimate"])
    safe = _long(data.dimensions[1].matrix, data.case_systems)
    binary = fits[("dimension:safe", "binary")]
    assert binary["model"].startswith("linear probability model")
    assert binary["estimate"] == pytest.approx(
        system_effect(safe["y"], safe["system"], safe["rater"], safe["item"])["estimate"]
    )
    # The preference: ties left out, 1 = the second system preferred.
    matrix = data.dimensions[2].matrix
    rater, item = np.nonzero(matrix != 0)
    values = matrix[rater, item]
    expected = system_effect((values > 0) * 1.0, None, rater, item, null=0.5)
    preference = fits[("dimension:pref", "preference")]
    assert preference["n"] == values.size
    assert preference["estimate"] == pytest.approx(expected["estimate"])


def test_the_conclusion_holds_with_the_same_sign_and_decision():
    check = {
        "available": True,
        "alpha": 0.05,
        "fits": [
            {"measure": "total", "kind": "score", "first": "a", "second": "b",
             "fitted": True, "estimate": 0.4, "p": 0.01},
            {"measure": "dimension:x", "kind": "score", "first": "a", "second": "b",
             "fitted": True, "estimate": 0.4, "p": 0.20},
            {"measure": "dimension:y", "kind": "score", "first": "a", "second": "b",
             "fitted": True, "estimate": -0.1, "p": 0.5},
            {"measure": "dimension:p", "kind": "preference", "first": "a", "second": "b",
             "fitted": False, "reason": "Could not be fitted: one rater"},
        ],
    }  # fmt: skip
    paired = [
        {"measure": m, "stratum": "overall", "first": "a", "second": "b",
         "difference": d, "wilcoxon_p": p}
        for m, d, p in (("total", 0.5, 0.02), ("dimension:x", 0.5, 0.03), ("dimension:y", 0.2, 0.6))
    ]  # fmt: skip
    preferences = [
        {
            "key": "p",
            "pairs": [{"first": "a", "second": "b", "items": {"rate": 0.6, "p_value": 0.1}}],
        }
    ]
    comparison = {
        "systems": ["a", "b"],
        "paired": paired,
        "preferences": preferences,
        "mcnemar": [],
        "questions": [{"measure": "total", "primary": True}],
    }
    rows = robustness_rows(check, comparison)
    assert [row["holds"] for row in rows] == [True, False, False, None]
    assert [row["is_primary"] for row in rows] == [True, False, False, False]
    assert rows[0]["primary_estimate"] == 0.5 and rows[0]["primary_p"] == 0.02
    assert rows[3]["primary_estimate"] == pytest.approx(0.1)
    assert robustness_rows(None, comparison) == [] and robustness_rows(check, None) == []


@pytest.fixture
def rated_study(db, settings):
    settings.AGREEMENT_BOOTSTRAP_RESAMPLES = 200
    settings.JOBS_RUN = "inline"
    study = study_with_systems(cases=6, consented=True)
    submit_all(study)
    cache.clear()
    return study


def _jobs(study):
    return Job.objects.filter(kind=Job.Kind.ANALYSIS, study_id=study.pk, name__startswith="robust")


@pytest.mark.django_db(transaction=True)
def test_before_unblinding_nothing_is_fitted_or_shown(client, rated_study):
    client.force_login(rated_study.lead)
    compute = reverse("agreement:robustness_compute", args=[rated_study.slug])
    response = client.post(compute, follow=True)
    assert "it is computed once the study is unblinded" in response.text
    assert not _jobs(rated_study).exists()
    page = client.get(reverse("agreement:report", args=[rated_study.slug])).text
    assert "Computed after unblinding: it compares the systems." in page
    assert compute not in page and 'id="robustness"' not in page


@pytest.mark.django_db(transaction=True)
def test_after_unblinding_compute_fits_and_the_report_shows_it(client, rated_study):
    close_and_unblind(rated_study)
    client.force_login(rated_study.lead)
    report_url = reverse("agreement:report", args=[rated_study.slug])
    page = client.get(report_url).text
    compute = reverse("agreement:robustness_compute", args=[rated_study.slug])
    assert f'<form method="post" action="{compute}">' in page and 'id="robustness"' not in page
    assert not _jobs(rated_study).exists()  # a GET starts nothing
    bundle = client.get(reverse("agreement:report_bundle", args=[rated_study.slug]))
    with zipfile.ZipFile(io.BytesIO(b"".join(bundle.streaming_content))) as archive:
        assert "Not computed yet: Compute it on the study" in archive.read("report.html").decode()

    response = client.post(compute)
    assert response.status_code == 302 and response["Location"].endswith("#section-robustness")
    assert _jobs(rated_study).get().state == Job.State.DONE
    page = client.get(report_url).text
    assert 'id="robustness"' in page and "Primary" in page
    bundle = client.get(reverse("agreement:report_bundle", args=[rated_study.slug]))
    with zipfile.ZipFile(io.BytesIO(b"".join(bundle.streaming_content))) as archive:
        results = json.loads(archive.read("results.json"))
        assert 'id="robustness"' in archive.read("report.html").decode()
    robustness = results["robustness"]
    assert robustness["computed"] and robustness["available"]
    total = next(r for r in robustness["rows"] if r["measure"] == "total")
    assert {total["first"], total["second"]} == set(SYSTEMS)
    assert total["fitted"], total["reason"]
    assert total["primary_label"] == "paired difference"
    assert total["holds"] in (True, False)
    assert not total["is_primary"]  # no primary question was named
    # Pressed again for the same data: nothing new runs.
    client.post(compute)
    assert _jobs(rated_study).count() == 1
