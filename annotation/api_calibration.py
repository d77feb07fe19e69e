"""The HTTP API of the calibration call (protocol 4.2): the items to discuss, with who
attended which call, and the lead's record of a call.

The same selectors, form and service as the page (``annotation/views/calibration.py``), so
the same blinding: raters by pseudonym, responses under their key labels, and a pilot
case's texts without labels (in the texts' own order) until the study is unblinded.
"""

from typing import cast

from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import ErrorResponseSerializer, body_object, form_errors, scalar_fields
from studies import access
from studies.models import Study

from . import selectors
from .disagreement import MEASURE
from .forms import CalibrationCallForm, PseudonymChoiceField
from .selectors.calibration import CalibrationItem

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}
MAX_ATTENDEES = 500  # more names than a study has raters are refused before the form


class CalibrationAnswerSerializer(serializers.Serializer):
    rater = serializers.CharField(help_text="pseudonym")
    text = serializers.CharField(allow_blank=True)
    note = serializers.CharField(allow_blank=True)
    odd = serializers.BooleanField(help_text="differs from the most common answer")


# A field named "label" shadows Field.label in the stubs; the API's name is the contract.
class CalibrationResponseSerializer(serializers.Serializer):
    label = serializers.CharField(  # type: ignore[assignment]
        allow_null=True, help_text="the key label; null when not labelled"
    )
    text = serializers.CharField(allow_blank=True)


class CalibrationQuestionSerializer(serializers.Serializer):
    label = serializers.CharField(  # type: ignore[assignment]
        allow_blank=True, help_text="the response's key label; '' for the case"
    )
    dimension = serializers.CharField()
    name = serializers.CharField()
    key = serializers.CharField(allow_null=True, help_text="the answer key's answer")
    pairs = serializers.IntegerField()
    disagreeing = serializers.IntegerField()
    answers = CalibrationAnswerSerializer(many=True)


class CalibrationItemSerializer(serializers.Serializer):
    """A qualification item or pilot case to discuss (for the schema)."""

    title = serializers.CharField(help_text="the item's title, or the case id")
    prompt = serializers.CharField(allow_blank=True)
    labelled = serializers.BooleanField(
        help_text="false for a pilot case before unblinding: the responses carry no label"
    )
    responses = CalibrationResponseSerializer(many=True)
    has_key = serializers.BooleanField()
    percent = serializers.IntegerField(help_text="disagreement, 0 to 100")
    raters = serializers.ListField(child=serializers.CharField())
    questions = CalibrationQuestionSerializer(many=True)


class CalibrationCallRecordedSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    held_at = serializers.DateTimeField()
    attended = serializers.ListField(child=serializers.CharField(), help_text="pseudonyms")
    note = serializers.CharField(allow_blank=True)


class CalibrationAttendanceSerializer(serializers.Serializer):
    rater = serializers.CharField(help_text="pseudonym")
    status = serializers.CharField()
    qualification_passed = serializers.BooleanField()
    attended = serializers.ListField(child=serializers.DateTimeField())


CalibrationSerializer = inline_serializer(
    "CalibrationCall",
    {
        "measure": serializers.CharField(),
        "required": serializers.BooleanField(help_text="raters must attend before rating"),
        "qualification": CalibrationItemSerializer(many=True),
        "qualification_compared": serializers.IntegerField(),
        "pilot": CalibrationItemSerializer(many=True),
        "pilot_compared": serializers.IntegerField(),
        "attendance": CalibrationAttendanceSerializer(many=True),
        "calls": CalibrationCallRecordedSerializer(many=True),
    },
)


def _item(item: CalibrationItem) -> dict:
    disagreement = item.disagreement
    return {
        "title": item.title,
        "prompt": item.prompt,
        "labelled": item.labelled,
        "responses": [
            {"label": label if item.labelled else None, "text": text}
            for label, text in item.responses
        ],
        "has_key": item.has_key,
        "percent": disagreement.percent,
        "raters": list(disagreement.raters),
        "questions": [
            {
                "label": question.label,
                "dimension": question.dimension,
                "name": question.name,
                "key": question.key,
                "pairs": question.pairs,
                "disagreeing": question.disagreeing,
                "answers": [
                    {"rater": a.rater, "text": a.text, "note": a.note, "odd": a.odd}
                    for a in question.answers
                ],
            }
            for question in disagreement.questions
        ],
    }


