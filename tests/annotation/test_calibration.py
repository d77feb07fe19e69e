from decimal import Decimal

from annotation.qualification import Comparison, compare, is_blank, pass_rule
from studies.presets import PRESETS
from studies.rubric import dimension_from_config


def kinds(*names):
    """The preset dimensions with these keys, as the rubric's kinds."""
    specs = {d["key"]: d for preset in PRESETS.values() for d in preset["dimensions"]}
    return [
        dimension_from_config(
            key=key, name=key, kind=specs[key]["kind"], config=specs[key]["config"]
        )
        for key in names
    ]


DIMENSIONS = kinds("depth", "evidence", "preference")
REFERENCE = kinds("depth", "evidence", "alternatives", "structure", "actionability")


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


def cells(dimension: str, within: int, outside: int) -> list[Comparison]:
    return [Comparison("x", "A", dimension, 1, 1, True)] * within + [
        Comparison("x", "A", dimension, 0, 3, False)
    ] * outside


def test_pass_rule_at_the_boundary_uses_whole_numbers():
    # 4 of 5 within: exactly 80% passes an 80% mark; 79.9% would not.
    comparisons = cells("depth", 4, 1)
    outcome = pass_rule(comparisons=comparisons, pass_percent=80)
    assert (outcome.percent, outcome.passed) == (Decimal("80.0"), True)
    assert pass_rule(comparisons=comparisons, pass_percent=81).passed is False


def test_two_thirds_rounds_for_display_but_not_for_the_rule():
    outcome = pass_rule(comparisons=cells("depth", 2, 1), pass_percent=67)
    assert outcome.percent == Decimal("66.7")
    assert outcome.passed is False


def test_every_dimension_must_reach_the_pass_mark_on_its_own():
    # 90% of all scores agree, but every evidence score is off: not passed.
    comparisons = cells("depth", 9, 0) + cells("structure", 9, 0) + cells("evidence", 0, 2)
    outcome = pass_rule(comparisons=comparisons, pass_percent=80)
    assert outcome.passed is False and outcome.percent == Decimal("0.0")
    assert outcome.dimensions["evidence"] == {"compared": 2, "within": 0, "percent": "0.0"}
    assert outcome.dimensions["depth"]["percent"] == "100.0"


def test_a_blank_answer_agrees_nowhere_even_on_the_keys_zeros():
    blank = {"responses": {"A": {"depth": {"items": [], "points": 0},
                                 "evidence": {"checked": [False, False, False], "points": 0}}},
             "case": {"preference": {"choice": None, "points": 0}}}  # fmt: skip
    assert is_blank(blank, DIMENSIONS) and is_blank({}, DIMENSIONS)
    comparisons = compare(
        item="x", answer=blank, key=scored(0, 0, preference=0), dimensions=DIMENSIONS, tolerance=1
    )
    assert len(comparisons) == 3 and not any(c.within for c in comparisons)
    # A tie (choice 0) or one ticked criterion is an answer, not a blank.
    assert not is_blank(scored(0, 0, preference=0), DIMENSIONS)
    ticked = {"responses": {"A": {"evidence": {"checked": [True, False, False], "points": 1}}}}
    assert not is_blank(ticked, DIMENSIONS)


def test_a_near_blank_attempt_does_not_pass():
    """The reported case: weak responses keyed mostly 0, an attempt that fills in almost
    nothing used to pass with 80% of all scores agreeing."""
    dims = REFERENCE
    weak = {"depth": {"points": 0}, "evidence": {"points": 0}, "alternatives": {"points": 0},
            "structure": {"points": 0}, "actionability": {"points": 0}}  # fmt: skip
    strong = {**weak, "depth": {"points": 5}, "actionability": {"points": 4}}
    key = {"responses": {"A": strong, "B": weak}}
    nothing = {"responses": {"A": {k: {"points": 0} for k in weak}, "B": weak}}
    one_cell = {"responses": {"A": {**nothing["responses"]["A"], "depth": {"points": 5}},
                              "B": weak}}  # fmt: skip
    blank = pass_rule(
        comparisons=compare(item="1", answer=nothing, key=key, dimensions=dims, tolerance=1),
        pass_percent=80,
        blank=True,
    )
    assert blank.passed is False and blank.blank
    near = pass_rule(
        comparisons=compare(item="1", answer=one_cell, key=key, dimensions=dims, tolerance=1),
        pass_percent=80,
    )
    # 9 of 10 scores agree overall, but actionability is 1 of 2: not passed.
    assert near.passed is False
    assert near.dimensions["actionability"]["percent"] == "50.0"


def test_categories_match_exactly_and_scales_within_the_tolerance():
    harmful, correctness = kinds("harmful", "correctness")
    key = {"responses": {"A": {"harmful": {"choice": "yes"}, "correctness": {"choice": 2}}}}
    near = {"responses": {"A": {"harmful": {"choice": "no"}, "correctness": {"choice": 1}}}}
    comparisons = compare(
        item="x", answer=near, key=key, dimensions=[harmful, correctness], tolerance=1
    )
    assert [(c.dimension, c.points, c.key_points, c.within) for c in comparisons] == [
        ("harmful", "no", "yes", False),
        ("correctness", 1, 2, True),
    ]


def test_a_key_left_unanswered_is_not_compared():
    (correctness,) = kinds("correctness")
    key = {"responses": {"A": {"correctness": {"choice": None, "points": 0}}}}
    answer = {"responses": {"A": {"correctness": {"choice": 2, "points": 2}}}}
    assert compare(item="x", answer=answer, key=key, dimensions=[correctness], tolerance=0) == []


def test_a_checklist_is_compared_by_its_points_whatever_was_ticked():
    (evidence,) = kinds("evidence")
    key = {"responses": {"A": {"evidence": {"checked": [True, True, False], "points": 2}}}}
    answer = {"responses": {"A": {"evidence": {"checked": [False, True, True], "points": 2}}}}
    (same,) = compare(item="x", answer=answer, key=key, dimensions=[evidence], tolerance=0)
    assert same.within and (same.points, same.key_points) == (2, 2)
