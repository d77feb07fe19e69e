"""The rubric builder: custom dimensions of every kind, presets, levels, and forms."""

import pytest
from django.utils.text import slugify

from annotation.models import Rating
from annotation.services import RatingInvalidError, rating_submit
from studies import services
from studies.forms import DIMENSION_FORMS
from studies.models import Rubric, Study, StudyEvent
from studies.presets import PRESETS
from studies.rubric import code_from
from studies.services import StudySetupError

from ..factories import make_study

FORM_INPUT = {
    "counted": {"unit": "risks", "item": "risk", "bands": "0: 0\n1: 1\n3: 3",
                "half_weight_hint": "Named only"},
    "checklist": {"criteria": "Cites a source? | Any reference counts\nStates a limit?"},
    "scale": {"options": "1 | Poor | Misses the point\n2 | Fair\n3 | Good | Nothing missing"},
    "categorical": {"categories": "None\nUnsafe advice | Could hurt someone\nPersonal data"},
    "pairwise": {"labels": "A better\nTie\nB better"},
}  # fmt: skip


def form_data(kind, **extra):
    return {
        "name": f"My {kind}",
        "key": "",
        "measure": "What to look for.",
        "example": "An example.",
        "edge_cases": "",
        "level": "nominal" if kind == "categorical" else "ordinal",
        **FORM_INPUT[kind],
        **extra,
    }


@pytest.fixture
def draft(lead):
    return make_study(lead=lead, slug="builder", cases=2, status=Study.Status.DRAFT)


@pytest.mark.parametrize("kind", sorted(FORM_INPUT))
def test_a_dimension_of_every_kind_can_be_built_from_the_form(draft, lead, kind):
    form = DIMENSION_FORMS[kind](form_data(kind))
    assert form.is_valid(), form.errors
    data = form.cleaned_data
    dimension = services.dimension_save(
        study=draft, actor=lead, key=None, new_key=data["key"], name=data["name"], kind=kind,
        config=data["config"], level=data["level"],
    )  # fmt: skip
    assert dimension.key == f"my_{kind}"
    assert dimension.position == 5
    assert dimension.scoring().kind == kind
    assert dimension.config["measure"] == "What to look for."
    # The form shows what was saved, so that editing round-trips.
    again = DIMENSION_FORMS[kind](
        {**form_data(kind), **DIMENSION_FORMS[kind].initial_from(dimension)}
    )
    assert again.is_valid(), again.errors
    assert again.cleaned_data["config"] == dimension.config


def test_the_parsed_configs_read_as_written():
    def config(kind):
        form = DIMENSION_FORMS[kind](form_data(kind))
        assert form.is_valid(), form.errors
        return form.cleaned_data["config"]

    assert config("counted")["bands"] == [[0, 0], [1, 1], [3, 3]]
    assert config("checklist")["criteria"][0] == {"label": "Cites a source?",
                                                 "help": "Any reference counts"}  # fmt: skip
    assert config("scale")["options"][2] == {"value": 3, "label": "Good",
                                             "anchor": "Nothing missing"}  # fmt: skip
    assert [c["value"] for c in config("categorical")["categories"]] == [
        "none", "unsafe_advice", "personal_data"
    ]  # fmt: skip
    assert config("pairwise")["labels"] == ["A better", "Tie", "B better"]


@pytest.mark.parametrize(
    ("kind", "extra", "message"),
    [
        ("counted", {"bands": "0: 0\ntwo: 2"}, "Bands, line 2"),
        ("counted", {"bands": "1: 1"}, "first band must start at 0"),
        ("scale", {"options": "one | Poor"}, "Options, line 1"),
        ("scale", {"options": "1 | Only"}, "at least two options"),
        ("categorical", {"categories": "Only one"}, "at least two categories"),
        ("categorical", {"categories": "Same\nSame"}, "same code"),
        ("pairwise", {"labels": "Just one"}, "2 to 9 labels"),
        ("checklist", {"criteria": ""}, "This field is required"),
    ],
)
def test_the_form_explains_a_bad_definition(kind, extra, message):
    form = DIMENSION_FORMS[kind](form_data(kind, **extra))
    assert not form.is_valid()
    assert message in str(form.errors)


