"""The HTTP API's sample-size calculator: the page's forms and formulas, as JSON."""

from collections.abc import Callable

from django import forms
from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import (
    ErrorResponseSerializer,
    body_object,
    form_errors,
    scalar_fields,
    unknown_fields_refuse,
)
from studies import access

from .forms import MeanDifferenceForm, WinRateForm

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}

# Which question and its form: the page's pair (``views/sample_size.py``).
CALCULATORS: dict[str, type[forms.Form]] = {"win": WinRateForm, "mean": MeanDifferenceForm}
_INPUTS = sorted({name for form in CALCULATORS.values() for name in form.base_fields})


def _needed(which: str, inputs: dict) -> int:
    """The test cases a question needs, by its formula (the statistics load numpy: imported
    when a question is asked)."""
    from .stats.estimates import mean_difference_sample_size, win_rate_sample_size

    formulas: dict[str, Callable[..., int]] = {
        "win": win_rate_sample_size,
        "mean": mean_difference_sample_size,
    }
    return formulas[which](**inputs)


def _field_schema(field) -> dict:
    return {
        "label": str(field.label),
        "initial": field.initial,
        "min": field.min_value,
        "max": field.max_value,
    }


SampleSizeSerializer = inline_serializer(
    "SampleSize",
    {
        "cases": serializers.IntegerField(help_text="test cases in the study's sample"),
        "calculators": serializers.DictField(
            child=serializers.DictField(),
            help_text="per question (win, mean), each input's label, default and bounds",
        ),
        "answer": inline_serializer(
            "SampleSizeAnswer",
            {
                "which": serializers.ChoiceField(choices=list(CALCULATORS)),
                "inputs": serializers.DictField(child=serializers.FloatField()),
                "needed": serializers.IntegerField(help_text="test cases needed"),
                "enough": serializers.BooleanField(),
                "short": serializers.IntegerField(help_text="cases missing, 0 if enough"),
            },
            allow_null=True,
        ),
    },
)


def _answer(study, data: dict | None) -> dict:
    n_cases = study.test_cases.in_sample().count()
    answer = None
    if data is not None:
        which = data.get("which")
        if which not in CALCULATORS:
            raise exceptions.ValidationError(["which: win (a win rate) or mean (a difference)."])
        form_class = CALCULATORS[which]
        inputs = {name: data[name] for name in form_class.base_fields if name in data}
        form = form_class(inputs)
        if not form.is_valid():
            raise form_errors(form)
        needed = _needed(which, form.cleaned_data)
        answer = {
            "which": which,
            "inputs": form.cleaned_data,
            "needed": needed,
            "enough": n_cases >= needed,
            "short": max(0, needed - n_cases),
        }
    return {
        "cases": n_cases,
        "calculators": {
            which: {name: _field_schema(f) for name, f in form_class.base_fields.items()}
            for which, form_class in CALCULATORS.items()
        },
        "answer": answer,
    }


@extend_schema(
    methods=["GET"],
    summary="The sample-size calculator: the sample's size and each question's inputs",
    responses={200: SampleSizeSerializer, **ERRORS},
)
@extend_schema(
    methods=["POST"],
    summary="How many test cases a question needs, against the study's sample",
    description=(
        "`which`: `win` (a win rate: `p1`, `alpha`, `power`, `tie_share`) or `mean` (a "
        "mean difference: `difference`, `sd`, `alpha`, `power`); inputs left out take the "
        "page's defaults; any other field is refused. Computes only: nothing is stored."
    ),
    request=inline_serializer(
        "SampleSizeIn",
        {
            "which": serializers.ChoiceField(choices=list(CALCULATORS)),
            "p1": serializers.FloatField(required=False),
            "tie_share": serializers.FloatField(required=False),
            "difference": serializers.FloatField(required=False),
            "sd": serializers.FloatField(required=False),
            "alpha": serializers.FloatField(required=False),
            "power": serializers.FloatField(required=False),
        },
    ),
    responses={200: SampleSizeSerializer, **ERRORS},
)
@api_view(["GET", "POST"])
def sample_size(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    if request.method == "GET":
        return Response(_answer(study, None))
    body = body_object(request, fields=["which", *_INPUTS], what="an input of either calculator")
    data = scalar_fields(body, ["which", *_INPUTS])
    which = data.get("which")
    if which in CALCULATORS:
        form_class = CALCULATORS[which]
        # A misspelt input would otherwise take its default unseen, and the answer would
        # be for another question than the one asked.
        unknown_fields_refuse(
            body,
            ["which", *form_class.base_fields],
            what=f"an input of the {which} calculator",
            use=list(form_class.base_fields),
        )
        # The page's defaults for what the body leaves out.
        for name, field in form_class.base_fields.items():
            data.setdefault(name, field.initial)
    return Response(_answer(study, data))


urlpatterns = [
    path("studies/<slug:slug>/sample-size/", sample_size, name="sample_size"),
]
