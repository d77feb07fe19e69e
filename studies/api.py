"""The HTTP API's study set-up: studies, their settings, rubric, test cases and status.

Each endpoint looks the study up with ``studies.access`` (an outsider gets 404, a rater
403), validates with the pages' own forms and writes through ``studies.services``, so an
API request can do exactly what the same person could do on the pages. Shared plumbing
(errors, pages, bodies, throttles) is in ``core/api.py``; the token sign-in in
``studies/api_auth.py``.
"""

import json

from django.core.exceptions import PermissionDenied
from django.forms.models import model_to_dict
from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import (
    ErrorResponseSerializer,
    Pagination,
    body_object,
    error_body,
    form_errors,
    paginated,
    row_fields_refuse,
    scalar_fields,
)

from . import access, selectors, services
from .forms import StudyCreateForm, StudyForm
from .importing.cases import JSONL_FIELDS, MAX_FILE_BYTES, file_type_for, size_problem
from .models import AdjudicationRule, ProfileQuestion, Study, TestCase
from .presets import PRESETS
from .profile_questions import MAX_QUESTIONS, question_as_dict
from .rubric import KINDS
from .rubric.definition import FIELDS as DEFINITION_FIELDS
from .rubric.definition import definition_of, preset_definition
from .services.adjudication_rules import adjudication_rules_set
from .services.profile_questions import profile_questions_set

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}


class StudySerializer(serializers.ModelSerializer):
    lead = serializers.CharField(source="lead.get_username", read_only=True)
    transitions = serializers.SerializerMethodField()
    rubric = serializers.CharField(source="rubric.name", read_only=True)

    class Meta:
        model = Study
        fields = [
            "slug", "name", "description", "status", "lead", "rubric", "transitions",
            *[f for f in services.SETTINGS_FIELDS if f not in ("name", "description")],
            "protocol_fingerprint", "created_at", "opened_at", "closed_at", "unblinded_at",
        ]  # fmt: skip
        read_only_fields = fields

    def get_transitions(self, study) -> list[str]:
        return [name for name, _ in services.transitions_available(study=study)]


class StudyCreateSerializer(serializers.ModelSerializer):
    """For the schema: validation is the creation form's (``StudyCreateForm``)."""

    rubric_preset = serializers.CharField(
        default="reference",
        help_text="What to start from, as on the New study page: a preset or protocol "
        "(" + ", ".join(PRESETS) + "), or copy:<slug> of a study you coordinate.",
    )
    blinding_seed = serializers.IntegerField(
        required=False, min_value=0, help_text="Empty: from what you start from."
    )

    class Meta:
        model = Study
        fields = ["slug", "name", "description", "rubric_preset", "blinding_seed"]


class StudySettingsSerializer(serializers.ModelSerializer):
    """For the schema: validation is the settings form's (``StudyForm``)."""

    class Meta:
        model = Study
        fields = list(services.SETTINGS_FIELDS)
        extra_kwargs = {name: {"required": False} for name in services.SETTINGS_FIELDS}


class DimensionSerializer(serializers.Serializer):
    key = serializers.CharField()
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=sorted(KINDS))
    level = serializers.CharField(required=False)
    # DRF's metaclass takes declared fields off the class, so this name does not shadow
    # ``Field.required`` at run time; the type checker sees only the class body.
    required = serializers.BooleanField(  # type: ignore[assignment]
        required=False, default=True, help_text="False: a rating may leave it unanswered."
    )
    config = serializers.DictField()


class RubricSerializer(serializers.Serializer):
    """A rubric definition (docs/rubric-format.md); checked by ``studies.rubric.definition``."""

    name = serializers.CharField()
    description = serializers.CharField(required=False)
    dimensions = DimensionSerializer(many=True)


class TestCaseSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="case_id")

    class Meta:
        model = TestCase
        fields = ["id", "position", "prompt", "context", "stratum", "content_warning", "purpose"]


