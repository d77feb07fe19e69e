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
    response_total,
    score_response,
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
    assert response_total(dims, scored) == 4 + 0 + 4 + 1
    # The category left unanswered is no part of the total; the scale is.
    assert response_total(dims, {**scored, "h": dims[1].score(None)}) == 4 + 0 + 4 + 1
    assert response_total(dims, {**scored, "q": dims[0].score(None)}) is None


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
    assert KINDS["categorical"].levels == ("nominal",)


def test_the_kind_choices_come_from_the_kinds_with_the_labels_the_migrations_hold():
    assert Dimension.KIND_CHOICES == [
        ("counted", "Counted with bands"),
        ("checklist", "Checklist"),
        ("scale", "Ordinal scale with anchors"),
        ("categorical", "Nominal categories"),
        ("pairwise", "Pairwise preference"),
    ]


# --- Reading answers back: one owner for the recorded answer ------------------------------

DEPTH, EVIDENCE = preset_dimensions("reference")[:2]
SCALE = dimension_from_config(key="q", name="Quality", kind="scale", config=LIKERT)
HARM = dimension_from_config(
    key="h",
    name="Harm",
    kind="categorical",
    config={"categories": [*CATEGORIES["categories"], {"value": "maybe", "label": "Maybe"}]},
)
PREFERENCE = dimension_from_config(key="p", name="P", kind="pairwise", config={"labels": FIVE})
EVERY_KIND = [DEPTH, EVIDENCE, SCALE, HARM, PREFERENCE]


def test_every_kind_reads_its_answers_back():
    for kind_class in KINDS.values():
        for method in (
            "score", "agreement_value", "cell_out", "cell_in", "read_cell", "cell_choices",
            "describe_cell", "long_text", "display", "display_options", "label", "levels",
            "lists_items", "compares_two",
        ):  # fmt: skip
            assert hasattr(kind_class, method), (kind_class.kind, method)


def test_a_pairwise_preference_is_read_in_key_order_whatever_the_screen_showed():
    prefers_first_shown = PREFERENCE.score({"choice": -2})
    # Not flipped: the first response shown is key label A.
    assert PREFERENCE.agreement_value(prefers_first_shown, flipped=False) == -2.0
    assert PREFERENCE.cell_out(prefers_first_shown, flipped=False) == -2
    assert PREFERENCE.long_text(prefers_first_shown, flipped=False) == ("", "-2")
    # Flipped: the first response shown was key label B, so the preference is for B.
    assert PREFERENCE.agreement_value(prefers_first_shown, flipped=True) == 2.0
    assert PREFERENCE.cell_out(prefers_first_shown, flipped=True) == 2
    assert PREFERENCE.long_text(prefers_first_shown, flipped=True) == ("", "2")
    unanswered = PREFERENCE.score({})
    assert PREFERENCE.agreement_value(unanswered, flipped=True) is None
    assert PREFERENCE.cell_out(unanswered, flipped=True) == ""


def test_only_a_pairwise_preference_depends_on_the_screen_order():
    for dimension, raw in [(SCALE, {"choice": 4}), (HARM, {"choice": "yes"})]:
        value = dimension.score(raw)
        assert dimension.agreement_value(value, flipped=True) == dimension.agreement_value(
            value, flipped=False
        )
        assert dimension.cell_out(value, flipped=True) == dimension.cell_out(value, flipped=False)


def test_categories_are_numbered_by_their_place_in_the_configuration():
    # "maybe" is third in the configuration: it is 2 whatever was answered first.
    assert HARM.agreement_value(HARM.score({"choice": "maybe"})) == 2.0
    assert HARM.agreement_value(HARM.score({"choice": "no"})) == 0.0
    assert HARM.agreement_value(HARM.score({"choice": "yes"})) == 1.0
    assert HARM.agreement_value(HARM.score({})) is None
    assert HARM.agreement_value(None) is None


