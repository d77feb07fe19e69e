"""The HTTP API's preparation of raters, as the coordinators' onboarding pages: the
onboarding settings (practice, pass mark, attempts, the calibration call's requirement),
and the training and qualification items with their answer keys.

The same access helpers (the study's coordinators), forms (``OnboardingSettingsForm``,
``TrainingItemForm``) and services (``annotation.services.training``) as the pages. A
training item's responses are written by the coordinator (A, B, C): no system is named.
"""

from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import ErrorResponseSerializer, body_object, form_errors, scalar_fields
from studies import access
from studies.models import Study

from . import qualification, selectors
from .access import get_training_item_for_user
from .forms import OnboardingSettingsForm, TrainingItemForm
from .models import OnboardingSettings, TrainingItem
from .services import training

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}
SETTINGS = list(OnboardingSettingsForm.Meta.fields)
# The page's form has three response fields.
MAX_ITEM_RESPONSES = 3
ITEM_FIELDS = ["title", "prompt", "responses", "explanation"]


def _settings_fields(*, required: bool) -> dict:
    return {
        "practice_enabled": serializers.BooleanField(required=required),
        "practice_case": serializers.CharField(
            allow_null=True,
            required=required,
            help_text="the practice case's id; null: the study's first test case",
        ),
        "pass_percent": serializers.IntegerField(min_value=0, max_value=100, required=required),
        "tolerance": serializers.IntegerField(min_value=0, required=required),
        "max_attempts": serializers.IntegerField(min_value=1, required=required),
        "calibration_call_required": serializers.BooleanField(required=required),
        "withdrawal_data": serializers.ChoiceField(
            choices=OnboardingSettings.WithdrawalData.values, required=required
        ),
    }


SettingsInSerializer = inline_serializer("OnboardingSettingsIn", _settings_fields(required=False))
SettingsSerializer = inline_serializer(
    "OnboardingSettings",
    {
        **_settings_fields(required=True),
        "pass_rule": serializers.CharField(help_text="how a qualification attempt is scored"),
        "raters": inline_serializer(
            "OnboardingRater",
            {
                "pseudonym": serializers.CharField(),
                "status": serializers.CharField(),
                "consented_at": serializers.DateTimeField(allow_null=True),
                "training_done": serializers.IntegerField(),
                "attempts": serializers.IntegerField(),
                "passed": serializers.BooleanField(),
                "withdrawn": serializers.BooleanField(),
            },
            many=True,
        ),
    },
)
ITEM_OUT: dict[str, serializers.Field] = {
    "id": serializers.UUIDField(),
    "kind": serializers.ChoiceField(choices=TrainingItem.Kind.choices),
    "position": serializers.IntegerField(),
    "title": serializers.CharField(),
    "prompt": serializers.CharField(),
    "responses": serializers.ListField(child=serializers.CharField()),
    "explanation": serializers.CharField(allow_blank=True),
    "key": serializers.DictField(
        help_text="the answer key as its rubric kinds scored it ({} until entered: "
        "raters see the item once it has one)"
    ),
}
ItemSerializer = inline_serializer("TrainingItem", ITEM_OUT)
ItemsSerializer = inline_serializer(
    "TrainingItems", {"items": inline_serializer("TrainingItem", ITEM_OUT, many=True)}
)


def _item_in_fields(*, required: bool) -> dict:
    return {
        "title": serializers.CharField(max_length=200, required=required),
        "prompt": serializers.CharField(required=required),
        "responses": serializers.ListField(
            child=serializers.CharField(),
            min_length=2,
            max_length=MAX_ITEM_RESPONSES,
            required=required,
            help_text="Response A, B and optionally C (as many as the study's cases have)",
        ),
        "explanation": serializers.CharField(
            required=False, allow_blank=True, help_text="worked examples only"
        ),
    }


ItemCreateSerializer = inline_serializer(
    "TrainingItemIn",
    {
        "kind": serializers.ChoiceField(choices=TrainingItem.Kind.choices),
        **_item_in_fields(required=True),
    },
)
ItemChangeSerializer = inline_serializer("TrainingItemChange", _item_in_fields(required=False))
KeyInSerializer = inline_serializer(
    "TrainingItemKey",
    {
        "responses": serializers.DictField(
            help_text="{key label: {dimension key: answer}}, as the rating screen sends them"
        ),
        "case": serializers.DictField(required=False, help_text="{dimension key: answer}"),
    },
)