CasesInSerializer = inline_serializer(
    "CasesImport",
    {
        "cases": serializers.ListField(
            child=inline_serializer(
                "CaseIn",
                {
                    "id": serializers.CharField(),
                    "prompt": serializers.CharField(),
                    "context": serializers.CharField(required=False, allow_blank=True),
                    "stratum": serializers.CharField(required=False, allow_blank=True),
                    "content_warning": serializers.CharField(required=False, allow_blank=True),
                    "responses": serializers.DictField(child=serializers.CharField()),
                },
            ),
            help_text='Objects as lines of a JSONL file: {"id", "prompt", "context", '
            '"stratum", "content_warning", "responses": {system: text}}; "context", '
            '"stratum" and "content_warning" (read by the rater before the responses) are '
            "optional.",
        ),
    },
)
CasesOutSerializer = inline_serializer(
    "CasesImported",
    {
        "imported": serializers.IntegerField(),
        "systems": serializers.ListField(child=serializers.CharField()),
        "strata": serializers.DictField(child=serializers.IntegerField()),
        "content_warnings": serializers.IntegerField(
            help_text="Cases imported with a content warning of their own."
        ),
        "identity_mentions": inline_serializer(
            "IdentityMentions",
            {
                "count": serializers.IntegerField(),
                "listed": inline_serializer(
                    "IdentityMention",
                    {
                        "case_id": serializers.CharField(),
                        "system": serializers.CharField(),
                        "reason": serializers.CharField(),
                        "phrase": serializers.CharField(),
                        "snippet": serializers.CharField(),
                    },
                    many=True,
                ),
            },
        ),
    },
)
StatusInSerializer = inline_serializer(
    "StatusChange",
    {
        "action": serializers.ChoiceField(choices=list(services.TRANSITIONS)),
        "acknowledge_warnings": serializers.BooleanField(
            default=False, help_text="Open although the blinding check found passages."
        ),
        "confirm": serializers.BooleanField(
            default=False,
            help_text="Close although work is left undone (the 409 lists it).",
        ),
    },
)


def _study(request, slug) -> Study:
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    return study


@extend_schema(
    methods=["GET"],
    summary="The studies you coordinate",
    operation_id="studies_list",  # the id it had before its pages were described
    responses={200: paginated("PaginatedStudyList", StudySerializer), **ERRORS},
)
@extend_schema(
    methods=["POST"],
    summary="Create a draft study that you lead",
    request=StudyCreateSerializer,
    responses={201: StudySerializer, **ERRORS},
)
@api_view(["GET", "POST"])
def study_collection(request):
    if request.method == "GET":
        paginator = Pagination()
        page: list | None = paginator.paginate_queryset(
            selectors.coordinated_studies(user=request.user).select_related("lead", "rubric"),
            request,
        )
        return paginator.get_paginated_response(StudySerializer(page, many=True).data)
    if not access.can_create_studies(request.user):
        raise PermissionDenied
    fields = StudyCreateSerializer.Meta.fields
    data = scalar_fields(body_object(request, fields=fields), fields)
    data.setdefault("rubric_preset", "reference")
    # As on the New study page: only the studies this person coordinates may be copied.
    copyable = selectors.coordinated_studies(user=request.user).only("slug", "name")
    form = StudyCreateForm(data, copyable=copyable)
    if not form.is_valid():
        raise form_errors(form)
    study = services.study_create(**form.creation(), lead=request.user, actor=request.user)
    return Response(StudySerializer(study).data, status=status.HTTP_201_CREATED)


@extend_schema(methods=["GET"], summary="A study", responses={200: StudySerializer, **ERRORS})
@extend_schema(
    methods=["PATCH"],
    summary="Change a study's settings (protocol settings only until it opens)",
    request=StudySettingsSerializer,
    responses={200: StudySerializer, **ERRORS},
)
@api_view(["GET", "PATCH"])
def study_detail(request, slug):
    study = _study(request, slug)
    if request.method == "PATCH":
        body = body_object(request, fields=services.SETTINGS_FIELDS, what="a setting")
        data = scalar_fields(body, services.SETTINGS_FIELDS)
        initial = model_to_dict(study, fields=StudyForm.Meta.fields)
        # Fields left out keep their value; the service refuses frozen ones with its message.
        form = StudyForm({**_form_values(initial), **data}, initial=initial)
        if not form.is_valid():
            raise form_errors(form)
        study = services.study_update(study=study, actor=request.user, changes=form.changes())
    return Response(StudySerializer(study).data)


