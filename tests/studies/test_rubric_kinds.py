"""The kinds of dimension added for the rubric builder, the presets, and their wiring."""

from pathlib import Path

import pytest

from studies.forms import DIMENSION_FORMS
from studies.models import Dimension
from studies.presets import PRESETS
from studies.rubric import (
    KINDS,
    LEVELS,
    RubricValueError,
    allowed_levels,
    dimension_from_config,
    pairwise_values,
    score_response,
    total_points,
)

ROOT = Path(__file__).resolve().parents[2]


def preset_dimensions(name):
    return [
        dimension_from_config(key=d["key"], name=d["name"], kind=d["kind"], config=d["config"])
        for d in PRESETS[name]["dimensions"]
    ]


LIKERT = {"options": [{"value": v, "label": f"L{v}"} for v in range(1, 6)]}
CATEGORIES = {"categories": [{"value": "no", "label": "No"}, {"value": "yes", "label": "Yes"}]}
FIVE = ["A much better", "A slightly better", "Tie", "B slightly better", "B much better"]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_is_a_valid_rubric(name):
    dims = preset_dimensions(name)
    assert dims
    assert len({d.key for d in dims}) == len(dims)


def test_the_new_presets_have_the_documented_shape():
    (preference,) = preset_dimensions("pairwise")
    assert preference.kind == "pairwise" and preference.scope == "case"
    assert [label for _, label in preference.options()] == FIVE
    assert [value for value, _ in preference.options()] == [-2, -1, 0, 1, 2]
    (correctness,) = preset_dimensions("correctness")
    assert [o.label for o in correctness.options] == ["Correct", "Partly correct", "Incorrect"]
    assert correctness.max_points == 2
    harmful, category = preset_dimensions("harm")
    assert [c.value for c in harmful.categories] == ["no", "yes"]
    assert harmful.default_level == category.default_level == "nominal"
    assert len(category.categories) >= 3
    likert = preset_dimensions("likert")
    assert all(d.kind == "scale" and d.max_points == 5 for d in likert)
    assert sum(d.max_points for d in likert) == 15


# --- Ordinal scale ----------------------------------------------------------------------


def test_a_scale_scores_the_value_of_the_chosen_option():
    scale = dimension_from_config(key="q", name="Quality", kind="scale", config=LIKERT)
    assert scale.max_points == 5
    assert scale.default_level == "ordinal" and scale.scope == "response"
    assert scale.points(scale.clean({"choice": 4})) == 4
    assert scale.points(scale.clean({"choice": "2"})) == 2


def test_an_unanswered_scale_is_stored_as_no_answer_and_scores_zero():
    scale = dimension_from_config(key="q", name="Quality", kind="scale", config=LIKERT)
    for raw in (None, {}, {"choice": None}, {"choice": ""}):
        value = scale.clean(raw)
        assert value["choice"] is None
        assert scale.points(value) == 0


@pytest.mark.parametrize("choice", [0, 6, "x", True, 2.5, [1]])
def test_a_scale_refuses_a_choice_that_is_not_an_option(choice):
    scale = dimension_from_config(key="q", name="Quality", kind="scale", config=LIKERT)
    with pytest.raises(RubricValueError, match="choose one of the options"):
        scale.clean({"choice": choice})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ([{"value": 1, "label": "One"}], "at least two options"),
        ([{"value": 1, "label": "A"}, {"value": 1, "label": "B"}], "same value"),
        ([{"value": -1, "label": "A"}, {"value": 1, "label": "B"}], "0 or more"),
        ([{"value": 1.5, "label": "A"}, {"value": 2, "label": "B"}], "whole numbers"),
        ([{"value": 1, "label": ""}, {"value": 2, "label": "B"}], "needs a text"),
        (
            [{"value": 1, "label": "A"}, {"value": 3, "label": "C"}, {"value": 2, "label": "B"}],
            "in order",
        ),  # fmt: skip
    ],
)
def test_a_scale_config_is_checked(options, message):
    with pytest.raises(RubricValueError, match=message):
        dimension_from_config(key="q", name="Q", kind="scale", config={"options": options})


