from decimal import Decimal

from annotation.calibration import compare, pass_rule

DIMENSIONS = [("depth", "response"), ("evidence", "response"), ("preference", "case")]


def scored(depth, evidence, preference=None):
    answer = {"responses": {"A": {"depth": {"points": depth}, "evidence": {"points": evidence}}}}
    if preference is not None:
        answer["case"] = {"preference": {"choice": preference, "points": 0}}
    return answer


def test_scores_within_tolerance_agree():
    comparisons = compare(
        item="Example", answer=scored(4, 1), key=scored(5, 3), dimensions=DIMENSIONS, tolerance=1
    )
    assert [(c.dimension, c.within) for c in comparisons] == [("depth", True), ("evidence", False)]


def test_choices_are_compared_with_the_tolerance_when_numeric():
    comparisons = compare(
        item="Example",
        answer=scored(4, 1, preference=-1),
        key=scored(4, 1, preference=1),
        dimensions=DIMENSIONS,
        tolerance=1,
    )
    assert comparisons[-1].dimension == "preference"
    assert comparisons[-1].within is False


def test_a_missing_answer_never_agrees():
    comparisons = compare(
        item="Example", answer={}, key=scored(0, 0), dimensions=DIMENSIONS, tolerance=5
    )
    assert not any(c.within for c in comparisons)


def test_pass_rule_at_the_boundary_uses_whole_numbers():
    # 4 of 5 within: exactly 80% passes an 80% mark; 79.9% would not.
    comparisons = compare(
        item="x", answer=scored(4, 0), key=scored(4, 3), dimensions=DIMENSIONS, tolerance=0
    )
    comparisons = comparisons[:1] * 4 + comparisons[1:]
    percent, passed = pass_rule(comparisons=comparisons, pass_percent=80)
    assert (percent, passed) == (Decimal("80.0"), True)
    percent, passed = pass_rule(comparisons=comparisons, pass_percent=81)
    assert passed is False


def test_two_thirds_rounds_for_display_but_not_for_the_rule():
    comparisons = compare(
        item="x", answer=scored(4, 0), key=scored(4, 3), dimensions=DIMENSIONS, tolerance=0
    )
    comparisons = comparisons[:1] * 2 + comparisons[1:]
    percent, passed = pass_rule(comparisons=comparisons, pass_percent=67)
    assert percent == Decimal("66.7")
    assert passed is False
