import pytest
from scipy.stats import binomtest

from agreement.qc.checks import (
    CaseRecord,
    QualityAnswer,
    Rules,
    answer_values,
    binomial_two_sided_p,
    confidence_accuracy,
    gold_check,
    rater_checks,
    straight_lines,
)


def cases(rater, n, seconds=300, totals=(10, 12)):
    return [CaseRecord(rater=rater, active_seconds=seconds, totals_by_position=totals)] * n


def test_a_careful_rater_has_no_flags():
    mixed = cases("R-01", 4, totals=(12, 10)) + cases("R-01", 4, totals=(10, 12))
    check = rater_checks(cases=mixed, agreement=None)["R-01"]
    assert check["flags"] == []
    assert check["first_preferred"] == 0.5
    assert check["median_seconds"] == 300


def test_fast_raters_are_flagged():
    check = rater_checks(cases=cases("R-02", 5, seconds=12), agreement=None)["R-02"]
    assert any("median time per case 12 s" in flag for flag in check["flags"])


def test_position_bias_needs_enough_decided_cases():
    few = rater_checks(cases=cases("R-03", 5, totals=(15, 9)), agreement=None)["R-03"]
    assert few["flags"] == []
    many = rater_checks(cases=cases("R-03", 8, totals=(15, 9)), agreement=None)["R-03"]
    assert any("shown first in 100% of 8 cases" in flag for flag in many["flags"])
    second = rater_checks(cases=cases("R-03", 8, totals=(9, 15)), agreement=None)["R-03"]
    assert any("shown second" in flag for flag in second["flags"])


def test_ties_do_not_count_towards_position_bias():
    tied = cases("R-04", 10, totals=(12, 12)) + cases("R-04", 2, totals=(14, 10))
    check = rater_checks(cases=tied, agreement=None)["R-04"]
    assert check["decided"] == 2
    assert check["flags"] == []


def test_a_rater_the_group_agrees_better_without_is_flagged():
    agreement = {
        "dimensions": [
            {
                "name": "Depth of Analysis",
                "alpha": 0.55,
                "per_rater": [
                    {"rater": "R-01", "alpha_without": 0.50},
                    {"rater": "R-05", "alpha_without": 0.81},
                ],
            }
        ]
    }
    checks = rater_checks(cases=cases("R-01", 3) + cases("R-05", 3), agreement=agreement)
    assert checks["R-01"]["flags"] == []
    assert checks["R-05"]["peer_gaps"] == [{"dimension": "Depth of Analysis", "gap": 0.26}]
    assert any("Depth of Analysis" in flag for flag in checks["R-05"]["flags"])


def test_cases_from_worksheets_are_untimed_and_never_look_fast():
    offline = [CaseRecord("R-01", 0, (10.0, 12.0), timed=False) for _ in range(5)]
    checks = rater_checks(cases=offline, agreement=None)["R-01"]
    assert checks["median_seconds"] is None and checks["untimed"] == 5
    assert not any("median time" in flag for flag in checks["flags"])
    # Timed cases are judged alone, whatever the untimed ones say.
    mixed = offline + [CaseRecord("R-01", 5, (10.0, 12.0)) for _ in range(3)]
    checks = rater_checks(cases=mixed, agreement=None)["R-01"]
    assert (checks["median_seconds"], checks["untimed"]) == (5, 5)
    assert any("median time per case 5 s" in flag for flag in checks["flags"])


# --- Completed rules: binomial position test, preference basis, straight-lining -----------


@pytest.mark.parametrize(
    ("k", "n"),
    [(0, 1), (6, 6), (5, 8), (7, 10), (3, 10), (14, 20), (50, 60), (2600, 5000), (2000, 6000)],
)
def test_the_binomial_test_matches_scipy(k, n):
    assert binomial_two_sided_p(k, n) == pytest.approx(binomtest(k, n, 0.5).pvalue, rel=1e-9)


def pref(rater, first, n):
    return [CaseRecord(rater, 30, (10.0, 10.0), first_preferred=first) for _ in range(n)]


