"""The HTTP API's payments file of a participant link: administrators only, as the page
(the vendor ids are identity)."""

from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import ErrorResponseSerializer
from studies import access

from .selectors.participants import payment_rows

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}

PaymentsSerializer = inline_serializer(
    "ParticipantPayments",
    {
        "currency": serializers.CharField(),
        "rows": inline_serializer(
            "ParticipantPayment",
            {
                "external_id": serializers.CharField(help_text='"" once erased'),
                "status": serializers.CharField(),
                "active_seconds": serializers.IntegerField(),
                "cases_completed": serializers.IntegerField(),
                "bonus": serializers.DecimalField(max_digits=12, decimal_places=2),
            },
            many=True,
        ),
        "total": serializers.DecimalField(max_digits=14, decimal_places=2),
    },
)


@extend_schema(
    summary="A participant link's payments: vendor ids, status, time, cases, bonus (admins)",
    responses={200: PaymentsSerializer, **ERRORS},
)
@api_view(["GET"])
def participant_payments(request, slug, link_uuid):
    if not request.user.is_staff:
        raise exceptions.PermissionDenied("Only administrators see participants' vendor ids.")
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    link = study.participant_links.filter(uuid=link_uuid).first()
    if link is None:
        raise exceptions.NotFound("Not found.")
    rows = payment_rows(link=link)
    return Response(
        {
            "currency": link.bonus_currency,
            "rows": [
                {
                    "external_id": row.external_id,
                    "status": row.status,
                    "active_seconds": row.active_seconds,
                    "cases_completed": row.cases_completed,
                    "bonus": f"{row.bonus:.2f}",
                }
                for row in rows
            ],
            "total": f"{sum(row.bonus for row in rows):.2f}",
        }
    )


urlpatterns = [
    path(
        "studies/<slug:slug>/participant-links/<uuid:link_uuid>/payments/",
        participant_payments,
        name="participant_payments",
    ),
]