def _form_values(initial: dict) -> dict:
    return {name: "" if value is None else value for name, value in initial.items()}


@extend_schema(
    methods=["GET"],
    summary="The study's rubric, as a definition",
    responses={200: RubricSerializer, **ERRORS},
)
@extend_schema(
    methods=["PUT"],
    summary="Replace the rubric with a definition (all or nothing; until the study opens)",
    request=RubricSerializer,
    responses={200: RubricSerializer, **ERRORS},
)
@api_view(["GET", "PUT"])
def study_rubric(request, slug):
    study = _study(request, slug)
    if request.method == "PUT":
        # Free-form below its top level: the definition's reader names what is wrong inside.
        definition = body_object(request, fields=sorted(DEFINITION_FIELDS), what="part of a rubric")
        study = services.rubric_replace(study=study, actor=request.user, definition=definition)
    return Response(definition_of(study.rubric))


@extend_schema(
    summary="The preset rubrics, as definitions",
    responses={200: inline_serializer("Presets", {"presets": serializers.DictField()}), **ERRORS},
)
@api_view(["GET"])
def rubric_presets(request):
    return Response({"presets": {name: preset_definition(name) for name in PRESETS}})


@extend_schema(
    methods=["GET"],
    summary="The study's test cases",
    operation_id="studies_cases_list",  # the id it had before its pages were described
    responses={200: paginated("PaginatedTestCaseList", TestCaseSerializer), **ERRORS},
)
@extend_schema(
    methods=["POST"],
    summary="Import test cases (all or nothing): a JSON body or a .csv/.jsonl/.xlsx file",
    request={
        "application/json": CasesInSerializer,
        "multipart/form-data": inline_serializer("CasesFile", {"file": serializers.FileField()}),
    },
    responses={201: CasesOutSerializer, **ERRORS},
)
@api_view(["GET", "POST"])
def study_cases(request, slug):
    study = _study(request, slug)
    if request.method == "GET":
        paginator = Pagination()
        page = paginator.paginate_queryset(study.test_cases.order_by("position"), request)
        return paginator.get_paginated_response(TestCaseSerializer(page, many=True).data)
    # Cases as JSON, or a file as a form's "file".
    body = body_object(request, fields=("cases", "file"))
    filename, data = _cases_body(request, body)
    start = selectors.study_next_case_position(study=study)
    parsed = services.test_cases_import(
        study=study, actor=request.user, filename=filename, data=data
    )
    report = selectors.study_identity_report(study=study, from_position=start)
    return Response(
        {
            "imported": parsed.case_count,
            "systems": parsed.systems,
            "strata": dict(parsed.strata),
            "content_warnings": parsed.warned_cases,
            # Every passage that may say which system or model wrote a response (at most
            # MAX_LISTED listed, with the total), by case and system, never by label.
            "identity_mentions": {
                "count": report["count"],
                "listed": [
                    {
                        "case_id": m.case_id,
                        "system": m.system,
                        "reason": m.reason,
                        "phrase": m.matched,
                        "snippet": m.snippet,
                    }
                    for m in report["listed"]
                ],
            },
        },
        status=status.HTTP_201_CREATED,
    )


def _cases_body(request, body: dict) -> tuple[str, bytes]:
    """The file to import: an uploaded one, or a JSON body's cases written as JSONL."""
    upload = request.FILES.get("file")
    if upload is not None:
        if file_type_for(upload.name) is None:
            raise exceptions.ValidationError(["file: use a .csv, .jsonl or .xlsx file."])
        too_large = size_problem(upload.size)
        if too_large:
            raise exceptions.ValidationError([str(too_large)])
        return upload.name, upload.read(MAX_FILE_BYTES + 1)
    cases = body.get("cases")
    if not isinstance(cases, list) or not cases:
        raise exceptions.ValidationError(
            ['cases: send a non-empty list of {"id", "prompt", "responses": {...}} objects, '
             'or upload a file as "file".']
        )  # fmt: skip
    # Before the study's state is asked (the import would say so first).
    row_fields_refuse(cases, JSONL_FIELDS, where="cases", what="a field of a case")
    # Line n of this JSONL is case n of the list, so problems name the case by its number.
    text = "\n".join(json.dumps(case, ensure_ascii=False) for case in cases)
    return "cases.jsonl", text.encode()


