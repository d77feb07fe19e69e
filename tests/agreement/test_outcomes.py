"""Comparing systems: a known effect is found, a null study keeps its error rate, and
nothing before unblinding tells the systems apart."""

from dataclasses import replace

import numpy as np
import pytest

from agreement.analysis.agreement import DimensionData
from agreement.analysis.outcomes import compare_systems, label_free_summary
from agreement.analysis.roles import TOTAL_MEASURE, dimension_measure

from .simulation import simulated_study


def test_a_built_in_effect_is_found_with_the_right_sign_and_a_covering_interval():
    data = simulated_study(n_cases=120, effect=0.5, seed=11)
    result = compare_systems(data, n_resamples=2000, seed=1)
    total = next(r for r in result["paired"] if r["key"] == "total" and r["stratum"] == "overall")
    assert total["first"] == "x" and total["second"] == "y"
    assert total["difference"] > 0 and total["low"] > 0
    assert total["wilcoxon_p"] < 0.05 and total["t_p"] < 0.05
    # Scores 3 + quality, clipped and rounded: the true mean gap is close to the effect.
    assert total["low"] < 0.5 < total["high"] + 0.15
    pair = result["preferences"][0]["pairs"][0]
    assert pair["items"]["rate"] > 0.5 and pair["items"]["p_value"] < 0.05
    assert pair["items"]["boot_low"] > 0.5
    # No primary question named: none is reported uncorrected.
    assert not any(q["primary"] for q in result["questions"])
    assert all(q["p_holm"] >= q["p"] for q in result["questions"] if q["p"] is not None)
    assert {row["stratum"] for row in result["paired"]} == {"overall", "s1", "s2"}


def test_the_chosen_primary_question_is_uncorrected_and_the_others_holm_corrected():
    """The analysis plan's measure leads; Holm's correction (checked against statsmodels)
    covers every other question."""
    from statsmodels.stats.multitest import multipletests

    data = simulated_study(n_cases=80, effect=0.3, seed=5)
    unnamed = compare_systems(data, n_resamples=200)["questions"]
    chosen = compare_systems(
        data.__class__(**{**data.__dict__, "primary_measure": dimension_measure("quality")}),
        n_resamples=200,
    )["questions"]
    assert chosen[0]["primary"]
    assert chosen[0]["question"].startswith("Quality:") and "Wilcoxon" in chosen[0]["question"]
    assert chosen[0]["p_holm"] == chosen[0]["p"]
    # The same questions, the chosen one moved to the front.
    assert sorted(q["question"] for q in chosen) == sorted(q["question"] for q in unnamed)
    rest = chosen[1:]
    expected = multipletests([q["p"] for q in rest], method="holm")[1]
    assert [q["p_holm"] for q in rest] == pytest.approx(list(expected), abs=1e-12)
    assert not any(q["primary"] for q in rest)
    # A measure the study does not have names no primary question either.
    unknown = compare_systems(
        data.__class__(**{**data.__dict__, "primary_measure": "no-such"}), n_resamples=200
    )["questions"]
    assert unknown == unnamed


def test_with_no_primary_question_named_every_question_is_holm_corrected():
    """No silent default: with no measure named (issue 26: the alphabetically first pair's
    total was reported uncorrected), no question is primary and Holm's correction, checked
    against statsmodels, covers them all."""
    from statsmodels.stats.multitest import multipletests

    data = simulated_study(n_cases=80, effect=0.3, seed=5)
    questions = compare_systems(data, n_resamples=200)["questions"]
    assert len(questions) > 1
    assert not any(q["primary"] for q in questions)
    expected = multipletests([q["p"] for q in questions], method="holm")[1]
    assert [q["p_holm"] for q in questions] == pytest.approx(list(expected), abs=1e-12)


def test_a_dimension_keyed_total_is_not_taken_for_the_total_score():
    data = simulated_study(n_cases=40, effect=0.3, seed=3)
    role, dimension = data.roles[0], data.dimensions[0]
    renamed = data.__class__(
        **{
            **data.__dict__,
            "roles": [replace(role, key="total"), *data.roles[1:]],
            "dimensions": [replace(dimension, key="total"), *data.dimensions[1:]],
        }
    )
    for measure, start in ((dimension_measure("total"), "Quality:"), (TOTAL_MEASURE, "Total")):
        chosen = replace(renamed, primary_measure=measure)
        question = compare_systems(chosen, n_resamples=100)["questions"][0]
        assert question["primary"] and question["question"].startswith(start), question


def test_stratum_shares_weight_the_overall_difference():
    data = simulated_study(n_cases=60, effect=0.3, seed=2)
    weighted = compare_systems(
        data.__class__(**{**data.__dict__, "stratum_shares": {"s1": 0.1, "s2": 0.9}}),
        n_resamples=200,
    )
    overall = next(
        r for r in weighted["paired"] if r["key"] == "total" and r["stratum"] == "overall"
    )
    s1, s2 = (
        next(r for r in weighted["paired"] if r["key"] == "total" and r["stratum"] == s)
        for s in ("s1", "s2")
    )
    assert overall["weighted"]
    assert overall["difference"] == pytest.approx(0.1 * s1["difference"] + 0.9 * s2["difference"])


