"""The HTTP API of adjudicators: their queue, and a decision on a case (resolved answers
with a reason, or "cannot be resolved"). The same access helpers, selectors and services
as the adjudication screen; answers are in a rating's stored shape, by key label."""

from django.urls import path, reverse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import ErrorResponseSerializer, body_object
from studies import access

from .access import get_adjudication_for_adjudicator
from .selectors import adjudication as reads
from .services import StaleVersionError
from .services import adjudication as writes

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 409, 429)}


class AdjudicationQueueItemSerializer(serializers.Serializer):
    """One case of an adjudicator's queue (for the schema: the view builds its answer)."""

    adjudication = serializers.UUIDField()
    case_id = serializers.CharField()
    status = serializers.CharField()
    dimensions = serializers.ListField(child=serializers.CharField())
    triggers = serializers.DictField(child=serializers.ListField(child=serializers.CharField()))
    taken_by = serializers.CharField(help_text="Another adjudicator working on it, or ''.")
    version = serializers.IntegerField(help_text="Send it back with a decision.")
    url = serializers.CharField(help_text="The adjudication screen in the browser.")


Decision = inline_serializer(
    "AdjudicationDecision",
    {
        "adjudication": serializers.UUIDField(),
        "status": serializers.CharField(),
        "version": serializers.IntegerField(),
        "answers": serializers.DictField(),
        "reason": serializers.CharField(),
        "resolved_at": serializers.DateTimeField(allow_null=True),
    },
)


def _item(request, slug, row: reads.QueueRow) -> dict:
    adjudication = row.adjudication
    return {
        "adjudication": str(adjudication.uuid),
        "case_id": row.case_id,
        "status": adjudication.status,
        "dimensions": list(adjudication.triggers or {}),
        "triggers": adjudication.triggers or {},
        "taken_by": row.taken_by,
        "version": adjudication.version,
        "url": request.build_absolute_uri(
            reverse("annotation:adjudicate", args=[slug, adjudication.uuid])
        ),
    }


@extend_schema(
    summary="Your adjudication queue: waiting cases, and the ones you decided",
    responses={
        200: inline_serializer(
            "AdjudicationQueue",
            {
                "waiting": AdjudicationQueueItemSerializer(many=True),
                "decided": AdjudicationQueueItemSerializer(many=True),
            },
        ),
        **ERRORS,
    },
)
@api_view(["GET"])
def adjudication_queue(request, slug):
    study, membership = access.get_membership_for_user(request.user, slug, role=access.ADJUDICATOR)
    membership.study = study
    rows = reads.adjudication_queue(adjudicator=membership)
    return Response({part: [_item(request, slug, row) for row in rows[part]] for part in rows})


@extend_schema(
    summary="Record a decision: resolved answers and a reason, or cannot be resolved",
    description=(
        "The body: `version` (the adjudication's, from the queue: a decision based on an "
        "older one is refused with 409), `reason` (required), and either `responses` "
        "({key label: {dimension key: answer}}) and `case` ({dimension key: answer}) for the "
        "dimensions sent for adjudication, each answer as the rating screen sends it and "
        "cleaned by its rubric kind, or `unresolvable`: true."
    ),
    request=inline_serializer(
        "AdjudicationResolve",
        {
            "version": serializers.IntegerField(),
            "reason": serializers.CharField(),
            "responses": serializers.DictField(required=False),
            "case": serializers.DictField(required=False),
            "unresolvable": serializers.BooleanField(required=False, default=False),
        },
    ),
    responses={200: Decision, **ERRORS},
)
@api_view(["POST"])
def adjudication_resolve(request, slug, adjudication_uuid):
    adjudication, _, membership = get_adjudication_for_adjudicator(
        request.user, slug, adjudication_uuid
    )
    data = body_object(request, fields=("version", "reason", "responses", "case", "unresolvable"))
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise exceptions.ValidationError(["version: give the adjudication's version."])
    reason = data.get("reason")
    reason = reason if isinstance(reason, str) else ""
    try:
        if data.get("unresolvable") is True:
            adjudication = writes.adjudication_mark_unresolvable(
                adjudication=adjudication, adjudicator=membership, reason=reason,
                expected_version=version, actor=request.user,
            )  # fmt: skip
        else:
            payload = {
                "responses": data.get("responses"),
                "case": data.get("case"),
                "notes": reason,
            }
            adjudication = writes.adjudication_resolve(
                adjudication=adjudication, adjudicator=membership, payload=payload,
                expected_version=version, actor=request.user,
            )  # fmt: skip
    except StaleVersionError as error:
        raise Conflict(str(error)) from error
    return Response(
        {
            "adjudication": str(adjudication.uuid),
            "status": adjudication.status,
            "version": adjudication.version,
            "answers": adjudication.answers,
            "reason": adjudication.reason,
            "resolved_at": adjudication.resolved_at,
        }
    )


class Conflict(exceptions.APIException):
    status_code = 409
    default_code = "stale"
    default_detail = "The adjudication was saved elsewhere since that version."


urlpatterns = [
    path("studies/<slug:slug>/adjudication/", adjudication_queue, name="adjudication_queue"),
    path(
        "studies/<slug:slug>/adjudication/<uuid:adjudication_uuid>/resolve/",
        adjudication_resolve,
        name="adjudication_resolve",
    ),
]