@extend_schema(
    summary="Change the study's status: pilot, open, close or reopen",
    request=StatusInSerializer,
    responses={200: StudySerializer, **ERRORS},
)
@api_view(["POST"])
def study_status(request, slug):
    study = _study(request, slug)
    body = body_object(request, fields=("action", "acknowledge_warnings", "confirm"))
    action = body.get("action")
    transition = services.TRANSITIONS.get(action) if isinstance(action, str) else None
    if transition is None:
        raise exceptions.ValidationError([f"action: use one of {', '.join(services.TRANSITIONS)}."])
    kwargs = {"study": study, "actor": request.user}
    if action == "open":
        kwargs["acknowledge_warnings"] = body.get("acknowledge_warnings") is True
    unfinished = None
    if action == "close":
        # What closing leaves undone, as the Close page shows it: refused (409) with it
        # unless "confirm": true, and answered with it once closed.
        kwargs["confirm"] = body.get("confirm") is True
        unfinished = selectors.study_unfinished_work(study=study)
    try:
        study = transition.service(**kwargs)
    except services.CloseNotConfirmedError as refusal:
        body = error_body(status=409, code="confirm", message=str(refusal), problems=[])
        body["unfinished"] = refusal.unfinished.as_dict()
        return Response(body, status=409)
    data = StudySerializer(study).data
    if unfinished is not None:
        data["unfinished"] = unfinished.as_dict()
    return Response(data)


ADJUDICATION_RULE_FIELDS: dict[str, serializers.Field] = {
    "dimension": serializers.CharField(help_text="the dimension's key"),
    "trigger": serializers.ChoiceField(choices=AdjudicationRule.Trigger.values),
    "values": serializers.ListField(
        child=serializers.JSONField(),
        required=False,
        help_text="trigger values: the kind's stored values that trigger (a category's "
        "code, a scale's value, a preference in key order)",
    ),
    "tolerance": serializers.IntegerField(
        required=False,
        min_value=0,
        help_text="trigger disagreement on a scale or points: the largest spread that still agrees",
    ),
}
ADJUDICATION_RULE_OUT_FIELDS: dict[str, serializers.Field] = {
    "dimension": serializers.CharField(),
    "trigger": serializers.ChoiceField(choices=AdjudicationRule.Trigger.values),
    "values": serializers.ListField(child=serializers.JSONField()),
    "tolerance": serializers.IntegerField(),
    "allowed_values": serializers.ListField(
        child=serializers.JSONField(), help_text="what a values rule may name"
    ),
    "tolerance_applies": serializers.BooleanField(),
    "switched_at": serializers.DateTimeField(
        allow_null=True, help_text="7.3's switch to every disagreement, once taken"
    ),
    "switched_reason": serializers.CharField(),
}
AdjudicationRulesSerializer = inline_serializer(
    "AdjudicationRules",
    {"rules": inline_serializer("AdjudicationRule", ADJUDICATION_RULE_FIELDS, many=True)},
)
AdjudicationRulesOutSerializer = inline_serializer(
    "AdjudicationRulesOut",
    {"rules": inline_serializer("AdjudicationRuleOut", ADJUDICATION_RULE_OUT_FIELDS, many=True)},
)


def _rules_out(study: Study) -> dict:
    return {
        "rules": [
            {
                "dimension": row["key"],
                "trigger": row["trigger"],
                "values": row["values"],
                "tolerance": row["tolerance"],
                "allowed_values": [choice["value"] for choice in row["choices"]],
                "tolerance_applies": row["spread"],
                "switched_at": row["switched_at"].isoformat() if row["switched_at"] else None,
                "switched_reason": row["switched_reason"],
            }
            for row in selectors.adjudication_rules_table(study=study)
        ]
    }