def _call(call) -> dict:
    return {
        "id": call.uuid,
        "held_at": call.held_at,
        "attended": [row.rater.pseudonym for row in call.attendance.all()],
        "note": call.note,
    }


def _calibration(study: Study) -> dict:
    sheet = selectors.calibration_sheet(study=study)
    recorded = selectors.calibration_calls(study=study)
    return {
        "measure": MEASURE,
        "required": selectors.onboarding_settings(study=study).calibration_call_required,
        "qualification": [_item(item) for item in sheet.qualification],
        "qualification_compared": sheet.qualification_compared,
        "pilot": [_item(item) for item in sheet.pilot],
        "pilot_compared": sheet.pilot_compared,
        "attendance": [
            {
                "rater": row.pseudonym,
                "status": row.status,
                "qualification_passed": row.qualification_passed,
                "attended": row.attended,
            }
            for row in selectors.calibration_attendance(study=study, calls=recorded)
        ],
        "calls": [_call(call) for call in recorded],
    }


@extend_schema(
    summary="The calibration call: the items to discuss, attendance and the calls recorded",
    description=(
        "As on the calibration call page: the qualification items and pilot cases with the "
        "most disagreement (at most 15 each), each rater's answers by pseudonym, responses "
        "under their key labels. A pilot case's texts carry no label (`labelled` false, "
        "`label` null, in the texts' own order) until the study is unblinded."
    ),
    responses={200: CalibrationSerializer, **ERRORS},
)
@api_view(["GET"])
def calibration_call(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    return Response(_calibration(study))


@extend_schema(
    summary="Record a calibration call and who attended it (the study lead)",
    description=(
        "`held_at` (ISO 8601; without an offset, the server's time zone), `attended` (the "
        "raters' pseudonyms, at least one), `note` (optional). Checked by the page's form "
        "and recorded by its service: refused for a draft or closed study, or a date in "
        "the future. 201 with the call."
    ),
    request=inline_serializer(
        "CalibrationCallIn",
        {
            "held_at": serializers.DateTimeField(),
            "attended": serializers.ListField(child=serializers.CharField(max_length=40)),
            "note": serializers.CharField(required=False, max_length=5000),
        },
    ),
    responses={201: CalibrationCallRecordedSerializer, **ERRORS},
)
@api_view(["POST"])
def calibration_call_record(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.LEAD)
    data = body_object(request, fields=("held_at", "attended", "note"))
    fields = scalar_fields(data, ("held_at", "note"))
    attended = data.get("attended", [])
    if not isinstance(attended, list) or not all(isinstance(p, str) for p in attended):
        raise serializers.ValidationError(["attended: a list of the raters' pseudonyms."])
    if len(attended) > MAX_ATTENDEES:
        raise serializers.ValidationError([f"attended: at most {MAX_ATTENDEES} raters."])
    form = CalibrationCallForm(
        {**{k: "" if v is None else str(v) for k, v in fields.items()}, "attended": attended},
        raters=selectors.calibration_attendees_choices(study=study),
    )
    # The page's checkboxes send rows; a script names the raters by pseudonym.
    cast(PseudonymChoiceField, form.fields["attended"]).to_field_name = "pseudonym"
    if not form.is_valid():
        raise form_errors(form)
    call = form.record(study=study, actor=request.user)
    call = next(c for c in selectors.calibration_calls(study=study) if c.pk == call.pk)
    return Response(_call(call), status=status.HTTP_201_CREATED)


urlpatterns = [
    path("studies/<slug:slug>/calibration-call/", calibration_call, name="calibration_call"),
    path(
        "studies/<slug:slug>/calibration-call/calls/",
        calibration_call_record,
        name="calibration_call_record",
    ),
]
