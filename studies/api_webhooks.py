"""The HTTP API's webhooks: the study lead registers URLs for study events, reads their
deliveries and replays one. The same access helper and services as the Webhooks page."""

from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import ErrorResponseSerializer, Pagination, body_object, paginated

from . import access
from .models import Webhook, WebhookDelivery
from .services.webhooks import (
    webhook_add,
    webhook_delivery_replay,
    webhook_input_problems,
    webhook_remove,
)
from .webhooks import MILESTONE_EVERY_MAX

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}


class WebhookSerializer(serializers.ModelSerializer):
    id = serializers.UUIDField(source="uuid", read_only=True)
    events = serializers.ListField(child=serializers.ChoiceField(choices=Webhook.Event.values))

    class Meta:
        model = Webhook
        fields = ["id", "url", "events", "milestone_every", "last_milestone", "created_at"]
        read_only_fields = fields


WebhookCreatedSerializer = inline_serializer(
    "WebhookCreated",
    {
        "webhook": WebhookSerializer(),
        "secret": serializers.CharField(
            help_text="Signs every delivery (HMAC-SHA256); shown this once, keep it."
        ),
    },
)
WebhookInSerializer = inline_serializer(
    "WebhookIn",
    {
        "url": serializers.URLField(max_length=2000, help_text="http or https, a public host"),
        "events": serializers.ListField(
            child=serializers.ChoiceField(choices=Webhook.Event.values), min_length=1
        ),
        "milestone_every": serializers.IntegerField(
            required=False,
            default=100,
            min_value=1,
            max_value=MILESTONE_EVERY_MAX,
            help_text="rating.milestone: each time the submitted ratings reach a multiple",
        ),
    },
)


class AttemptSerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    status_code = serializers.IntegerField(allow_null=True)
    error = serializers.CharField(allow_blank=True)
    ms = serializers.IntegerField()


class DeliverySerializer(serializers.ModelSerializer):
    id = serializers.UUIDField(source="uuid", read_only=True)
    attempts = AttemptSerializer(many=True)
    replay_of = serializers.UUIDField(source="replay_of.uuid", allow_null=True, default=None)

    class Meta:
        model = WebhookDelivery
        fields = [
            "id", "event", "event_id", "status", "payload", "attempts", "next_attempt_at",
            "created_at", "delivered_at", "replay_of",
        ]  # fmt: skip
        read_only_fields = fields


@extend_schema(
    methods=["GET"],
    summary="The study's webhooks (the study lead)",
    responses={200: paginated("PaginatedWebhookList", WebhookSerializer), **ERRORS},
)
@extend_schema(
    methods=["POST"],
    summary="Register a URL for study events (the study lead); the secret is shown once",
    request=WebhookInSerializer,
    responses={201: WebhookCreatedSerializer, **ERRORS},
)
@api_view(["GET", "POST"])
def study_webhooks(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.LEAD)
    if request.method == "GET":
        paginator = Pagination()
        page = paginator.paginate_queryset(study.webhooks.order_by("created_at", "pk"), request)
        return paginator.get_paginated_response(WebhookSerializer(page, many=True).data)
    body = body_object(
        request, fields=("url", "events", "milestone_every"), what="a field of a webhook"
    )
    fields = {
        "url": body.get("url"),
        "events": body.get("events"),
        "milestone_every": body.get("milestone_every", 100),
    }
    problems = webhook_input_problems(**fields)
    if problems:
        raise exceptions.ValidationError(problems)
    webhook, secret = webhook_add(study=study, actor=request.user, **fields)
    return Response(
        {"webhook": WebhookSerializer(webhook).data, "secret": secret},
        status=status.HTTP_201_CREATED,
    )


@extend_schema(
    methods=["GET"],
    operation_id="studies_webhook_retrieve",
    summary="A webhook",
    responses={200: WebhookSerializer, **ERRORS},
)
@extend_schema(
    methods=["DELETE"],
    summary="Remove a webhook with its deliveries",
    responses={204: None, **ERRORS},
)
@api_view(["GET", "DELETE"])
def study_webhook(request, slug, webhook_uuid):
    _, webhook = access.get_webhook_for_user(request.user, slug, webhook_uuid)
    if request.method == "DELETE":
        webhook_remove(webhook=webhook, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
    return Response(WebhookSerializer(webhook).data)


@extend_schema(
    summary="A webhook's deliveries, newest first, with every attempt",
    responses={200: paginated("PaginatedWebhookDeliveryList", DeliverySerializer), **ERRORS},
)
@api_view(["GET"])
def webhook_deliveries(request, slug, webhook_uuid):
    _, webhook = access.get_webhook_for_user(request.user, slug, webhook_uuid)
    paginator = Pagination()
    page = paginator.paginate_queryset(
        webhook.deliveries.select_related("replay_of").order_by("-created_at", "-pk"), request
    )
    return paginator.get_paginated_response(DeliverySerializer(page, many=True).data)


@extend_schema(
    summary="Send a delivery's event again (a new delivery, the same event id)",
    request=None,
    responses={202: DeliverySerializer, **ERRORS},
)
@api_view(["POST"])
def webhook_delivery_replay_view(request, slug, webhook_uuid, delivery_uuid):
    _, webhook = access.get_webhook_for_user(request.user, slug, webhook_uuid)
    body_object(request, fields=())
    delivery = webhook.deliveries.filter(uuid=delivery_uuid).first()
    if delivery is None:
        raise exceptions.NotFound("Not found.")
    replay = webhook_delivery_replay(delivery=delivery, actor=request.user)
    replay.refresh_from_db()
    return Response(DeliverySerializer(replay).data, status=status.HTTP_202_ACCEPTED)


urlpatterns = [
    path("studies/<slug:slug>/webhooks/", study_webhooks, name="webhooks"),
    path("studies/<slug:slug>/webhooks/<uuid:webhook_uuid>/", study_webhook, name="webhook"),
    path(
        "studies/<slug:slug>/webhooks/<uuid:webhook_uuid>/deliveries/",
        webhook_deliveries,
        name="webhook_deliveries",
    ),
    path(
        "studies/<slug:slug>/webhooks/<uuid:webhook_uuid>/deliveries/<uuid:delivery_uuid>/replay/",
        webhook_delivery_replay_view,
        name="webhook_delivery_replay",
    ),
]