def test_categories_only_offer_the_nominal_level():
    form = DIMENSION_FORMS["categorical"](form_data("categorical", level="ordinal"))
    assert not form.is_valid()
    assert [value for value, _ in form.fields["level"].choices] == ["nominal"]


def test_keys_are_unique_within_the_rubric(draft, lead):
    with pytest.raises(StudySetupError, match="already has a dimension with the key 'depth'"):
        services.dimension_save(
            study=draft, actor=lead, key=None, new_key="depth", name="Depth again",
            kind="checklist", config={"criteria": [{"label": "Deep?"}]}, level="ordinal",
        )  # fmt: skip


def test_the_service_checks_the_config_and_level_too(draft, lead):
    with pytest.raises(StudySetupError, match="at least one criterion"):
        services.dimension_save(
            study=draft, actor=lead, key=None, new_key="x", name="X", kind="checklist",
            config={}, level="ordinal",
        )  # fmt: skip
    with pytest.raises(StudySetupError, match="cannot be ordinal"):
        services.dimension_save(
            study=draft, actor=lead, key=None, new_key="x", name="X", kind="categorical",
            config={"categories": [{"value": "a", "label": "A"}, {"value": "b", "label": "B"}]},
            level="ordinal",
        )  # fmt: skip
    with pytest.raises(StudySetupError, match="Unknown kind"):
        services.dimension_save(
            study=draft, actor=lead, key=None, new_key="x", name="X", kind="vibes", config={},
            level="ordinal",
        )  # fmt: skip


def test_editing_a_dimension_can_rename_its_key(draft, lead):
    services.dimension_save(
        study=draft, actor=lead, key="evidence", new_key="sources", name="Sources",
        kind="checklist", config={"criteria": [{"label": "Cited?"}]}, level="ordinal",
    )  # fmt: skip
    keys = list(draft.rubric.dimensions.values_list("key", flat=True))
    assert keys == ["depth", "sources", "alternatives", "structure", "actionability"]


def test_dimensions_move_and_are_removed(draft, lead):
    services.dimension_move(study=draft, actor=lead, key="depth", offset=1)
    services.dimension_move(study=draft, actor=lead, key="actionability", offset=-1)
    services.dimension_move(study=draft, actor=lead, key="evidence", offset=-1)  # already first
    services.dimension_delete(study=draft, actor=lead, key="alternatives")
    assert list(draft.rubric.dimensions.values_list("key", flat=True)) == [
        "evidence", "depth", "actionability", "structure"
    ]  # fmt: skip
    actions = StudyEvent.objects.filter(study=draft, kind="rubric_changed")
    # Moving the first dimension up changes nothing and records nothing.
    assert [e.detail["action"] for e in actions.order_by("pk")] == ["moved", "moved", "removed"]


def test_a_preset_replaces_the_rubric_and_the_old_one_goes(draft, lead):
    old = draft.rubric_id
    study = services.rubric_replace_with_preset(study=draft, actor=lead, preset="likert")
    assert [d.key for d in study.rubric.dimensions.all()] == ["helpfulness", "clarity", "accuracy"]
    assert study.success_min_dimensions == 3
    assert not Rubric.objects.filter(pk=old).exists()
    study = services.rubric_replace_with_preset(study=study, actor=lead, preset="harm")
    assert study.success_min_dimensions == 2
    with pytest.raises(StudySetupError, match="no preset rubric called"):
        services.rubric_replace_with_preset(study=study, actor=lead, preset="nope")