def test_counted_and_checklist_answers_are_their_points_for_agreement():
    four_factors = DEPTH.score({"items": [{"text": str(i)} for i in range(4)]})
    assert DEPTH.agreement_value(four_factors) == 4.0
    assert DEPTH.agreement_value(DEPTH.score({"points": 5})) == 5.0
    assert EVIDENCE.agreement_value(EVIDENCE.score({"checked": [True, False, True]})) == 2.0
    assert SCALE.agreement_value(SCALE.score({"choice": 3})) == 3.0
    assert SCALE.agreement_value(SCALE.score({})) is None
    assert DEPTH.agreement_value(None) is None


@pytest.mark.parametrize(
    ("dimension", "raw"),
    [
        (DEPTH, {"items": [{"text": str(i), "half": i == 0} for i in range(6)]}),  # 5.5 -> 4
        (DEPTH, {"items": []}),
        (EVIDENCE, {"checked": [True, True, False]}),
        (SCALE, {"choice": 5}),
        (SCALE, {}),
        (HARM, {"choice": "maybe"}),
        (HARM, {}),
        (PREFERENCE, {"choice": -1}),
        (PREFERENCE, {"choice": 0}),
        (PREFERENCE, {}),
    ],
)
@pytest.mark.parametrize("flipped", [False, True])
def test_a_worksheet_cell_reads_back_what_it_shows(dimension, raw, flipped):
    stored = dimension.score(raw)
    cell = dimension.cell_out(stored, flipped=flipped)
    read = dimension.read_cell(str(cell))  # a worksheet is read in key order, never flipped
    assert dimension.cell_out(read, flipped=False) == cell
    assert read["points"] == stored["points"]  # None where unanswered, never 0
    assert dimension.agreement_value(read, flipped=False) == dimension.agreement_value(
        stored, flipped=flipped
    )
    assert set(read) == set(stored)  # the one stored shape


def test_a_worksheet_gives_only_points_for_counted_dimensions_and_checklists():
    assert DEPTH.read_cell("4") == {"items": None, "points": 4, "flagged": False, "flag_note": ""}
    assert EVIDENCE.read_cell("2.0") == {
        "checked": None,
        "points": 2,
        "flagged": False,
        "flag_note": "",
    }
    assert DEPTH.cell_in("5") == {"points": 5}
    assert SCALE.cell_in("L4") == {"choice": 4}  # an option's label
    assert HARM.cell_in("Yes") == {"choice": "yes"}  # a category's label or code
    assert PREFERENCE.cell_in("B much better") == {"choice": 2}
    assert SCALE.cell_in("") == {"choice": None}


@pytest.mark.parametrize(
    ("dimension", "text", "message"),
    [
        (DEPTH, "3", "3 is not allowed; Depth takes 0, 2, 4, 5."),
        (DEPTH, "6", "6 is not allowed; Depth takes 0, 2, 4, 5."),
        (DEPTH, "four", "four is not a whole number; Depth takes 0, 2, 4, 5."),
        (DEPTH, "2.5", "2.5 is not a whole number; Depth takes 0, 2, 4, 5."),
        (DEPTH, "inf", "inf is not a whole number; Depth takes 0, 2, 4, 5."),
        (EVIDENCE, "4", "4 is not allowed; Depth takes 0 to 3."),
        (SCALE, "0", "0 is not allowed; Depth takes 1 to 5."),
        (HARM, "2", "2 is not allowed; Depth takes no, yes, maybe."),
        (PREFERENCE, "3", "3 is not allowed; Depth takes -2 to 2."),
    ],
)
def test_a_worksheet_cell_that_does_not_fit_is_refused_with_what_it_takes(dimension, text, message):
    with pytest.raises(RubricValueError) as refused:
        dimension.read_cell(text, header="Depth")
    assert str(refused.value) == message


