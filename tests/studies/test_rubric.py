from decimal import Decimal

import pytest

from studies.presets import REFERENCE_RUBRIC
from studies.rubric import (
    RubricValueError,
    answers_missing,
    dimension_from_config,
    response_total,
    score_response,
)


def reference_dimensions():
    return [
        dimension_from_config(key=d["key"], name=d["name"], kind=d["kind"], config=d["config"])
        for d in REFERENCE_RUBRIC["dimensions"]
    ]


def dimension(key):
    return next(d for d in reference_dimensions() if d.key == key)


def items(full: int, half: int = 0) -> dict:
    return {
        "items": [{"text": f"full {i}", "half": False} for i in range(full)]
        + [{"text": f"half {i}", "half": True} for i in range(half)]
    }


def test_reference_rubric_has_five_dimensions_worth_twenty_points():
    dims = reference_dimensions()
    assert [d.key for d in dims] == [
        "depth",
        "evidence",
        "alternatives",
        "structure",
        "actionability",
    ]
    assert [d.max_points for d in dims] == [5, 3, 5, 3, 4]
    assert sum(d.max_points for d in dims) == 20


@pytest.mark.parametrize(
    ("count", "points"),
    [(0, 0), (1, 0), (2, 2), (3, 2), (4, 4), (5, 4), (6, 5), (7, 5), (12, 5)],
)
def test_depth_bands_at_every_boundary(count, points):
    depth = dimension("depth")
    assert depth.points(depth.clean(items(count))) == points


@pytest.mark.parametrize(("count", "points"), [(0, 0), (1, 2), (2, 4), (3, 5), (4, 5)])
def test_alternatives_bands_at_every_boundary(count, points):
    alternatives = dimension("alternatives")
    assert alternatives.points(alternatives.clean(items(count))) == points


@pytest.mark.parametrize(("count", "points"), [(0, 0), (1, 2), (2, 2), (3, 4), (5, 4)])
def test_actionability_bands_at_every_boundary(count, points):
    actionability = dimension("actionability")
    assert actionability.points(actionability.clean(items(count))) == points


@pytest.mark.parametrize(
    ("key", "full", "half", "count", "points"),
    [
        # A fractional count stays in the band whose lower bound it has reached.
        ("depth", 1, 1, "1.5", 0),
        ("depth", 1, 2, "2", 2),
        ("depth", 3, 1, "3.5", 2),
        ("depth", 5, 1, "5.5", 4),
        ("depth", 5, 2, "6", 5),
        ("depth", 0, 12, "6", 5),
        ("alternatives", 0, 1, "0.5", 0),
        ("alternatives", 0, 2, "1", 2),
        ("alternatives", 1, 1, "1.5", 2),
        ("alternatives", 2, 1, "2.5", 4),
        ("actionability", 0, 1, "0.5", 0),
        ("actionability", 2, 1, "2.5", 2),
        ("actionability", 2, 2, "3", 4),
    ],
)
def test_half_weight_items_count_half_and_meet_bands_from_below(key, full, half, count, points):
    dim = dimension(key)
    value = dim.clean(items(full, half))
    assert dim.count(value) == Decimal(count)
    assert dim.points(value) == points


def test_blank_items_are_dropped_and_text_is_trimmed():
    depth = dimension("depth")
    value = depth.clean({"items": [{"text": "  risk  "}, {"text": "   "}, {"text": ""}]})
    assert value["items"] == [{"text": "risk", "half": False}]
    assert depth.count(value) == 1


@pytest.mark.parametrize(
    ("checked", "points"),
    [
        ([False, False, False], 0),
        ([True, False, False], 1),
        ([True, False, True], 2),
        ([True] * 3, 3),
    ],
)
def test_checklist_scores_one_point_per_criterion(checked, points):
    evidence = dimension("evidence")
    assert evidence.points(evidence.clean({"checked": checked})) == points


def test_checklist_rejects_the_wrong_number_of_answers():
    with pytest.raises(RubricValueError, match="each of the 3 criteria"):
        dimension("structure").clean({"checked": [True, True]})


def test_total_is_the_sum_of_dimension_points():
    scored = score_response(
        reference_dimensions(),
        {
            "depth": items(5),  # 4
            "evidence": {"checked": [True, False, True]},  # 2
            "alternatives": items(2),  # 4
            "structure": {"checked": [True, True, True]},  # 3
            "actionability": items(2, 1),  # 2.5 -> 2
        },
    )
    assert {k: v["points"] for k, v in scored.items()} == {
        "depth": 4, "evidence": 2, "alternatives": 4, "structure": 3, "actionability": 2,
    }  # fmt: skip
    assert response_total(reference_dimensions(), scored) == 15


def test_an_unanswered_part_leaves_the_total_missing_not_zero():
    """Issue 39: a part left out has no points, and the response has no total."""
    dimensions = reference_dimensions()
    answers = {"depth": items(5), "evidence": {"checked": [True, False, True]}}
    scored = score_response(dimensions, answers)
    assert scored["alternatives"]["points"] is None
    assert response_total(dimensions, scored) is None
    missing = answers_missing(dimensions, {"A": scored}, {})
    assert [(m.label, m.key) for m in missing] == [
        ("A", "alternatives"), ("A", "structure"), ("A", "actionability"),
    ]  # fmt: skip
    assert missing[0].field == "A-alternatives"


def test_nothing_counted_and_nothing_ticked_are_answers():
    dimensions = reference_dimensions()
    empty = {"items": []}
    unticked = {"checked": [False, False, False]}
    answers = {"depth": empty, "evidence": unticked, "alternatives": empty,
               "structure": unticked, "actionability": empty}  # fmt: skip
    scored = score_response(dimensions, answers)
    assert response_total(dimensions, scored) == 0
    assert answers_missing(dimensions, {"A": scored}, {}) == []


def test_an_optional_dimension_may_be_left_out_but_the_total_is_then_missing():
    required, optional = reference_dimensions()[:2]
    optional = dimension_from_config(
        key=optional.key, name=optional.name, kind="checklist",
        config={"criteria": [{"label": c} for c in optional.criteria]}, required=False,
    )  # fmt: skip
    scored = score_response([required, optional], {"depth": items(2)})
    assert answers_missing([required, optional], {"A": scored}, {}) == []
    assert response_total([required, optional], scored) is None


def test_too_long_items_are_refused():
    with pytest.raises(RubricValueError, match="longer than"):
        dimension("depth").clean({"items": [{"text": "x" * 501}]})


def test_flags_are_kept_with_their_note():
    value = dimension("depth").clean({"items": [], "flagged": True, "flag_note": " unclear "})
    assert value["flagged"] is True
    assert value["flag_note"] == "unclear"


def test_band_labels_read_like_the_instructions():
    assert dimension("depth").band_labels() == [("0-1", 0), ("2-3", 2), ("4-5", 4), ("6+", 5)]
    assert dimension("alternatives").band_labels() == [("0", 0), ("1", 2), ("2", 4), ("3+", 5)]
    assert dimension("actionability").band_labels() == [("0", 0), ("1-2", 2), ("3+", 4)]


def test_bands_must_rise():
    with pytest.raises(RubricValueError, match="rise"):
        dimension_from_config(
            key="x", name="X", kind="counted", config={"bands": [[0, 0], [3, 2], [2, 4]]}
        )


def test_unknown_kind_is_refused():
    with pytest.raises(RubricValueError, match="Unknown dimension kind"):
        dimension_from_config(key="x", name="X", kind="vibes", config={})
