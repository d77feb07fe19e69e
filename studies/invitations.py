"""Invitations and adding raters: single-use, expiring links, or existing accounts.

The link carries a random token; only its SHA-256 is stored, so the link is shown once,
when it is made, and a copy of the database cannot be used to join a study.
"""

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from .errors import ApplicationError
from .events import study_event_record
from .models import Invitation, Membership, Study, StudyEvent
from .services import membership_add

DEFAULT_DAYS = 14
MAX_DAYS = 90


class InvitationError(ApplicationError):
    """The invitation cannot be used or the person cannot be added; the message says why."""

    def __init__(self, message: str, *, reason: str):
        super().__init__(message)
        self.reason = reason


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def invitation_state(invitation: Invitation, *, now=None) -> str:
    """ "used", "expired" or "pending"."""
    if invitation.used_at is not None:
        return "used"
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
    return Invitation.objects.select_related("study").filter(token_hash=token_hash(token)).first()


@transaction.atomic
def invitation_create(
    *,
    study: Study,
    created_by: AbstractBaseUser,
    role: str = Membership.Role.RATER,
    note: str = "",
    days: int = DEFAULT_DAYS,
) -> tuple[Invitation, str]:
    """Make an invitation; returns it with the token, which is not stored anywhere."""
    if role not in Membership.Role.values:
        raise InvitationError(f"Unknown role {role!r}.", reason="role")
    if not 1 <= days <= MAX_DAYS:
        raise InvitationError(f"A link can be valid for 1 to {MAX_DAYS} days.", reason="days")
    _require_not_closed(study)
    token = secrets.token_urlsafe(32)
    invitation = Invitation.objects.create(
        study=study,
        role=role,
        token_hash=token_hash(token),
        note=note.strip()[:200],
        created_by=created_by,
        expires_at=timezone.now() + timedelta(days=days),
    )
    study_event_record(
        study=study,
        actor=created_by,
        kind=StudyEvent.Kind.INVITATION_CREATED,
        role=role,
        expires_at=invitation.expires_at.isoformat(),
    )
    return invitation, token


@transaction.atomic
def invitation_accept(*, token: str, user: AbstractBaseUser) -> Membership:
    """Use an invitation: add the person to the study and mark the link used.

    The person who used the link, using it again (a double click), gets their membership.
    """
    try:
        invitation = _usable(token)
    except InvitationError as error:
        again = Membership.objects.filter(
            study__invitations__token_hash=token_hash(token),
            study__invitations__used_by=user,
            user=user,
        ).first()
        if error.reason != "used" or again is None:
            raise
        return again
    return _use(invitation, user)


@transaction.atomic
def invitation_accept_signup(*, token: str, username: str, password: str) -> Membership:
    """Create an account and use the invitation with it: both or neither."""
    invitation = _usable(token)
    _require_not_closed(invitation.study)
    user = get_user_model().objects.create_user(username=username, password=password)
    return _use(invitation, user)


def _usable(token: str) -> Invitation:
    """The invitation, locked, or an error saying why it cannot be used."""
    # The row lock makes the link single-use even when it is opened twice at once.
    invitation = (
        Invitation.objects.select_for_update(of=("self",), no_key=True)
        .select_related("study")
        .filter(token_hash=token_hash(token))
        .first()
    )
    if invitation is None:
        raise InvitationError(
            "This invitation link is not valid. It may have been mistyped or withdrawn.",
            reason="invalid",
        )
    state = invitation_state(invitation)
    if state == "used":
        raise InvitationError(
            "This invitation link has already been used. Each link works once; ask the "
            "coordinator for a new one.",
            reason="used",
        )
    if state == "expired":
        raise InvitationError(
            "This invitation link has expired. Ask the coordinator for a new one.",
            reason="expired",
        )
    return invitation


def _use(invitation: Invitation, user: AbstractBaseUser) -> Membership:
    study = invitation.study
    _require_newcomer(study, user)
    _require_not_closed(study)
    membership = membership_add(study=study, user=user, role=invitation.role)
    invitation.used_at = timezone.now()
    invitation.used_by = user
    invitation.save(update_fields=["used_at", "used_by"])
    study_event_record(
        study=study,
        actor=user,
        kind=StudyEvent.Kind.INVITATION_USED,
        membership=membership,
        role=invitation.role,
    )
    return membership


@transaction.atomic
def invitation_revoke(*, invitation: Invitation, actor: AbstractBaseUser) -> None:
    """Withdraw an unused link; the audit trail keeps a record of it."""
    invitation = Invitation.objects.select_for_update(of=("self",)).get(pk=invitation.pk)
    if invitation.used_at is not None:
        raise InvitationError("This invitation has been used and cannot be revoked.", reason="used")
    study_event_record(
        study_id=invitation.study_id,
        actor=actor,
        kind=StudyEvent.Kind.INVITATION_REVOKED,
        role=invitation.role,
        created_at=invitation.created_at.isoformat(),
    )
    invitation.delete()


@transaction.atomic
def rater_add_existing(
    *, study: Study, username: str, actor: AbstractBaseUser | None
) -> Membership:
    """Add an existing account to the study as a rater."""
    User = get_user_model()
    username = username.strip()
    user = User.objects.filter(**{User.USERNAME_FIELD: username}).first()
    if user is None:
        matches = list(User.objects.filter(**{f"{User.USERNAME_FIELD}__iexact": username})[:2])
        user = matches[0] if len(matches) == 1 else None
    if user is None or not user.is_active:
        raise InvitationError("There is no account with that username.", reason="unknown")
    _require_newcomer(study, user)
    _require_not_closed(study)
    membership = membership_add(study=study, user=user, role=Membership.Role.RATER)
    study_event_record(
        study=study, actor=actor, kind=StudyEvent.Kind.RATER_ADDED, membership=membership
    )
    return membership


def _require_newcomer(study: Study, user: AbstractBaseUser) -> None:
    if user.pk == study.lead_id or Membership.objects.filter(study=study, user=user).exists():
        raise InvitationError("That account is already part of this study.", reason="member")


def _require_not_closed(study: Study) -> None:
    if study.is_closed:
        raise InvitationError("The study is closed; no one can join it now.", reason="closed")
