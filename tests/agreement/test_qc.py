from agreement.qc import CaseRecord, rater_checks


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