def _study(request, slug) -> Study:
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    return study


def _settings_out(study: Study) -> dict:
    settings = selectors.onboarding_settings(study=study)
    out = {name: getattr(settings, name) for name in SETTINGS if name != "practice_case"}
    out["practice_case"] = settings.practice_case.case_id if settings.practice_case else None
    out["pass_rule"] = qualification.RULE
    out["raters"] = [
        {
            "pseudonym": row.pseudonym,
            "status": row.status,
            "consented_at": row.consent.agreed_at if row.consent else None,
            "training_done": row.training_done,
            "attempts": len(row.attempts),
            "passed": any(attempt.passed for attempt in row.attempts),
            "withdrawn": row.withdrawal is not None,
        }
        for row in selectors.onboarding_overview(study=study)
    ]
    return out


@extend_schema(
    methods=["GET"],
    summary="The onboarding settings, and each rater's progress through them (by pseudonym)",
    responses={200: SettingsSerializer, **ERRORS},
)
@extend_schema(
    methods=["PATCH"],
    summary="Change the onboarding settings (fields left out stay)",
    request=SettingsInSerializer,
    responses={200: SettingsSerializer, **ERRORS},
)
@api_view(["GET", "PATCH"])
def onboarding_settings(request, slug):
    study = _study(request, slug)
    if request.method == "PATCH":
        body = body_object(request, fields=SETTINGS, what="a setting")
        data = scalar_fields(body, SETTINGS)
        for name in ("practice_enabled", "calibration_call_required"):
            if name in data and not isinstance(data[name], bool):
                raise exceptions.ValidationError([f"{name}: send true or false."])
        settings = selectors.onboarding_settings(study=study)
        current = {name: getattr(settings, name) for name in SETTINGS}
        current["practice_case"] = settings.practice_case_id
        if "practice_case" in data:
            data["practice_case"] = _practice_case_pk(study, data["practice_case"])
        values = {**current, **data}
        form = OnboardingSettingsForm(
            {name: "" if value is None else value for name, value in values.items()},
            instance=settings,
            study=study,
        )
        if not form.is_valid():
            raise form_errors(form)
        training.onboarding_settings_save(study=study, **form.cleaned_data)
    return Response(_settings_out(study))


def _practice_case_pk(study: Study, case_id) -> int | None:
    """The form's choice (a primary key) for the case the body names by its id."""
    if case_id is None or case_id == "":
        return None
    found = study.test_cases.filter(case_id=str(case_id)[:50]).values_list("pk", flat=True)
    if not found:
        raise exceptions.ValidationError(["practice_case: no test case of that id in the study."])
    return found[0]


def _item_out(item: TrainingItem) -> dict:
    return {
        "id": str(item.uuid),
        "kind": item.kind,
        "position": item.position,
        "title": item.title,
        "prompt": item.prompt,
        "responses": list(item.responses),
        "explanation": item.explanation,
        "key": item.key,
    }


def _item_form(data: dict, *, kind: str, initial: dict) -> TrainingItemForm:
    """The page's form, fed what its fields would send (``responses`` as A, B, C)."""
    values = {name: initial.get(name, "") for name in ("title", "prompt", "explanation")}
    values.update({f"response_{x}": initial.get(f"response_{x}", "") for x in "abc"})
    for name in ("title", "prompt", "explanation"):
        if name in data:
            if not isinstance(data[name], str):
                raise exceptions.ValidationError([f"{name}: send a text."])
            values[name] = data[name]
    if "responses" in data:
        texts = data["responses"]
        if (
            not isinstance(texts, list)
            or not 2 <= len(texts) <= MAX_ITEM_RESPONSES
            or not all(isinstance(text, str) for text in texts)
        ):
            raise exceptions.ValidationError(
                [f"responses: send a list of 2 to {MAX_ITEM_RESPONSES} texts (A, B, C)."]
            )
        for letter, text in zip("abc", [*texts, "", ""], strict=False):
            values[f"response_{letter}"] = text
    form = TrainingItemForm(values, kind=kind)
    if not form.is_valid():
        raise form_errors(form)
    return form


