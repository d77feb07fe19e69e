"""The HTTP API's agreement: the stored result of a study, with its freshness."""

from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import ErrorResponseSerializer
from studies import access

from .selectors import agreement_is_stale, study_agreement

ERRORS = {code: ErrorResponseSerializer for code in (401, 403, 404, 429)}


@extend_schema(
    summary="The stored agreement result, and whether it is current",
    description=(
        "`stale` is true while ratings or settings changed since the result was computed "
        "(the change requested a recompute; reading the result never does); "
        "`intervals_pending` while the bootstrap intervals are still being computed. "
        "`result` is empty until a first computation."
    ),
    responses={
        200: inline_serializer(
            "Agreement",
            {
                "computed_at": serializers.DateTimeField(allow_null=True),
                "stale": serializers.BooleanField(),
                "intervals_pending": serializers.BooleanField(),
                "ratings": serializers.IntegerField(),
                "result": serializers.DictField(),
            },
        ),
        **ERRORS,
    },
)
@api_view(["GET"])
def study_agreement_result(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    agreement = study_agreement(study=study)
    stale = agreement_is_stale(study=study, agreement=agreement)
    result = agreement.result or {}
    return Response(
        {
            "computed_at": agreement.computed_at,
            "stale": stale,
            "intervals_pending": bool(result.get("intervals_pending")),
            "ratings": agreement.n_ratings,
            "result": result,
        }
    )


urlpatterns = [
    path("studies/<slug:slug>/agreement/", study_agreement_result, name="agreement"),
]