def test_position_bias_reads_the_preference_and_needs_significance():
    # 8 of 10 first (80%): over 70%, binomial p = 0.109, not significant at 0.05.
    check = rater_checks(cases=pref("R-01", True, 8) + pref("R-01", False, 2), agreement=None)
    row = check["R-01"]
    assert row["position_basis"] == "preference" and row["decided"] == 10
    assert row["position_p"] == pytest.approx(binomtest(8, 10).pvalue)
    assert not any("prefers" in flag for flag in row["flags"])
    # 16 of 20 (80%), p = 0.012: flagged, with n and p.
    check = rater_checks(cases=pref("R-01", True, 16) + pref("R-01", False, 4), agreement=None)
    assert any("80% of 20 cases (binomial p = 0.012)" in f for f in check["R-01"]["flags"])
    # At a stricter alpha the same data are not flagged.
    strict = rater_checks(
        cases=pref("R-01", True, 16) + pref("R-01", False, 4),
        agreement=None,
        rules=Rules(position_alpha=0.01),
    )
    assert not any("prefers" in f for f in strict["R-01"]["flags"])
    # Ties (None) are not decided cases.
    ties = rater_checks(cases=pref("R-01", None, 3) + pref("R-01", True, 1), agreement=None)
    assert ties["R-01"]["decided"] == 1 and ties["R-01"]["position_basis"] == "preference"


def test_straight_lining_at_its_threshold():
    same = {"Depth": [4.0] * 10, "Pref": [1.0] * 10}
    assert straight_lines({k: v[:9] for k, v in same.items()}, items=10) == []
    assert straight_lines(same, items=10) == [
        "identical answers on every item (10 answers per dimension)"
    ]
    varied = {"Depth": [4.0] * 10, "Pref": [float(i % 3) for i in range(10)]}
    assert straight_lines(varied, items=10) == ["no variation on Depth across 10 answers"]
    lively = {"Depth": [float(i % 2) for i in range(10)], "Pref": [1.0] * 9}
    assert straight_lines(lively, items=10) == []


def test_answer_values_read_the_agreement_matrices():
    import numpy as np

    from agreement.analysis.agreement import DimensionData

    matrix = np.array([[1.0, np.nan, 1.0], [np.nan, 2.0, 3.0]])
    dimension = DimensionData(
        key="d", name="Depth", level="ordinal", matrix=matrix, unit_strata=[""] * 3
    )
    assert answer_values(["R-01", "R-02"], [dimension]) == {
        "R-01": {"Depth": [1.0, 1.0]},
        "R-02": {"Depth": [2.0, 3.0]},
    }
    checks = rater_checks(
        cases=[CaseRecord("R-01", 30, (1.0, 2.0))],
        agreement=None,
        rules=Rules(straight_line_items=2),
        answers=answer_values(["R-01", "R-02"], [dimension]),
    )
    assert checks["R-01"]["straight_lines"] == [
        "identical answers on every item (2 answers per dimension)"
    ]


def test_time_threshold_comes_from_the_rules():
    records = [CaseRecord("R-01", 25, (1.0, 2.0)) for _ in range(3)]
    assert rater_checks(cases=records, agreement=None)["R-01"]["flags"] == []
    strict = rater_checks(cases=records, agreement=None, rules=Rules(min_median_seconds=30))
    assert strict["R-01"]["flags"] == ["median time per case 25 s (under 30 s)"]


def gold(met, confidence="high", at="2026-01-01T00:00:0"):
    return QualityAnswer("R-01", "G", "gold", at, met=met, expected=4, confidence=confidence)


def test_confidence_against_correctness_on_gold_items():
    rows = confidence_accuracy([gold(4, "high"), gold(2, "high"), gold(0, "low")])
    by = {row["confidence"]: row for row in rows}
    assert by["high"] == {"confidence": "high", "items": 2, "accuracy": 0.75}
    assert by["low"]["accuracy"] == 0 and by["medium"]["accuracy"] is None


def test_the_running_gold_accuracy_series():
    check = gold_check([gold(4, at=f"2026-01-0{i}") for i in (1, 2)] + [gold(0, at="2026-01-03")])
    assert check["series"] == [1.0, 1.0, pytest.approx(8 / 12)]
    assert check["items"] == 3 and not check["pause"]
