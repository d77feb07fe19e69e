"""Personal API tokens: created and revoked by their owner, shown once, stored hashed.

A token is ``concord_`` followed by 43 URL-safe characters (32 random bytes); the database
keeps its SHA-256 only, so a copy of the database gives no one a working token. A token
carries no permission of its own: the API looks up its user and applies the same study
roles as the pages (``studies.access``).
"""

import hashlib
import secrets
from datetime import timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from studies.errors import ApplicationError
from studies.models import ApiToken, Participant

TOKEN_PREFIX = "concord_"  # noqa: S105 - a marker, not a secret
MAX_TOKENS_PER_USER = 20
MAX_NAME_CHARS = 100
# ``last_used_at`` is written at most this often per token, not on every request.
LAST_USED_GRANULARITY = timedelta(minutes=5)


class TokenError(ApplicationError):
    """A token cannot be created or revoked; the message says why."""


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@transaction.atomic
def api_token_create(*, user: User, name: str) -> tuple[ApiToken, str]:
    """A new token for ``user``; returns it with its secret, which exists only here."""
    if Participant.objects.filter(membership__user=user).exists():
        # A crowd participant's session is their only credential (docs/admin.md, "Session
        # binding"): no longer-lived one, and no scripted ratings through the API.
        raise TokenError(
            "Participants from a crowd platform take part through the study's pages; API "
            "tokens are not available to them."
        )
    name = (name or "").strip()
    if not name:
        raise TokenError("Give the token a name, e.g. the pipeline that will use it.")
    if len(name) > MAX_NAME_CHARS or "\x00" in name:
        raise TokenError(f"Keep the name under {MAX_NAME_CHARS} characters.")
    active = ApiToken.objects.filter(user=user, revoked_at=None)
    if active.count() >= MAX_TOKENS_PER_USER:
        raise TokenError(
            f"You already have {MAX_TOKENS_PER_USER} active tokens; revoke one you no longer use."
        )
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user,
        name=name,
        prefix=secret[: len(TOKEN_PREFIX) + 4],
        secret_hash=secret_hash(secret),
    )
    return token, secret


@transaction.atomic
def api_token_revoke(*, user: User, token_uuid) -> ApiToken:
    """Revoke one of ``user``'s own tokens; it is refused from the next request on."""
    token = ApiToken.objects.select_for_update().filter(user=user, uuid=token_uuid).first()
    if token is None:
        raise TokenError("There is no such token.")
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def api_token_user(*, secret: str) -> User | None:
    """The active user an active token belongs to, or None (unknown, revoked, inactive)."""
    if not secret.startswith(TOKEN_PREFIX) or len(secret) > 100:
        return None
    token = (
        ApiToken.objects.select_related("user")
        .filter(secret_hash=secret_hash(secret), revoked_at=None)
        .first()
    )
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_GRANULARITY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user