def test_points_alone_are_accepted_only_at_the_scores_a_dimension_can_give():
    for points in (0, 2, 4, 5, "4"):
        value = DEPTH.clean({"points": points})
        assert value["items"] is None and DEPTH.points(value) == int(points)
    for points in (1, 3, 6, -2, 2.5, True, "x"):  # None: no points, no answer
        with pytest.raises(RubricValueError, match="is not a possible score; it takes 0, 2, 4, 5"):
            DEPTH.clean({"points": points})
    for points in range(4):
        value = EVIDENCE.clean({"points": points, "flagged": True, "flag_note": " why "})
        assert value == {"checked": None, "points": points, "flagged": True, "flag_note": "why"}
    for points in (-1, 4):
        with pytest.raises(RubricValueError, match="it takes 0 to 3"):
            EVIDENCE.clean({"points": points})
    # Listed items or answered criteria are the answer; points beside them are recomputed.
    assert DEPTH.score({"items": [], "points": 5})["points"] == 0
    assert EVIDENCE.score({"checked": [True, True, True], "points": 0})["points"] == 3
    # Nothing at all is no answer (issue 39); an empty list is one, as on the rating screen.
    for kind, empty in ((DEPTH, {"items": []}), (EVIDENCE, {"checked": [False] * 3})):
        assert not kind.given(kind.score({})) and kind.score({})["points"] is None
        assert kind.score({"flagged": True})["flagged"] and not kind.given(kind.score({}))
        assert kind.given(kind.score(empty)) and kind.score(empty)["points"] == 0
        assert kind.read_cell("")["points"] is None and kind.cell_out(kind.score({})) == ""


def test_a_stored_answer_cleans_to_itself():
    for dimension, raw in [
        (DEPTH, {"items": [{"text": "a", "half": True}], "flagged": True, "flag_note": "n"}),
        (DEPTH, {"points": 4}),
        (EVIDENCE, {"points": 1}),
        (SCALE, {"choice": 2}),
        (PREFERENCE, {"choice": 1}),
    ]:
        stored = dimension.score(raw)
        assert dimension.score(stored) == stored


def test_the_long_table_text_of_each_kind():
    counted = DEPTH.score({"items": [{"text": "cost", "half": True}, {"text": "risk"}]})
    assert DEPTH.long_text(counted) == ("½ cost | risk", "1.5")
    assert DEPTH.long_text(DEPTH.score({"points": 4})) == ("", "")
    assert EVIDENCE.long_text(EVIDENCE.score({"checked": [True, False, True]})) == (
        "",
        "yes;no;yes",
    )
    assert EVIDENCE.long_text(EVIDENCE.score({"points": 2})) == ("", "")
    assert SCALE.long_text(SCALE.score({"choice": 3})) == ("", "3")
    assert HARM.long_text(HARM.score({})) == ("", "")
    assert HARM.long_text(None) == ("", "")


def test_the_display_of_each_kind():
    criteria = list(EVIDENCE.criteria)
    checked = EVIDENCE.display(EVIDENCE.score({"checked": [True, False, False]}))
    assert checked["shape"] == "checked" and checked["points"] == 1 and checked["max"] == 3
    assert checked["criteria"] == list(zip(criteria, [True, False, False], strict=True))
    listed = DEPTH.display(DEPTH.score({"items": [{"text": "a", "half": True}], "flagged": True}))
    assert listed["shape"] == "items" and listed["flagged"] and not listed["offline"]
    assert (listed["count"], listed["points"]) == ("0.5", 0)
    choice = SCALE.display(SCALE.score({}))
    assert choice["shape"] == "choice" and choice["choice"] is None
    assert SCALE.display(None)["points"] is None and SCALE.display(None)["shape"] == ""
    assert [o["label"] for o in PREFERENCE.display_options()] == FIVE
    assert DEPTH.display_options() == []


