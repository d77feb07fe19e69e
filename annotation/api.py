"""The HTTP API's raters and invitations: the study's raters (list, add an account),
invitation links (list, create, revoke).

The same access helpers, forms, selectors and services as the pages, never their views.
The annotation app's other endpoints are in its ``api_*.py`` modules, by concept."""

from django.urls import path, reverse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import (
    ErrorResponseSerializer,
    Pagination,
    body_object,
    form_errors,
    paginated,
    scalar_fields,
)
from studies import access, selectors
from studies.models import Invitation, Membership
from studies.services import invitations

from .forms import AddAccountForm, InvitationForm
from .selectors import rater_progress_table

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}


def _study(request, slug, role=access.COORDINATOR):
    study, _ = access.get_study_for_user(request.user, slug, role=role)
    return study


class RaterSerializer(serializers.ModelSerializer):
    """A rater as coordinators see them: by pseudonym only."""

    done = serializers.IntegerField(help_text="Cases submitted.")
    skipped = serializers.IntegerField(help_text="Cases skipped: counted apart, never a rating.")
    total = serializers.IntegerField()

    class Meta:
        model = Membership
        fields = ["pseudonym", "status", "done", "skipped", "total"]


class InvitationSerializer(serializers.ModelSerializer):
    state = serializers.SerializerMethodField()
    personal = serializers.BooleanField(source="is_personal")
    emailed = serializers.SerializerMethodField(help_text="its link was e-mailed, not shown")

    class Meta:
        model = Invitation
        fields = [
            "token_hash", "role", "note", "personal", "emailed", "state", "created_at",
            "expires_at",
        ]  # fmt: skip

    def get_state(self, invitation) -> str:
        return selectors.invitation_state(invitation)

    def get_emailed(self, invitation) -> bool:
        return bool(invitation.invitee_email)


class InvitationCreatedSerializer(InvitationSerializer):
    link = serializers.CharField(
        help_text="Shown once: the token is not stored. Empty when the link was e-mailed."
    )

    class Meta(InvitationSerializer.Meta):
        fields = [*InvitationSerializer.Meta.fields, "link"]


@extend_schema(
    methods=["GET"],
    summary="The study's raters, by pseudonym, with their progress",
    operation_id="studies_raters_list",  # the id it had before its pages were described
    responses={200: paginated("PaginatedRaterList", RaterSerializer), **ERRORS},
)
@extend_schema(
    methods=["POST"],
    summary="Invite an existing account to rate, or (the lead only) to adjudicate; it joins "
    "once the person accepts",
    request=inline_serializer(
        "RaterInvite",
        {
            "username": serializers.CharField(),
            # Text, not a choice: another enum named "role" would collide in the schema.
            "role": serializers.CharField(
                required=False,
                default=Membership.Role.RATER,
                help_text="rater, or adjudicator (the study lead only)",
            ),
        },
    ),
    responses={
        202: inline_serializer("RaterInvited", {"message": serializers.CharField()}),
        **ERRORS,
    },
)
@api_view(["GET", "POST"])
def study_raters(request, slug):
    study = _study(request, slug)
    if request.method == "GET":
        paginator = Pagination()
        page: list | None = paginator.paginate_queryset(rater_progress_table(study=study), request)
        return paginator.get_paginated_response(RaterSerializer(page, many=True).data)
    fields = ("username", "role")
    body = scalar_fields(body_object(request, fields=fields), fields)
    role = body.get("role") or Membership.Role.RATER
    if role not in invitations.ACCOUNT_ROLES:
        raise exceptions.ValidationError(["role: use rater or adjudicator."])
    if role == Membership.Role.ADJUDICATOR and request.user.pk != study.lead_id:
        raise exceptions.PermissionDenied("Only the study lead invites adjudicators.")
    form = AddAccountForm(body)
    if not form.is_valid():
        raise form_errors(form)
    invitations.rater_invite_account(
        study=study, username=form.cleaned_data["username"], actor=request.user, role=role
    )
    # The same answer whether or not the account exists, as on the page.
    return Response({"message": invitations.ACCOUNT_INVITED}, status=status.HTTP_202_ACCEPTED)


