"""Invitations: single-use, expiring links, or personal invitations of existing accounts.

The link carries a random token; only its SHA-256 is stored, so the link is shown once,
when it is made, and a copy of the database cannot be used to join a study.

An existing account is never added by a coordinator alone: naming it makes a personal
invitation that the person sees when signed in and accepts or declines. The coordinator is
told the same whether or not the name belongs to an account that can join, so the form
cannot be used to find out who has an account or who takes part in a study.
"""

import secrets
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from studies.errors import ApplicationError
from studies.events import study_event_record
from studies.locks import study_lock
from studies.models import Invitation, Membership, Study, StudyEvent
from studies.selectors import invitation_state, token_hash

from .membership import membership_add

DEFAULT_DAYS = 14
MAX_DAYS = 90


class InvitationError(ApplicationError):
    """The invitation cannot be used or the person cannot be added; the message says why."""

    def __init__(self, message: str, *, reason: str):
        super().__init__(message)
        self.reason = reason


# The roles that read the texts under their labels: with an open link, a coordinator could
# enrol an identity of their own in them (issue 38).
BLINDED_ROLES = (Membership.Role.RATER, Membership.Role.ADJUDICATOR)
BOUND_ONLY = (
    "This study takes raters and adjudicators only by an invitation bound to a person (an "
    "e-mail address, an existing account, or a participant link's vendor id), not by an "
    "open link anyone could use."
)


def invitation_kind(invitation: Invitation) -> str:
    """How a person who uses ``invitation`` joins (``Membership.JoinedVia``)."""
    if invitation.invitee_email:
        return Membership.JoinedVia.EMAIL
    if invitation.is_personal:
        return Membership.JoinedVia.ACCOUNT
    return Membership.JoinedVia.OPEN_LINK


def _require_bound(study: Study, *, role: str, kind: str) -> None:
    if (
        study.bound_invitations_only
        and role in BLINDED_ROLES
        and kind == Membership.JoinedVia.OPEN_LINK
    ):
        raise InvitationError(BOUND_ONLY, reason="bound")


@transaction.atomic
def invitation_create(
    *,
    study: Study,
    created_by: User,
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
    _require_bound(study, role=role, kind=Membership.JoinedVia.OPEN_LINK)
    token = secrets.token_urlsafe(32)
    invitation = _invitation_insert(
        study=study, actor=created_by, role=role, token=token, days=days, note=note.strip()[:200]
    )
    return invitation, token


@transaction.atomic
def invitation_email_create(
    *,
    study: Study,
    created_by: User,
    email: str,
    site: str,
    role: str = Membership.Role.RATER,
    note: str = "",
    days: int = DEFAULT_DAYS,
) -> Invitation:
    """Make an invitation bound to an e-mail address: its link is e-mailed there once this
    commits (``site``: "https://host", the link's origin) and shown to no one else, so the
    coordinator who made it cannot use it unless the address is theirs."""
    if role not in Membership.Role.values:
        raise InvitationError(f"Unknown role {role!r}.", reason="role")
    if not 1 <= days <= MAX_DAYS:
        raise InvitationError(f"A link can be valid for 1 to {MAX_DAYS} days.", reason="days")
    email = (email or "").strip()
    try:
        if len(email) > 254:
            raise ValidationError("too long")
        validate_email(email)
    except ValidationError:
        raise InvitationError("That is not an e-mail address.", reason="email") from None
    _require_not_closed(study)
    token = secrets.token_urlsafe(32)
    invitation = _invitation_insert(
        study=study,
        actor=created_by,
        role=role,
        token=token,
        days=days,
        note=note.strip()[:200],
        invitee_email=email,
    )
    link = site + reverse("studies:invitation", args=[token])
    context = {"study": study, "link": link, "days": days, "role": invitation.get_role_display()}
    transaction.on_commit(
        lambda: send_mail(
            subject=f"Invitation to take part in {study.name}",
            message=render_to_string("studies/people/invitation_email.txt", context),
            from_email=None,
            recipient_list=[email],
        )
    )
    return invitation


def _invitation_insert(
    *,
    study: Study,
    actor: User,
    role: str,
    token: str,
    days: int,
    note: str = "",
    invitee_name: str = "",
    invitee: User | None = None,
    invitee_email: str = "",
) -> Invitation:
    """The invitation row (its token hashed) and the record of its creation; one that
    names an account (``invitee_name``) is personal."""
    invitation = Invitation.objects.create(
        study=study,
        role=role,
        token_hash=token_hash(token),
        note=note,
        invitee_name=invitee_name,
        invitee=invitee,
        invitee_email=invitee_email,
        created_by=actor,
        expires_at=timezone.now() + timedelta(days=days),
    )
    detail: dict[str, Any] = {"personal": True} if invitee_name else {}
    if invitee_email:
        # Never the address itself: coordinators read the history.
        detail["emailed"] = True
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.INVITATION_CREATED,
        role=role,
        expires_at=invitation.expires_at.isoformat(),
        **detail,
    )
    return invitation


