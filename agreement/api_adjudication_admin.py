"""The HTTP API of the lead's adjudication actions on the agreement and quality-control
pages: send a case to adjudication by hand, and 7.3's switch of a dimension to every
disagreement. The same access rule (the study lead) and services as the pages' forms
(``agreement/views/adjudication_actions.py``)."""

from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.decorators import api_view
from rest_framework.response import Response

from agreement.services.adjudication_switch import adjudication_switch_for_missed_target
from annotation.services.adjudication_queue import adjudication_send
from core.api import ErrorResponseSerializer, body_object, scalar_fields
from studies import access
from studies.models import AdjudicationRule

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}
# As the pages' forms: longer than a service takes, so that it names the limit.
MAX_FIELD = 2100

SentSerializer = inline_serializer(
    "AdjudicationSent",
    {
        "adjudication": serializers.UUIDField(),
        "case_id": serializers.CharField(),
        "status": serializers.CharField(),
        "triggers": serializers.DictField(
            child=serializers.ListField(child=serializers.CharField())
        ),
        "reason": serializers.CharField(),
    },
)
SwitchSerializer = inline_serializer(
    "AdjudicationSwitched",
    {
        "dimension": serializers.CharField(),
        "trigger": serializers.ChoiceField(choices=AdjudicationRule.Trigger.values),
        "switched_at": serializers.DateTimeField(),
        "switched_reason": serializers.CharField(),
    },
)


def _texts(request, fields) -> dict[str, str]:
    given = scalar_fields(body_object(request, fields=fields), fields)
    return {name: "" if given.get(name) is None else str(given[name]) for name in fields}


@extend_schema(
    summary="Send a case to adjudication by hand, with a reason (the study lead)",
    description=(
        "`case_id` (a sample case with a submitted rating) and `reason` (required). The "
        "case joins the queue waiting, every dimension triggered by hand, recorded in the "
        "history. Refused before the study starts, after unblinding, and for a case "
        "adjudicated or sent already."
    ),
    request=inline_serializer(
        "AdjudicationSend",
        {"case_id": serializers.CharField(max_length=100), "reason": serializers.CharField()},
    ),
    responses={201: SentSerializer, **ERRORS},
)
@api_view(["POST"])
def adjudication_send_api(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.LEAD)
    given = _texts(request, ("case_id", "reason"))
    case_id = given["case_id"].strip()[:100]
    test_case = study.test_cases.filter(case_id=case_id).first() if case_id else None
    if test_case is None:
        raise exceptions.ValidationError(["case_id: the study has no test case with that id."])
    adjudication = adjudication_send(
        study=study, actor=request.user, test_case=test_case, reason=given["reason"][:MAX_FIELD]
    )
    body = {
        "adjudication": adjudication.uuid,
        "case_id": test_case.case_id,
        "status": adjudication.status,
        "triggers": adjudication.triggers,
        "reason": adjudication.sent_reason,
    }
    return Response(body, status=201)


@extend_schema(
    summary="Switch a dimension to every disagreement (protocol 7.3; the study lead)",
    description=(
        "`dimension` (a key of the rubric) and `reason` (required). Only a dimension whose "
        "stored α is below the study's target; from the next refresh of the queue every "
        "disagreement on it goes to adjudication, and the report lists the switch as a "
        "deviation."
    ),
    request=inline_serializer(
        "AdjudicationSwitch",
        {"dimension": serializers.CharField(max_length=100), "reason": serializers.CharField()},
    ),
    responses={200: SwitchSerializer, **ERRORS},
)
@api_view(["POST"])
def adjudication_switch_api(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.LEAD)
    given = _texts(request, ("dimension", "reason"))
    rule = adjudication_switch_for_missed_target(
        study=study,
        actor=request.user,
        dimension_key=given["dimension"][:100],
        reason=given["reason"][:MAX_FIELD],
    )
    return Response(
        {
            "dimension": rule.dimension_key,
            "trigger": rule.trigger,
            "switched_at": rule.switched_at,
            "switched_reason": rule.switched_reason,
        }
    )


urlpatterns = [
    path(
        "studies/<slug:slug>/adjudications/send/", adjudication_send_api, name="adjudication_send"
    ),
    path(
        "studies/<slug:slug>/adjudication-rules/switch/",
        adjudication_switch_api,
        name="adjudication_switch",
    ),
]
