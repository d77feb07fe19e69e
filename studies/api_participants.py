"""The HTTP API's participant links: coordinators read them (with their URLs and counts),
the lead makes, changes and closes them. The same services as the Participant links page."""

from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import ErrorResponseSerializer, body_object

from . import access
from .models import Participant, ParticipantLink
from .participant_urls import participant_link_url
from .services.participants import (
    LINK_FIELDS,
    MAX_BATCH,
    participant_link_close,
    participant_link_save,
)

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}


class ParticipantLinkSerializer(serializers.ModelSerializer):
    id = serializers.UUIDField(source="uuid", read_only=True)
    url = serializers.SerializerMethodField(help_text="The URL to paste into the vendor")
    is_open = serializers.BooleanField(read_only=True)
    linked_studies = serializers.SerializerMethodField()
    participants = serializers.SerializerMethodField(help_text="Participants by status")
    # Empty when the lead gave none: not a "uri" then.
    completion_url = serializers.CharField(read_only=True, help_text="http(s), or empty")
    screened_out_url = serializers.CharField(read_only=True, help_text="http(s), or empty")

    class Meta:
        model = ParticipantLink
        fields = [
            "id", "name", "preset", "participant_param", "study_param", "session_param",
            "completion_code", "completion_url", "screened_out_code", "screened_out_url",
            "max_participants", "timeout_minutes", "cases_per_participant", "bonus_rule",
            "bonus_amount", "bonus_currency", "linked_studies", "is_open", "closed_at",
            "created_at", "url", "participants",
        ]  # fmt: skip
        read_only_fields = fields

    def get_url(self, link) -> str:
        return participant_link_url(self.context["request"], link)

    def get_linked_studies(self, link) -> list[str]:
        return [study.slug for study in link.linked_studies.all()]

    def get_participants(self, link) -> dict[str, int]:
        counts = dict.fromkeys(Participant.Status.values, 0)
        for value in link.participants.values_list("status", flat=True):
            counts[value] += 1
        return counts


ParticipantLinkInSerializer = inline_serializer(
    "ParticipantLinkIn",
    {
        "name": serializers.CharField(max_length=100),
        "preset": serializers.ChoiceField(choices=ParticipantLink.Preset.values, required=False),
        "participant_param": serializers.CharField(required=False, help_text="custom only"),
        "study_param": serializers.CharField(required=False, help_text="custom only"),
        "session_param": serializers.CharField(required=False, help_text="custom only"),
        "completion_code": serializers.CharField(max_length=100),
        "completion_url": serializers.CharField(required=False, help_text="http(s), or empty"),
        "screened_out_code": serializers.CharField(required=False),
        "screened_out_url": serializers.CharField(required=False, help_text="http(s), or empty"),
        "max_participants": serializers.IntegerField(min_value=1),
        "timeout_minutes": serializers.IntegerField(required=False, default=60),
        "cases_per_participant": serializers.IntegerField(
            required=False,
            allow_null=True,
            min_value=1,
            max_value=MAX_BATCH,
            help_text="Sample cases each participant gets on joining, and no more; null: the "
            "design plans them like any rater",
        ),
        "bonus_rule": serializers.ChoiceField(
            choices=ParticipantLink.BonusRule.values, required=False
        ),
        "bonus_amount": serializers.DecimalField(max_digits=8, decimal_places=2, required=False),
        "bonus_currency": serializers.CharField(required=False, max_length=3),
        "linked_studies": serializers.ListField(child=serializers.SlugField(), required=False),
    },
)


def _values(body: dict, start: dict | None = None) -> dict:
    return {**(start or {}), **body}


@extend_schema(
    methods=["GET"],
    summary="The study's participant links, with their URLs and counts (coordinators)",
    responses={200: ParticipantLinkSerializer(many=True), **ERRORS},
)
@extend_schema(
    methods=["POST"],
    summary="Make a participant link (the study lead)",
    request=ParticipantLinkInSerializer,
    responses={201: ParticipantLinkSerializer, **ERRORS},
)
@api_view(["GET", "POST"])
def participant_links(request, slug):
    role = access.LEAD if request.method == "POST" else access.COORDINATOR
    study, _ = access.get_study_for_user(request.user, slug, role=role)
    if request.method == "GET":
        links = study.participant_links.prefetch_related("linked_studies")
        data = ParticipantLinkSerializer(links, many=True, context={"request": request}).data
        return Response(data)
    body = body_object(request, fields=LINK_FIELDS, what="a field of a participant link")
    link = participant_link_save(study=study, actor=request.user, values=_values(body))
    return Response(
        ParticipantLinkSerializer(link, context={"request": request}).data,
        status=status.HTTP_201_CREATED,
    )


def _link(request, slug, link_uuid, *, role):
    study, _ = access.get_study_for_user(request.user, slug, role=role)
    link = study.participant_links.filter(uuid=link_uuid).first()
    if link is None:
        raise exceptions.NotFound("Not found.")
    return study, link


@extend_schema(
    methods=["GET"],
    summary="A participant link",
    responses={200: ParticipantLinkSerializer, **ERRORS},
)
@extend_schema(
    methods=["PATCH"],
    summary="Change a participant link (the study lead); fields not sent stay",
    request=ParticipantLinkInSerializer,
    responses={200: ParticipantLinkSerializer, **ERRORS},
)
@api_view(["GET", "PATCH"])
def participant_link(request, slug, link_uuid):
    role = access.LEAD if request.method == "PATCH" else access.COORDINATOR
    study, link = _link(request, slug, link_uuid, role=role)
    if request.method == "PATCH":
        body = body_object(request, fields=LINK_FIELDS, what="a field of a participant link")
        start = {field: getattr(link, field) for field in LINK_FIELDS if field != "linked_studies"}
        start["linked_studies"] = [s.slug for s in link.linked_studies.all()]
        link = participant_link_save(
            study=study, actor=request.user, values=_values(body, start), link=link
        )
    return Response(ParticipantLinkSerializer(link, context={"request": request}).data)


@extend_schema(
    summary="Close a participant link: no new arrivals; those who started can finish",
    request=None,
    responses={200: ParticipantLinkSerializer, **ERRORS},
)
@api_view(["POST"])
def participant_link_close_view(request, slug, link_uuid):
    _, link = _link(request, slug, link_uuid, role=access.LEAD)
    body_object(request, fields=())
    link = participant_link_close(link=link, actor=request.user)
    return Response(ParticipantLinkSerializer(link, context={"request": request}).data)


urlpatterns = [
    path("studies/<slug:slug>/participant-links/", participant_links, name="participant_links"),
    path(
        "studies/<slug:slug>/participant-links/<uuid:link_uuid>/",
        participant_link,
        name="participant_link",
    ),
    path(
        "studies/<slug:slug>/participant-links/<uuid:link_uuid>/close/",
        participant_link_close_view,
        name="participant_link_close",
    ),
]
