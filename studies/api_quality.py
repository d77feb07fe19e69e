"""The HTTP API's gold items and attention checks: the quality rules, the items with their
expected answers, a gold file, an attention check, as the quality pages do them.

The same access helper (coordinators), forms and services (``studies.services.quality``)
as the pages, so the same frozen rule: all of it is protocol and changes only until the
study opens. Expected answers are read and written by system name, as the pages show
them, never by the blinded label (which would tell the key).
"""

from django.shortcuts import get_object_or_404
from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import (
    ErrorResponseSerializer,
    body_object,
    form_errors,
    row_fields_refuse,
    scalar_fields,
)

from . import access
from .forms import AttentionForm, GoldFileForm, QualitySettingsForm
from .models import Study, TestCase
from .selectors import quality_ids_standing_out, quality_settings_for
from .services import quality

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}
RULES = list(QualitySettingsForm.base_fields)
# A PUT's expected answers: at most this many cells (a row per response and dimension).
MAX_CELLS = 500
PURPOSES = [TestCase.Purpose.GOLD, TestCase.Purpose.ATTENTION]


def _rule_fields(*, required: bool) -> dict:
    fields: dict = {
        name: serializers.IntegerField(min_value=low, max_value=high, required=required)
        for name, (low, high) in quality.SETTING_BOUNDS.items()
    }
    fields["gold_feedback"] = serializers.BooleanField(required=required)
    fields["position_alpha"] = serializers.DecimalField(
        max_digits=4, decimal_places=3, required=required, help_text="0.001 to 0.5"
    )
    return fields


RulesSerializer = inline_serializer("QualityRules", _rule_fields(required=True))
RulesInSerializer = inline_serializer("QualityRulesIn", _rule_fields(required=False))
ITEM_ROW: dict[str, serializers.Field] = {
    "case": serializers.UUIDField(help_text="the case's uuid, for quality/{case_uuid}/"),
    "case_id": serializers.CharField(),
    "purpose": serializers.ChoiceField(choices=TestCase.Purpose.choices),
    "prompt": serializers.CharField(),
    "explanation": serializers.CharField(allow_blank=True),
}
QualitySerializer = inline_serializer(
    "Quality",
    {
        "frozen": serializers.BooleanField(help_text="open: nothing here can change"),
        "rules": RulesSerializer,
        "items": inline_serializer("QualityItemRow", ITEM_ROW, many=True),
        "standing_out": serializers.ListField(
            child=serializers.CharField(),
            help_text="the items' ids a rater could tell from the sample's (on a worksheet)",
        ),
    },
)


def _cell_fields() -> dict:
    return {
        "response": serializers.CharField(
            allow_blank=True, help_text="the system's name; empty for a dimension of the case"
        ),
        "dimension": serializers.CharField(help_text="the dimension's key (or name)"),
        "expected": serializers.CharField(
            allow_blank=True,
            max_length=quality.MAX_EXPECTED_FIELD,
            help_text="as the kind reads it (the gold file's column); empty: none",
        ),
    }


QualityItemSerializer = inline_serializer(
    "QualityItem",
    {
        "case": serializers.UUIDField(),
        "case_id": serializers.CharField(),
        "purpose": serializers.ChoiceField(choices=TestCase.Purpose.choices),
        "explanation": serializers.CharField(allow_blank=True),
        "frozen": serializers.BooleanField(),
        "expected": inline_serializer(
            "ExpectedCellOut",
            {
                **_cell_fields(),
                "name": serializers.CharField(help_text="the dimension's name"),
                "help": serializers.CharField(help_text="what the kind reads"),
            },
            many=True,
        ),
        "responses": inline_serializer(
            "QualityItemResponse",
            {"system": serializers.CharField(), "text": serializers.CharField()},
            many=True,
        ),
    },
)
QualityItemInSerializer = inline_serializer(
    "QualityItemIn",
    {
        "purpose": serializers.CharField(help_text="gold or attention"),
        "explanation": serializers.CharField(
            required=False, allow_blank=True, max_length=quality.MAX_EXPLANATION
        ),
        "expected": inline_serializer(
            "ExpectedCell", _cell_fields(), many=True, max_length=MAX_CELLS
        ),
    },
)