def test_a_scale_may_list_its_options_from_high_to_low():
    (correctness,) = preset_dimensions("correctness")
    assert correctness.points(correctness.clean({"choice": 0})) == 0
    assert correctness.points(correctness.clean({"choice": 2})) == 2


# --- Nominal categories -----------------------------------------------------------------


def test_categories_store_the_code_and_give_no_points():
    harm = dimension_from_config(key="h", name="Harm", kind="categorical", config=CATEGORIES)
    value = harm.clean({"choice": "yes", "flagged": True, "flag_note": " unsure "})
    assert value == {"choice": "yes", "flagged": True, "flag_note": "unsure"}
    assert harm.points(value) == 0 and harm.max_points == 0
    assert harm.clean({})["choice"] is None
    with pytest.raises(RubricValueError):
        harm.clean({"choice": "maybe"})


def test_categories_need_two_distinct_codes():
    with pytest.raises(RubricValueError, match="at least two"):
        dimension_from_config(
            key="h",
            name="H",
            kind="categorical",
            config={"categories": [CATEGORIES["categories"][0]]},
        )
    twice = {"categories": [{"value": "a", "label": "A"}, {"value": "a", "label": "B"}]}
    with pytest.raises(RubricValueError, match="same code"):
        dimension_from_config(key="h", name="H", kind="categorical", config=twice)


# --- Pairwise preference ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("count", "values"),
    [(2, [-1, 1]), (3, [-1, 0, 1]), (4, [-2, -1, 1, 2]), (5, [-2, -1, 0, 1, 2])],
)
def test_pairwise_values_are_signed_around_the_tie(count, values):
    assert pairwise_values(count) == values


def test_a_pairwise_preference_is_rated_once_per_case_and_not_counted():
    pref = dimension_from_config(key="p", name="P", kind="pairwise", config={"labels": FIVE})
    assert pref.scope == "case" and pref.max_points == 0 and pref.default_level == "ordinal"
    assert pref.clean({"choice": -2})["choice"] == -2
    assert pref.points(pref.clean({"choice": 2})) == 0
    with pytest.raises(RubricValueError):
        pref.clean({"choice": 3})
    with pytest.raises(RubricValueError, match="2 to 9 labels"):
        dimension_from_config(key="p", name="P", kind="pairwise", config={"labels": ["Only"]})


def test_response_totals_count_scales_but_not_categories():
    dims = [
        dimension_from_config(key="q", name="Q", kind="scale", config=LIKERT),
        dimension_from_config(key="h", name="H", kind="categorical", config=CATEGORIES),
        *preset_dimensions("reference")[:2],
    ]
    scored = score_response(
        dims,
        {
            "q": {"choice": 4},
            "h": {"choice": "yes"},
            "depth": {"items": [{"text": str(i)} for i in range(4)]},
            "evidence": {"checked": [True, False, False]},
        },
    )
    assert total_points(scored) == 4 + 0 + 4 + 1


# --- Wiring: every kind is registered, rendered, scored live and buildable ----------------


def test_every_kind_is_a_model_choice_with_a_template_a_script_entry_and_a_form():
    assert {kind for kind, _ in Dimension.KIND_CHOICES} == set(KINDS)
    assert set(DIMENSION_FORMS) == set(KINDS)
    script = (ROOT / "static" / "js" / "dimension-kinds.js").read_text()
    for kind, kind_class in KINDS.items():
        assert (ROOT / "templates" / "annotation" / "dimensions" / f"{kind}.html").exists()
        assert f"{kind}:" in script
        for attribute in ("from_config", "clean", "points", "max_points", "default_level", "scope"):
            assert hasattr(kind_class, attribute)


def test_categories_can_only_be_nominal():
    assert allowed_levels("categorical") == ("nominal",)
    assert allowed_levels("scale") == LEVELS