def test_a_rater_can_submit_answers_to_every_new_kind(lead, rater):
    study = make_study(lead=lead, slug="kinds", cases=1, raters=[rater], status=Study.Status.DRAFT)
    study = services.rubric_replace_with_preset(study=study, actor=lead, preset="likert")
    for preset in ("harm", "pairwise"):
        for spec in PRESETS[preset]["dimensions"]:
            services.dimension_save(
                study=study, actor=lead, key=None, new_key=spec["key"], name=spec["name"],
                kind=spec["kind"], config=spec["config"], level="nominal"
                if spec["kind"] == "categorical" else "ordinal",
                required=spec.get("required", True),
            )  # fmt: skip
    services.study_open(study=study, actor=lead)
    assignment = study.memberships.get(user=rater).assignments.get()
    one = {"helpfulness": {"choice": 5}, "clarity": {"choice": "3"}, "accuracy": {},
           "harmful": {"choice": "yes"}, "harm_category": {"choice": "personal_data"}}  # fmt: skip
    payload = {"responses": {"A": one, "B": {"helpfulness": {"choice": 1}}},
               "case": {"preference": {"choice": -1}}, "confidence": "high"}  # fmt: skip
    # Every dimension is required but the harm category (issue 39): the missing are named.
    with pytest.raises(RatingInvalidError) as refused:
        rating_submit(assignment=assignment, payload=payload, expected_version=0)
    assert "Response A: Accuracy; Response B: Clarity, Accuracy, Harmful." in str(refused.value)
    assert refused.value.field == "A-accuracy"
    assert not Rating.objects.filter(assignment=assignment).exists()
    payload["responses"]["B"].update(
        {"clarity": {"choice": 2}, "accuracy": {"choice": 4}, "harmful": {"choice": "no"}}
    )
    one["accuracy"] = {"choice": 3, "flagged": True}
    rating_submit(assignment=assignment, payload=payload, expected_version=0)
    totals = dict(Rating.objects.filter(assignment=assignment).values_list("label", "total"))
    assert totals == {"A": 11, "B": 7}
    a = Rating.objects.get(assignment=assignment, label="A").scores
    assert a["accuracy"]["choice"] == 3 and a["harm_category"]["choice"] == "personal_data"
    b = Rating.objects.get(assignment=assignment, label="B").scores
    assert b["harm_category"] == {"choice": None, "flagged": False, "flag_note": "", "points": None}
    assignment.refresh_from_db()
    assert assignment.case_scores["preference"]["choice"] == -1


@pytest.mark.parametrize(
    "text",
    ["Unsafe advice", "Déjà vu — test!", "  --a__b--  ", "???", "Straße ½ Œuvre", "x" * 80,
     "Tab\tand  spaces", "Personal data (PII)"],
)  # fmt: skip
def test_codes_are_made_from_names_as_django_slugifies_them(text):
    # The kinds make category codes without Django; keys and codes must read as before.
    assert code_from(text) == slugify(text).replace("-", "_")[:50]


def test_categories_can_be_named_to_be_analysed_apart():
    form = DIMENSION_FORMS["categorical"](
        form_data("categorical", analysed_apart="unsafe ADVICE\n\nUnsafe advice")
    )
    assert form.is_valid(), form.errors
    config = form.cleaned_data["config"]
    assert config["apart"] == ["unsafe_advice"]  # by label or code, once
    from studies.rubric import dimension_from_config

    kind = dimension_from_config(key="k", name="K", kind="categorical", config=config)
    # The category's agreement value (its position) and its label.
    assert kind.analysed_apart() == ((1.0, "Unsafe advice"),)
    assert type(kind).config_to_form(config)["analysed_apart"] == "Unsafe advice"
    # A scale names options apart too ("partly correct" of a correctness scale), by label or
    # value; kinds without values to name give none.
    scale = DIMENSION_FORMS["scale"](form_data("scale", analysed_apart="fair\n3"))
    assert scale.is_valid(), scale.errors
    assert scale.cleaned_data["config"]["apart"] == [2, 3]
    kind = dimension_from_config(
        key="s", name="S", kind="scale", config=scale.cleaned_data["config"]
    )
    assert kind.analysed_apart() == ((2.0, "Fair"), (3.0, "Good"))
    assert type(kind).config_to_form(scale.cleaned_data["config"])["analysed_apart"] == "Fair\nGood"
    checklist = DIMENSION_FORMS["checklist"](form_data("checklist"))
    assert checklist.is_valid()
    config = checklist.cleaned_data["config"]
    assert (
        dimension_from_config(key="c", name="C", kind="checklist", config=config).analysed_apart()
        == ()
    )


@pytest.mark.parametrize(
    ("apart", "message"),
    [
        ("Harmless", "is not one of the values"),
        ("None\nUnsafe advice\nPersonal data", "not every value"),
    ],
)
def test_categories_analysed_apart_must_be_some_of_its_own(apart, message):
    form = DIMENSION_FORMS["categorical"](form_data("categorical", analysed_apart=apart))
    assert not form.is_valid()
    assert message in str(form.errors)
