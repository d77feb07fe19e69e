"""Invitations and API tokens: the reads beside their services (services/invitations.py,
services/tokens.py)."""

import hashlib
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.utils import timezone

from ..models import (
    ApiToken,
    Invitation,
    Study,
)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def invitation_state(invitation: Invitation, *, now=None) -> str:
    """ "used", "declined", "expired" or "pending"."""
    if invitation.used_at is not None:
        return "used"
    if invitation.declined_at is not None:
        return "declined"
    if invitation.expires_at <= (now or timezone.now()):
        return "expired"
    return "pending"


@dataclass(frozen=True)
class InvitationRow:
    invitation: Invitation
    state: str


def invitations_for_study(*, study: Study) -> list[InvitationRow]:
    now = timezone.now()
    return [
        InvitationRow(invitation=i, state=invitation_state(i, now=now))
        for i in study.invitations.order_by("-created_at")
    ]


def invitation_find(*, token: str) -> Invitation | None:
    links = Invitation.objects.select_related("study").filter(invitee_name="")
    return links.filter(token_hash=token_hash(token)).first()


def invitations_for_user(*, user: User) -> list[Invitation]:
    """The personal invitations waiting for the person's answer."""
    pending = (
        Invitation.objects.filter(invitee=user, used_at=None, declined_at=None)
        .filter(expires_at__gt=timezone.now())
        .select_related("study")
        .order_by("created_at")
    )
    return [i for i in pending if not i.study.is_closed]


def api_tokens_for_user(*, user: User) -> list[ApiToken]:
    return list(ApiToken.objects.filter(user=user))
