"""The HTTP API's people: accounts administrators make for raters, and accepting an
invitation link with one's own token.

The same services as the pages (``studies.services.invitations``, the link's page) and
the operators' ``add_rater`` (``studies.services.accounts``); see docs/api.md.
"""

from django.urls import path, reverse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.decorators import api_view
from rest_framework.response import Response

from core.api import ErrorResponseSerializer, body_object, scalar_fields

from . import access
from .services import invitations
from .services.accounts import rater_account_create

ERRORS = {code: ErrorResponseSerializer for code in (400, 401, 403, 404, 429)}
ACCOUNT_FIELDS = ("study", "username", "email")

AccountCreatedSerializer = inline_serializer(
    "RaterAccountCreated",
    {
        "username": serializers.CharField(),
        "study": serializers.CharField(),
        "pseudonym": serializers.CharField(),
        "email": serializers.CharField(
            help_text="where the link to choose a password was sent (never in this answer)"
        ),
    },
)


@extend_schema(
    summary="Make a rater's account for a study (administrators only)",
    description=(
        "The account joins the study as a rater with the next pseudonym, recorded in its "
        "history. It has no password: the link with which the person chooses one is "
        "e-mailed to `email` and shown to no one else (an administrator reads the texts by "
        "system, and with the link could sign in as the rater). An existing account is "
        "invited instead, with `POST studies/{slug}/raters/`."
    ),
    request=inline_serializer(
        "RaterAccountCreate",
        {
            "study": serializers.CharField(help_text="the study's slug"),
            "username": serializers.CharField(max_length=150),
            "email": serializers.EmailField(
                help_text="the person's address: the link to choose a password goes there"
            ),
        },
    ),
    responses={201: AccountCreatedSerializer, **ERRORS},
)
@api_view(["POST"])
def accounts(request):
    # Administrators only, before the study is looked up: a refusal says nothing of it.
    if not request.user.is_staff:
        raise exceptions.PermissionDenied("Only administrators create accounts.")
    body = body_object(request, fields=ACCOUNT_FIELDS, what="a field of an account")
    data = scalar_fields(body, ACCOUNT_FIELDS)
    problems = [
        f"{name}: give a text." for name in ("study", "username", "email") if not data.get(name)
    ]
    problems += [
        f"{name}: give a text." for name, value in data.items() if not isinstance(value, str)
    ]
    if problems:
        raise exceptions.ValidationError(sorted(set(problems)))
    study, _ = access.get_study_for_user(request.user, data["study"], role=access.COORDINATOR)
    membership = rater_account_create(
        study=study,
        username=data["username"],
        email=data["email"],
        actor=request.user,
        site=request.build_absolute_uri("/").rstrip("/"),
    )
    return Response(
        {
            "username": membership.user.get_username(),
            "study": study.slug,
            "pseudonym": membership.pseudonym,
            "email": membership.user.email,
        },
        status=status.HTTP_201_CREATED,
    )


@extend_schema(
    summary="Accept an invitation link as yourself (the token's owner joins the study)",
    description=(
        "`token` is the last part of the link (`/invite/<token>/`). The link works once; "
        "the person who used it, sending it again, gets the same answer. Someone already "
        "part of the study, an expired or used link, or a closed study: 400 with why."
    ),
    request=None,
    responses={
        200: inline_serializer(
            "InvitationAccepted",
            {
                "study": serializers.CharField(),
                "role": serializers.CharField(),
                "pseudonym": serializers.CharField(allow_blank=True),
                "onboarding": serializers.CharField(
                    allow_null=True, help_text="a rater's next steps (GET it), else null"
                ),
            },
        ),
        **ERRORS,
    },
)
@api_view(["POST"])
def invitation_accept(request, token):
    body_object(request, fields=())
    try:
        membership = invitations.invitation_accept(token=token[:200], user=request.user)
    except invitations.InvitationError as error:
        if error.reason == "invalid":
            raise exceptions.NotFound(str(error)) from None
        raise
    study = membership.study
    onboarding = None
    if membership.role == membership.Role.RATER:
        onboarding = request.build_absolute_uri(reverse("api:onboarding", args=[study.slug]))
    return Response(
        {
            "study": study.slug,
            "role": membership.role,
            "pseudonym": membership.pseudonym,
            "onboarding": onboarding,
        }
    )


urlpatterns = [
    path("accounts/", accounts, name="accounts"),
    path("invitations/<str:token>/accept/", invitation_accept, name="invitation_accept"),
]