@extend_schema(
    methods=["GET"],
    summary="The study's adjudication rules, one per dimension of the rubric",
    responses={200: AdjudicationRulesOutSerializer, **ERRORS},
)
@extend_schema(
    methods=["PUT"],
    summary="Replace the adjudication rules (the lead; all or nothing; until the study opens)",
    description="A dimension left out is never adjudicated automatically.",
    request=AdjudicationRulesSerializer,
    responses={200: AdjudicationRulesOutSerializer, **ERRORS},
)
@api_view(["GET", "PUT"])
def study_adjudication_rules(request, slug):
    study = _study(request, slug)
    if request.method == "PUT":
        if request.user.pk != study.lead_id:
            raise PermissionDenied
        rules = body_object(request, fields=("rules",)).get("rules")
        row_fields_refuse(
            rules, ("dimension", "trigger", "values", "tolerance"), where="rules",
            what="a field of a rule",
        )  # fmt: skip
        if not isinstance(rules, list):
            raise exceptions.ValidationError(
                ['rules: send a list of {"dimension", "trigger", "values", "tolerance"}.']
            )
        adjudication_rules_set(study=study, actor=request.user, rules=rules)
    return Response(_rules_out(study))


PROFILE_QUESTION_FIELDS: dict[str, serializers.Field] = {
    "key": serializers.SlugField(
        required=False, max_length=50, help_text="empty: made from the label"
    ),
    "label": serializers.CharField(max_length=200),
    "kind": serializers.ChoiceField(choices=ProfileQuestion.Kind.values),
    "choices": serializers.ListField(
        child=serializers.CharField(max_length=100),
        required=False,
        max_length=30,
        help_text="kind choice: 2 to 30 distinct answers",
    ),
    "min": serializers.IntegerField(required=False, help_text="kind number: the smallest answer"),
    "max": serializers.IntegerField(required=False, help_text="kind number: the largest answer"),
}
ProfileQuestionsSerializer = inline_serializer(
    "ProfileQuestions",
    {
        "questions": inline_serializer(
            "ProfileQuestion", PROFILE_QUESTION_FIELDS, many=True, max_length=MAX_QUESTIONS
        )
    },
)


def _profile_questions_out(study: Study) -> dict:
    return {"questions": [question_as_dict(q) for q in selectors.profile_questions_of(study=study)]}


@extend_schema(
    methods=["GET"],
    summary="The study's rater profile questions (never a rater's answers)",
    responses={200: ProfileQuestionsSerializer, **ERRORS},
)
@extend_schema(
    methods=["PUT"],
    summary="Replace the rater profile questions (all or nothing; until the study opens)",
    description="An empty list removes them all; the list's order is the order raters see.",
    request=ProfileQuestionsSerializer,
    responses={200: ProfileQuestionsSerializer, **ERRORS},
)
@api_view(["GET", "PUT"])
def study_profile_questions(request, slug):
    study = _study(request, slug)
    if request.method == "PUT":
        questions = body_object(request, fields=("questions",)).get("questions")
        if not isinstance(questions, list):
            raise exceptions.ValidationError(
                ['questions: send a list of {"key", "label", "kind", "choices", "min", "max"}.']
            )
        profile_questions_set(study=study, actor=request.user, questions=questions)
    return Response(_profile_questions_out(study))


urlpatterns = [
    path("studies/", study_collection, name="studies"),
    path("rubric-presets/", rubric_presets, name="rubric_presets"),
    path("studies/<slug:slug>/", study_detail, name="study"),
    path("studies/<slug:slug>/rubric/", study_rubric, name="rubric"),
    path("studies/<slug:slug>/cases/", study_cases, name="cases"),
    path("studies/<slug:slug>/status/", study_status, name="status"),
    path(
        "studies/<slug:slug>/adjudication-rules/",
        study_adjudication_rules,
        name="adjudication_rules",
    ),
    path(
        "studies/<slug:slug>/profile-questions/",
        study_profile_questions,
        name="profile_questions",
    ),
]