@transaction.atomic
def invitation_accept(*, token: str, user: User) -> Membership:
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
    user = get_user_model().objects.create_user(
        username=username, password=password, email=invitation.invitee_email
    )
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
    # A personal invitation's token was never shown to anyone; refuse it all the same.
    if invitation is None or invitation.is_personal:
        raise InvitationError(
            "This invitation link is not valid. It may have been mistyped or withdrawn.",
            reason="invalid",
        )
    return _require_pending(invitation)


def _require_pending(invitation: Invitation) -> Invitation:
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
    if state == "declined":
        raise InvitationError("This invitation has been declined.", reason="used")
    return invitation


def _use(invitation: Invitation, user: User) -> Membership:
    study = invitation.study
    _require_newcomer(study, user)
    _require_not_closed(study)
    # A link made before the study required bound invitations no longer admits a rater.
    _require_bound(study, role=invitation.role, kind=invitation_kind(invitation))
    membership = membership_add(
        study=study,
        user=user,
        role=invitation.role,
        joined_via=invitation_kind(invitation),
        joined_by=invitation.created_by,
        invitation=invitation,
    )
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
def invitation_revoke(*, invitation: Invitation, actor: User) -> None:
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


# What the coordinator is told after ``rater_invite_account``, whether or not the name is an
# account that can join: the answer must not tell who has an account or who takes part.
ACCOUNT_INVITED = (
    "If an account with that name exists and is not yet part of this study, it has been "
    "invited. The person joins once they accept."
)
# The roles an existing account may be invited to by name: raters, and (by the lead, as the
# view and the API check) adjudicators.
ACCOUNT_ROLES = (Membership.Role.RATER, Membership.Role.ADJUDICATOR)


@transaction.atomic
def rater_invite_account(
    *, study: Study, username: str, actor: User, role: str = Membership.Role.RATER
) -> None:
    """Invite an existing account to rate (or to adjudicate); it joins only if the person
    accepts.

    Returns nothing and does the same visible things (one invitation row, one event) whether
    or not the name belongs to an account that can join: the invitation simply names no
    one who could accept it. A second invitation of the same name while one waits is not
    made.
    """
    username = username.strip()
    if not username:
        raise InvitationError("Enter a username.", reason="username")
    if role not in ACCOUNT_ROLES:
        raise InvitationError("An account is invited to rate or to adjudicate.", reason="role")
    # Two coordinators inviting the same name at once: the second waits, then finds the
    # first's invitation waiting.
    study = study_lock(study.pk, exclusive=True)
    _require_not_closed(study)
    waiting = Invitation.objects.filter(
        study=study, invitee_name__iexact=username, used_at=None, declined_at=None,
        expires_at__gt=timezone.now(),
    )  # fmt: skip
    if waiting.exists():
        return
    _invitation_insert(
        study=study,
        actor=actor,
        role=role,
        # No link: the token is thrown away, and personal invitations refuse links anyway.
        token=secrets.token_urlsafe(32),
        days=DEFAULT_DAYS,
        invitee_name=username[:150],
        invitee=_account_that_may_join(study, username),
    )


def _account_that_may_join(study: Study, username: str) -> User | None:
    accounts = get_user_model()
    field = accounts.USERNAME_FIELD
    user = accounts.objects.filter(**{field: username}).first()
    if user is None:
        matches = list(accounts.objects.filter(**{f"{field}__iexact": username})[:2])
        user = matches[0] if len(matches) == 1 else None
    if user is None or not user.is_active:
        return None
    if user.pk == study.lead_id or Membership.objects.filter(study=study, user=user).exists():
        return None
    return user


def _personal_invitation(invitation_hash: str, user: User) -> Invitation:
    """The person's own invitation, locked; anyone else's is "invalid" (the view's 404)."""
    invitation = (
        Invitation.objects.select_for_update()
        .select_related("study")
        .filter(token_hash=invitation_hash, invitee=user)
        .exclude(invitee_name="")
        .first()
    )
    if invitation is None:
        raise InvitationError("There is no such invitation.", reason="invalid")
    return _require_pending(invitation)


@transaction.atomic
def invitation_accept_personal(*, invitation_hash: str, user: User) -> Membership:
    """The invited person accepts: they join the study with the next pseudonym."""
    return _use(_personal_invitation(invitation_hash, user), user)


@transaction.atomic
def invitation_decline(*, invitation_hash: str, user: User) -> None:
    """The invited person declines: the invitation is closed and they are not added."""
    invitation = _personal_invitation(invitation_hash, user)
    invitation.declined_at = timezone.now()
    invitation.save(update_fields=["declined_at"])


def _require_newcomer(study: Study, user: User) -> None:
    if user.pk == study.lead_id or Membership.objects.filter(study=study, user=user).exists():
        raise InvitationError("That account is already part of this study.", reason="member")


def _require_not_closed(study: Study) -> None:
    if study.is_closed:
        raise InvitationError("The study is closed; no one can join it now.", reason="closed")