@pytest.mark.slow
def test_a_null_study_keeps_the_false_positive_rate_near_alpha():
    runs = 200
    hits = {"wilcoxon": 0, "t": 0, "binomial": 0}
    for seed in range(runs):
        result = compare_systems(simulated_study(n_cases=60, seed=seed), n_resamples=50, seed=seed)
        total = next(
            r for r in result["paired"] if r["key"] == "total" and r["stratum"] == "overall"
        )
        hits["wilcoxon"] += total["wilcoxon_p"] < 0.05
        hits["t"] += total["t_p"] < 0.05
        hits["binomial"] += result["preferences"][0]["pairs"][0]["items"]["p_value"] < 0.05
    # Binomial(200, 0.05) lies within 1 to 20 with probability above 0.999; the exact
    # binomial test is conservative, so it may fall lower still.
    assert 1 <= hits["wilcoxon"] <= 20 and 1 <= hits["t"] <= 20
    assert hits["binomial"] <= 20


def test_more_than_two_systems_get_a_win_matrix_and_a_ranking():
    rng = np.random.default_rng(0)
    n_cases, n_raters = 90, 3
    strength = np.array([0.0, 0.7, 1.4])
    pairs = np.array([(0, 1), (1, 2), (0, 2)])[np.arange(n_cases) % 3]
    swap = rng.random(n_cases) < 0.5
    case_systems = np.where(swap[:, None], pairs[:, ::-1], pairs)
    gap = strength[pairs[:, 1]] - strength[pairs[:, 0]]
    preference = np.sign(gap[None, :] + rng.normal(0, 1, (n_raters, n_cases)))
    data = simulated_study(n_cases=n_cases, seed=1, systems=("a", "b", "c"))
    dims = [
        data.dimensions[0],
        DimensionData(
            key="preference", name="Preference", level="ordinal", matrix=preference,
            categories=(-1.0, 1.0), orientation="system",
        ),
    ]  # fmt: skip
    data = data.__class__(**{**data.__dict__, "case_systems": case_systems, "dimensions": dims})
    result = compare_systems(data, n_resamples=200, seed=3)
    ranking = result["preferences"][0]["ranking"]
    assert [row["system"] for row in ranking["order"]] == ["c", "b", "a"]
    assert len(result["preferences"][0]["pairs"]) == 3


def test_the_summary_before_unblinding_reveals_nothing_about_systems():
    data = simulated_study(n_cases=40, effect=1.0, seed=5)
    # The same ratings under the opposite key: every response's system swapped.
    swapped = simulated_study(n_cases=40, effect=1.0, seed=5, systems=("y", "x"))
    flipped = [
        DimensionData(**{**d.__dict__, "matrix": -d.matrix}) if d.key == "preference" else d
        for d in swapped.dimensions
    ]
    summary = label_free_summary(dimensions=data.dimensions, confidence=data.confidence)
    assert summary == label_free_summary(dimensions=flipped, confidence=swapped.confidence)
    text = repr(summary)
    assert "'x'" not in text and "'y'" not in text and "system" not in text
    preference = next(row for row in summary["dimensions"] if row["key"] == "preference")
    assert preference["mean"] is None  # its sign would follow the key's orientation


def test_a_rubric_without_points_has_no_score_measure():
    """Issue 26: a preference-only study's total is 0 for every response; it was reported
    as a measure (means of 0, paired rows with interval [0, 0], Holm questions with p null).
    The mixed-effects check fits no total either."""
    from agreement.analysis.robustness import robustness_check

    data = simulated_study(n_cases=40, effect=0.5, seed=7)
    preference_only = replace(
        data,
        roles=data.roles[1:],
        dimensions=data.dimensions[1:],
        totals=np.where(np.isnan(data.totals), np.nan, 0.0),
    )
    result = compare_systems(preference_only, n_resamples=200)
    assert result["per_system"] == [] and result["paired"] == []
    assert result["cases_plot"] == [] and result["length"]["score"] is None
    assert result["length"]["preference"] is not None
    assert [q["measure"] for q in result["questions"]] == [dimension_measure("preference")]
    assert all(q["p"] is not None for q in result["questions"])
    assert [q["measure"] for q in result["aggregation"]["questions"]] == [
        dimension_measure("preference")
    ]
    # The same preference, the same verdict, as in the study with points.
    assert result["preferences"] == compare_systems(data, n_resamples=200)["preferences"]
    fits = robustness_check(preference_only)["fits"]
    assert fits and {fit["measure"] for fit in fits} == {dimension_measure("preference")}
