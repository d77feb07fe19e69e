"""The HTTP API of the decided adjudications (the coordinators' list) and of making one a
gold item (the lead, protocol 4.2). The same access helpers, selector and services as the
adjudicated cases' page: cases by id, adjudicators by pseudonym, no answer and no system."""

from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import ErrorResponseSerializer, body_object
from studies import access

from .access import get_adjudication_for_coordinator
from .selectors import adjudication as reads
from .services import adjudication as writes

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}


class AdjudicationOutcomeSerializer(serializers.Serializer):
    """A decided adjudication (for the schema: the view builds its answer)."""

    adjudication = serializers.UUIDField()
    case_id = serializers.CharField()
    status = serializers.CharField(help_text="done or unresolvable")
    adjudicator = serializers.CharField(allow_null=True, help_text="pseudonym")
    reason = serializers.CharField(allow_blank=True)
    resolved_at = serializers.DateTimeField(allow_null=True)
    gold_refusal = serializers.CharField(
        allow_blank=True,
        help_text="why it cannot become a gold item now; '' when the lead may make it one",
    )


def _outcome(adjudication, study) -> dict:
    return {
        "adjudication": adjudication.uuid,
        "case_id": adjudication.test_case.case_id,
        "status": adjudication.status,
        "adjudicator": adjudication.adjudicator.pseudonym if adjudication.adjudicator else None,
        "reason": adjudication.reason,
        "resolved_at": adjudication.resolved_at,
        "gold_refusal": writes.adjudication_gold_refusal(adjudication=adjudication, study=study),
    }


@extend_schema(
    summary="The decided adjudications, with their reasons (the adjudicated cases' page)",
    responses={
        200: inline_serializer(
            "AdjudicationOutcomes", {"results": AdjudicationOutcomeSerializer(many=True)}
        ),
        **ERRORS,
    },
)
@api_view(["GET"])
def adjudication_outcomes(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    rows = reads.adjudication_outcomes(study=study)
    return Response({"results": [_outcome(adjudication, study) for adjudication in rows]})


@extend_schema(
    summary="Make a resolved case a gold item with its adjudicated answers (the study lead)",
    description=(
        "As the page's button: the expected answers are the adjudicated ones, the "
        "adjudicator's reason their explanation. Refused (400, with why) for a case not "
        "resolved, one already a gold item or attention check, or once the protocol is "
        "frozen (the study has opened)."
    ),
    request=None,
    responses={200: AdjudicationOutcomeSerializer, **ERRORS},
)
@api_view(["POST"])
def adjudication_make_gold(request, slug, adjudication_uuid):
    adjudication, study = get_adjudication_for_coordinator(
        request.user, slug, adjudication_uuid, role=access.LEAD
    )
    body_object(request, fields=())
    writes.adjudication_make_gold(adjudication=adjudication, actor=request.user)
    adjudication, study = get_adjudication_for_coordinator(
        request.user, slug, adjudication_uuid, role=access.LEAD
    )
    return Response(_outcome(adjudication, study))


urlpatterns = [
    path("studies/<slug:slug>/adjudications/", adjudication_outcomes, name="adjudication_outcomes"),
    path(
        "studies/<slug:slug>/adjudications/<uuid:adjudication_uuid>/gold/",
        adjudication_make_gold,
        name="adjudication_make_gold",
    ),
]