def _rules(study: Study) -> dict:
    settings = quality_settings_for(study=study)
    rules = {name: getattr(settings, name) for name in RULES}
    rules["position_alpha"] = f"{settings.position_alpha:.3f}"
    return rules


def _quality(study: Study) -> dict:
    items = (
        study.test_cases.quality_items().select_related("expected").order_by("purpose", "position")
    )
    return {
        "frozen": study.is_frozen,
        "rules": _rules(study),
        "items": [
            {
                "case": str(case.uuid),
                "case_id": case.case_id,
                "purpose": case.purpose,
                "prompt": case.prompt,
                "explanation": getattr(getattr(case, "expected", None), "explanation", ""),
            }
            for case in items
        ],
        "standing_out": quality_ids_standing_out(study=study),
    }


def _study(request, slug) -> Study:
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    return study


@extend_schema(
    methods=["GET"],
    operation_id="studies_quality_list",
    summary="The quality rules, and the gold items and attention checks",
    responses={200: QualitySerializer, **ERRORS},
)
@extend_schema(
    methods=["PATCH"],
    summary="Change the quality rules (fields left out stay; until the study opens)",
    request=RulesInSerializer,
    responses={200: QualitySerializer, **ERRORS},
)
@api_view(["GET", "PATCH"])
def study_quality(request, slug):
    study = _study(request, slug)
    if request.method == "PATCH":
        body = body_object(request, fields=RULES, what="a quality rule")
        data = scalar_fields(body, RULES)
        if "gold_feedback" in data and not isinstance(data["gold_feedback"], bool):
            raise exceptions.ValidationError(["gold_feedback: send true or false."])
        form = QualitySettingsForm({**_rules(study), **data})
        if not form.is_valid():
            raise form_errors(form)
        quality.quality_settings_update(study=study, values=form.cleaned_data, actor=request.user)
    return Response(_quality(study))


@extend_schema(
    summary="Import a gold file: expected answers by system name (all or nothing)",
    description=(
        "The quality page's gold file (.csv or .xlsx): columns `case_id`, `response` (the "
        "system's name), `dimension`, `expected`, and optionally `explanation` and "
        "`purpose` (gold or attention). Every problem is listed and nothing is kept."
    ),
    request={
        "multipart/form-data": inline_serializer("GoldFile", {"file": serializers.FileField()})
    },
    responses={
        200: inline_serializer("GoldImported", {"cases": serializers.IntegerField()}),
        **ERRORS,
    },
)
@api_view(["POST"])
def study_gold_file(request, slug):
    study = _study(request, slug)
    body_object(request, fields=("file",))
    form = GoldFileForm(request.POST, request.FILES)
    if not form.is_valid():
        raise form_errors(form)
    upload = form.cleaned_data["file"]
    count = quality.expected_answers_import(
        study=study, filename=upload.name, data=upload.read(), actor=request.user
    )
    return Response({"cases": count})


@extend_schema(
    summary="Add an attention check: every response the instructed text",
    description=(
        "As on the quality page: a new test case `case_id` with the `prompt`, and as each "
        "response of the sample's systems the `text` (left out or empty: the template's "
        "instruction); every dimension's expected answer is what the text asks for."
    ),
    request=inline_serializer(
        "AttentionCheckIn",
        {
            "case_id": serializers.CharField(max_length=50),
            "prompt": serializers.CharField(),
            "text": serializers.CharField(required=False, allow_blank=True),
        },
    ),
    responses={201: QualityItemSerializer, **ERRORS},
)
@api_view(["POST"])
def study_attention_checks(request, slug):
    study = _study(request, slug)
    fields = ("case_id", "prompt", "text")
    data = scalar_fields(body_object(request, fields=fields), fields)
    form = AttentionForm({name: "" if v is None else v for name, v in data.items()})
    if not form.is_valid():
        raise form_errors(form)
    test_case = quality.attention_check_create(study=study, actor=request.user, **form.cleaned_data)
    return Response(_item(test_case), status=status.HTTP_201_CREATED)