def test_answers_counted_offline_show_their_points_alone():
    offline = DEPTH.display(DEPTH.score({"points": 4}))
    assert offline["offline"] and offline["points"] == 4 and offline["items"] == []
    offline = EVIDENCE.display(EVIDENCE.score({"points": 2}))
    assert offline["offline"] and offline["points"] == 2 and offline["criteria"] is None


# --- Reading an answer back: what other modules ask instead of reading its fields ---------


@pytest.mark.parametrize(
    ("dimension", "blank", "given"),
    [
        (DEPTH, {}, {"items": [{"text": "cost"}]}),
        (DEPTH, {"items": []}, {"points": 2}),
        (EVIDENCE, {}, {"checked": [False, True, False]}),
        (SCALE, {"choice": None}, {"choice": 1}),
        (HARM, {}, {"choice": "no"}),
        (PREFERENCE, {"choice": None}, {"choice": 0}),  # a tie is an answer
    ],
)
def test_each_kind_says_whether_an_answer_gives_anything(dimension, blank, given):
    assert not dimension.answered(dimension.score(blank))
    assert dimension.answered(dimension.score(given))
    assert not dimension.answered(None)


def test_the_items_listed_are_read_back_with_their_weight():
    value = DEPTH.score(
        {"items": [{"text": "cost", "half": True}, {"text": " "}, {"text": "risk"}]}
    )
    assert DEPTH.listed_items(value) == [("cost", True), ("risk", False)]
    assert DEPTH.listed_items(DEPTH.score({"points": 2})) == []
    assert EVIDENCE.listed_items(EVIDENCE.score({})) == []


def test_two_answers_are_the_same_when_they_score_the_same():
    assert EVIDENCE.same_answer(
        EVIDENCE.score({"checked": [True, False, False]}),
        EVIDENCE.score({"checked": [False, False, True]}),
    )
    assert not HARM.same_answer(HARM.score({"choice": "yes"}), HARM.score({"choice": "no"}))
    assert not SCALE.same_answer(SCALE.score({"choice": 2}), None)


def test_a_key_answer_expects_its_points_or_choice_within_the_tolerance():
    """The qualification's rule, said by each kind with its expected_met."""
    key, near, far = (DEPTH.score({"points": p}) for p in (4, 5, 0))
    expected = DEPTH.expected_from_key(key, tolerance=1)
    assert DEPTH.expected_met(expected, near) and not DEPTH.expected_met(expected, far)
    expected = EVIDENCE.expected_from_key(EVIDENCE.score({"points": 2}), tolerance=0)
    assert EVIDENCE.expected_text(expected) == "2"
    assert EVIDENCE.expected_met(expected, EVIDENCE.score({"checked": [True, False, True]}))
    assert not EVIDENCE.expected_met(expected, EVIDENCE.score({"checked": [True, False, False]}))
    expected = PREFERENCE.expected_from_key(PREFERENCE.score({"choice": 2}), tolerance=1)
    assert expected == {"choices": [1, 2]}
    # Categories have no order: the tolerance does not apply.
    assert HARM.expected_from_key(HARM.score({"choice": "yes"}), tolerance=3) == {
        "choices": ["yes"]
    }
    assert SCALE.expected_from_key(SCALE.score({"choice": None}), tolerance=1) is None
    assert (SCALE.key_value(SCALE.score({"choice": 3})), HARM.key_value(None)) == (3, None)


def test_the_rating_help_holds_each_kinds_own_settings():
    depth = DEPTH.rating_help()
    assert (depth["unit"], depth["item"]) == ("factors", "factor")
    assert depth["band_labels"] == [("0-1", 0), ("2-3", 2), ("4-5", 4), ("6+", 5)]
    assert [c["label"] for c in EVIDENCE.rating_help()["criteria"]] == list(EVIDENCE.criteria)
    assert SCALE.rating_help() == {
        "unit": "items", "item": "item", "half_weight_hint": "", "bands": [], "band_labels": [],
        "criteria": [],
    }  # fmt: skip