@extend_schema(
    methods=["GET"],
    operation_id="studies_training_items_list",
    summary="The training and qualification items, with their answer keys",
    responses={200: ItemsSerializer, **ERRORS},
)
@extend_schema(
    methods=["POST"],
    summary="Add a training example or a qualification item (its answer key next)",
    description=(
        "As on the New item page: `kind` (`training` or `qualification`), `title`, `prompt`, "
        "`responses` (as many as the study's test cases have, 2 or 3) and, for a worked "
        "example, the `explanation` raters read after answering. Raters see it once its "
        "answer key is entered (`training-items/{id}/key/`)."
    ),
    request=ItemCreateSerializer,
    responses={201: ItemSerializer, **ERRORS},
)
@api_view(["GET", "POST"])
def training_items(request, slug):
    study = _study(request, slug)
    if request.method == "POST":
        body = body_object(request, fields=("kind", *ITEM_FIELDS))
        kind = body.get("kind")
        if kind not in TrainingItem.Kind.values:
            raise exceptions.ValidationError(
                [f"kind: use {' or '.join(TrainingItem.Kind.values)}."]
            )
        form = _item_form(body, kind=kind, initial={})
        item = form.save_item(study=study, item=None, kind=kind)
        return Response(_item_out(item), status=status.HTTP_201_CREATED)
    items = study.training_items.order_by("kind", "position", "created_at")
    return Response({"items": [_item_out(item) for item in items]})


@extend_schema(
    methods=["GET"],
    summary="A training or qualification item",
    responses={200: ItemSerializer, **ERRORS},
)
@extend_schema(
    methods=["PATCH"],
    summary="Change an item (fields left out stay; a new number of responses clears its key)",
    request=ItemChangeSerializer,
    responses={200: ItemSerializer, **ERRORS},
)
@extend_schema(methods=["DELETE"], summary="Delete an item", responses={204: None, **ERRORS})
@api_view(["GET", "PATCH", "DELETE"])
def training_item(request, slug, item_uuid):
    item, study, _ = get_training_item_for_user(
        request.user, slug, item_uuid, role=access.COORDINATOR
    )
    if request.method == "PATCH":
        body = body_object(request, fields=ITEM_FIELDS)
        form = _item_form(body, kind=item.kind, initial=TrainingItemForm.initial_for(item))
        item = form.save_item(study=study, item=item, kind=item.kind)
    elif request.method == "DELETE":
        training.training_item_delete(item=item)
        return Response(status=status.HTTP_204_NO_CONTENT)
    return Response(_item_out(item))


@extend_schema(
    summary="Enter an item's answer key, as the rating screen sends answers",
    description=(
        "`responses` by the item's labels (A, B, C: the order its responses were given) "
        "and `case`, each answer cleaned and scored by its rubric kind; a problem names "
        "the response and the dimension."
    ),
    request=KeyInSerializer,
    responses={200: ItemSerializer, **ERRORS},
)
@api_view(["PUT"])
def training_item_key(request, slug, item_uuid):
    item, _, _ = get_training_item_for_user(request.user, slug, item_uuid, role=access.COORDINATOR)
    body = body_object(request, fields=("responses", "case"))
    for name in ("responses", "case"):
        if name in body and not isinstance(body[name], dict):
            raise exceptions.ValidationError([f"{name}: send an object."])
    payload = {"responses": body.get("responses") or {}, "case": body.get("case") or {}}
    item = training.training_item_key_save(item=item, payload=payload)
    return Response(_item_out(item))


urlpatterns = [
    path(
        "studies/<slug:slug>/onboarding-settings/",
        onboarding_settings,
        name="onboarding_settings",
    ),
    path("studies/<slug:slug>/training-items/", training_items, name="training_items"),
    path(
        "studies/<slug:slug>/training-items/<uuid:item_uuid>/",
        training_item,
        name="training_item",
    ),
    path(
        "studies/<slug:slug>/training-items/<uuid:item_uuid>/key/",
        training_item_key,
        name="training_item_key",
    ),
]