def _item(test_case: TestCase) -> dict:
    test_case = TestCase.objects.select_related("study", "expected").get(pk=test_case.pk)
    return {
        "case": str(test_case.uuid),
        "case_id": test_case.case_id,
        "purpose": test_case.purpose,
        "explanation": getattr(getattr(test_case, "expected", None), "explanation", ""),
        "frozen": test_case.study.is_frozen,
        "expected": [
            {
                "response": row["response"],
                "dimension": row["dimension"],
                "expected": row["text"],
                "name": row["name"],
                "help": row["help"],
            }
            for row in quality.expected_rows(test_case=test_case)
        ],
        # By system, in the systems' order, as the page lists them (never by label).
        "responses": [
            {"system": system, "text": text}
            for system, text in sorted(
                test_case.labels.values_list("response__system__name", "response__text")
            )
        ],
    }


EXPECTED_FIELDS = ("response", "dimension", "expected")


def _cells(body: dict) -> list[quality.ExpectedCell]:
    cells = body.get("expected")
    if not isinstance(cells, list) or len(cells) > MAX_CELLS:
        raise exceptions.ValidationError(
            [
                f'expected: send a list of at most {MAX_CELLS} {{"response", "dimension", '
                '"expected"}.'
            ]
        )
    problems, kept = [], []
    for number, cell in enumerate(cells):
        values = cell if isinstance(cell, dict) else {}
        texts = [values.get(name, "") for name in EXPECTED_FIELDS]
        if not isinstance(cell, dict) or not all(isinstance(t, str) for t in texts):
            problems.append(f"expected[{number}]: give response, dimension and expected as texts.")
        elif any(len(t) > quality.MAX_EXPECTED_FIELD for t in texts):
            problems.append(
                f"expected[{number}]: keep each text under {quality.MAX_EXPECTED_FIELD} characters."
            )
        else:
            kept.append(quality.ExpectedCell(*texts))
    if problems:
        raise exceptions.ValidationError(problems[:50])
    return kept


@extend_schema(
    methods=["GET"],
    summary="A test case's purpose and expected answers, by system",
    responses={200: QualityItemSerializer, **ERRORS},
)
@extend_schema(
    methods=["PUT"],
    summary="Make a test case a gold item or attention check with these expected answers",
    description=(
        "All or nothing, until the study opens: `purpose`, `explanation` and the `expected` "
        "answers, each by the response's system name and the dimension (cells left out or "
        "empty have none). The answers replace the case's."
    ),
    request=QualityItemInSerializer,
    responses={200: QualityItemSerializer, **ERRORS},
)
@extend_schema(
    methods=["DELETE"],
    summary="Return a gold item or attention check to the sample (its answers removed)",
    responses={200: QualityItemSerializer, **ERRORS},
)
@api_view(["GET", "PUT", "DELETE"])
def study_quality_item(request, slug, case_uuid):
    study = _study(request, slug)
    test_case = get_object_or_404(
        TestCase.objects.select_related("study"), study=study, uuid=case_uuid
    )
    if request.method == "PUT":
        body = body_object(request, fields=("purpose", "explanation", "expected"))
        row_fields_refuse(
            body.get("expected"), EXPECTED_FIELDS, where="expected", what="a field of an answer"
        )
        purpose, explanation = body.get("purpose"), body.get("explanation", "")
        if purpose not in PURPOSES:
            raise exceptions.ValidationError([f"purpose: use {' or '.join(PURPOSES)}."])
        if not isinstance(explanation, str):
            raise exceptions.ValidationError(["explanation: send a text."])
        quality.expected_answers_set(
            test_case=test_case,
            purpose=purpose,
            cells=_cells(body),
            explanation=explanation,
            actor=request.user,
        )
    elif request.method == "DELETE":
        quality.expected_answers_set(
            test_case=test_case,
            purpose=TestCase.Purpose.SAMPLE,
            cells=[],
            explanation="",
            actor=request.user,
        )
    return Response(_item(test_case))


urlpatterns = [
    path("studies/<slug:slug>/quality/", study_quality, name="quality"),
    path("studies/<slug:slug>/quality/gold-file/", study_gold_file, name="quality_gold_file"),
    path(
        "studies/<slug:slug>/quality/attention-checks/",
        study_attention_checks,
        name="quality_attention_checks",
    ),
    path("studies/<slug:slug>/quality/<uuid:case_uuid>/", study_quality_item, name="quality_item"),
]