INVITATION_FIELDS = ("note", "days", "role", "email")


@extend_schema(
    methods=["GET"],
    summary="The study's invitations",
    operation_id="studies_invitations_list",  # the id it had before its pages were described
    responses={200: paginated("PaginatedInvitationList", InvitationSerializer), **ERRORS},
)
@extend_schema(
    methods=["POST"],
    summary="Create an invitation link (only the lead may invite coordinators and adjudicators)",
    request=inline_serializer(
        "InvitationCreate",
        {
            "note": serializers.CharField(required=False),
            "days": serializers.IntegerField(required=False, default=invitations.DEFAULT_DAYS),
            "role": serializers.ChoiceField(choices=Membership.Role.choices, required=False),
            "email": serializers.EmailField(
                required=False,
                help_text="e-mail the link to this address instead of answering it",
            ),
        },
    ),
    responses={201: InvitationCreatedSerializer, **ERRORS},
)
@api_view(["GET", "POST"])
def study_invitations(request, slug):
    study = _study(request, slug)
    if request.method == "GET":
        paginator = Pagination()
        page: list | None = paginator.paginate_queryset(
            study.invitations.order_by("-created_at"), request
        )
        return paginator.get_paginated_response(InvitationSerializer(page, many=True).data)
    # A misspelt "days" would otherwise give the link the default life, unseen.
    body = body_object(request, fields=INVITATION_FIELDS, what="a field of an invitation")
    data = scalar_fields(body, INVITATION_FIELDS)
    data.setdefault("days", invitations.DEFAULT_DAYS)
    form = InvitationForm(data, study=study, user=request.user)
    asks_coordinator = data.get("role") not in (None, "", Membership.Role.RATER)
    if asks_coordinator and "role" not in form.fields:
        raise exceptions.PermissionDenied(
            "Only the study lead invites other coordinators and adjudicators."
        )
    if not form.is_valid():
        raise form_errors(form)
    role = form.cleaned_data.get("role") or Membership.Role.RATER
    if form.cleaned_data["email"]:
        # Bound to the address: the link goes there, and is shown to no one (issue 38).
        invitation = invitations.invitation_email_create(
            study=study,
            created_by=request.user,
            email=form.cleaned_data["email"],
            site=request.build_absolute_uri("/").rstrip("/"),
            role=role,
            note=form.cleaned_data["note"],
            days=form.cleaned_data["days"],
        )
        link = ""
    else:
        invitation, token = invitations.invitation_create(
            study=study,
            created_by=request.user,
            role=role,
            note=form.cleaned_data["note"],
            days=form.cleaned_data["days"],
        )
        link = request.build_absolute_uri(reverse("studies:invitation", args=[token]))
    response = Response({**InvitationSerializer(invitation).data, "link": link}, status=201)
    response["Cache-Control"] = "no-store"
    return response


@extend_schema(summary="Revoke an invitation", request=None, responses={204: None, **ERRORS})
@api_view(["POST"])
def invitation_revoke(request, slug, token_hash):
    study = _study(request, slug)
    body_object(request, fields=())
    invitation = study.invitations.filter(token_hash=token_hash).first()
    if invitation is None:
        raise exceptions.NotFound("The study has no such invitation.")
    invitations.invitation_revoke(invitation=invitation, actor=request.user)
    return Response(status=status.HTTP_204_NO_CONTENT)


urlpatterns = [
    path("studies/<slug:slug>/raters/", study_raters, name="raters"),
    path("studies/<slug:slug>/invitations/", study_invitations, name="invitations"),
    path(
        "studies/<slug:slug>/invitations/<str:token_hash>/revoke/",
        invitation_revoke,
        name="invitation_revoke",
    ),
]
