"""The right to erasure: one person's identifying data removed everywhere, on request or
when a retention period ends (protocol 3, "Retention").

What goes: the account's username (replaced by ``erased-<random>``), names, e-mail, its
password (made unusable) and the ability to sign in, its sessions, its API tokens, the ids
a crowd platform knows it by (participant, study and session ids), the
names and notes of the invitations that named it, any mention of its username, name, e-mail
or participant ids in the audit trail's free text, in Django admin's log, in the names the
coordinators gave participant links and in the person's own free text (rating notes,
counted items, comments: ``studies.erasure_holders``), and the export files prepared
before (they are deleted; a new one is prepared without the person). What stays: the
account row itself (memberships, ratings, revisions, quality-control evidence and the audit
trail point at it) and every pseudonym, so the statistics, the analysis, every export and
the protocol fingerprint read exactly what they read before, but for the mentions.

No IP address or user agent is kept in the database: the sign-in throttle
(``core.throttle``) keeps only hashed counters in the cache, which expire after
``THROTTLE_WINDOW_SECONDS``; the sessions, which are deleted here, are the only rows that
could hold anything more.
"""

import re
import secrets
from dataclasses import dataclass, field
from typing import Any

from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.contrib.sessions.models import Session
from django.db import transaction
from django.db.models import Q, TextField
from django.db.models.functions import Cast
from django.utils import timezone

from core.user_input import reason_text
from jobs.models import Job
from jobs.services import job_files_remove
from studies.erasure_holders import own_text_scrub
from studies.errors import ApplicationError
from studies.events import study_event_record
from studies.locks import user_lock
from studies.models import (
    ApiToken,
    IdentityErasure,
    Invitation,
    Membership,
    Participant,
    ParticipantLink,
    StudyEvent,
)
from studies.retention import held_pseudonym, users_due_for_erasure

ERASED_PREFIX = "erased-"
MAX_REASON_CHARS = 2000
# A free-text mention is replaced by this.
REDACTED = "[erased]"
# Shorter names are not searched for in free text: "al" or "jo" would redact ordinary words.
MIN_MENTION_CHARS = 3
RETENTION_REASON = "retention period ended"


class ErasureError(ApplicationError):
    """An identity cannot be erased; the message says why."""


@dataclass
class ErasureResult:
    """What one call did: ``already`` when the person had been erased before (nothing done)."""

    user_id: int
    username: str
    already: bool
    erased_at: Any
    pseudonyms: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def summary(self) -> str:
        if self.already:
            return f"Already erased on {self.erased_at:%Y-%m-%d %H:%M} UTC; nothing to do."
        held = "; ".join(self.pseudonyms) or "in no study"
        parts = ", ".join(f"{count} {kind}" for kind, count in self.counts.items())
        return f"Erased ({held}): {parts}."


def erasure_refusal(user: User) -> str | None:
    """Why ``user``'s identity may not be erased here, or None when it may.

    Administrators hold the unblinding key and run the erasures themselves; a study lead is
    named by the study it leads. Either first becomes an ordinary account (the Django admin
    takes the staff flag off; another lead takes the study over), then can be erased.
    """
    if user.is_staff or user.is_superuser:
        return (
            "This is an administrator account: take its administrator rights off in the "
            "Django admin first, then erase it."
        )
    if user.led_studies.exists():
        return (
            "This account leads a study, which names it as its lead: erasure is for raters, "
            "adjudicators and coordinators; leads are not erased."
        )
    return None


def _mention_pattern(terms: list[str]) -> re.Pattern | None:
    """A pattern that finds any of ``terms`` as a whole word, whatever the case."""
    terms = sorted({t.strip() for t in terms if len(t.strip()) >= MIN_MENTION_CHARS}, key=len)
    if not terms:
        return None
    alternatives = "|".join(re.escape(t) for t in reversed(terms))
    # Username characters (letters, digits and @.+-_) around a match make it part of
    # another word or address, not a mention.
    return re.compile(rf"(?<![\w.@+-])(?:{alternatives})(?![\w@+-]|\.\w)", re.IGNORECASE)


def _redact(value, pattern: re.Pattern):
    """``value`` (text, or JSON made of dicts, lists and text) with every mention replaced."""
    if isinstance(value, str):
        return pattern.sub(REDACTED, value)
    if isinstance(value, list):
        return [_redact(item, pattern) for item in value]
    if isinstance(value, dict):
        return {key: _redact(item, pattern) for key, item in value.items()}
    return value


def _mentions(queryset, fields: list[str], terms: list[str]):
    """The rows of ``queryset`` whose text ``fields`` (JSON ones cast to text) contain a term."""
    query = Q()
    for name in fields:
        cast = f"_{name}_text"
        queryset = queryset.annotate(**{cast: Cast(name, TextField())})
        for term in terms:
            query |= Q(**{f"{cast}__icontains": term})
    return queryset.filter(query) if query else queryset.none()


def _scrub_events(pattern: re.Pattern, terms: list[str]) -> int:
    changed = 0
    for event in _mentions(StudyEvent.objects.all(), ["reason", "detail"], terms).order_by("pk"):
        reason, detail = _redact(event.reason, pattern), _redact(event.detail, pattern)
        if (reason, detail) != (event.reason, event.detail):
            StudyEvent.objects.filter(pk=event.pk).update(reason=reason, detail=detail)
            changed += 1
    return changed


ERASED_EMAIL = "erased@erased.invalid"


def _scrub_invitations(user: User, pattern: re.Pattern | None, terms: list[str]) -> int:
    """The person's own invitations lose their name and note; others' notes, the mentions.

    A personal invitation keeps a (redacted) name, so it stays personal; a link the person
    used stays a link."""
    own = Q(invitee=user) | Q(used_by=user) | Q(invitee_name__iexact=user.get_username())
    if user.email:
        own |= Q(invitee_email__iexact=user.email)
    Invitation.objects.filter(own).exclude(invitee_name="").update(invitee_name=REDACTED)
    # An e-mailed invitation stays bound to an address, one that reaches no one.
    Invitation.objects.filter(own).exclude(invitee_email="").update(invitee_email=ERASED_EMAIL)
    changed = Invitation.objects.filter(own).update(note="")
    if pattern is not None:
        for invitation in _mentions(Invitation.objects.exclude(own), ["note"], terms):
            note = _redact(invitation.note, pattern)
            if note != invitation.note:
                Invitation.objects.filter(pk=invitation.pk).update(note=note)
                changed += 1
    return changed


def _scrub_participant_links(pattern: re.Pattern, terms: list[str]) -> int:
    """A link's name is typed by a coordinator ("Prolific, for anna@example.org")."""
    changed = 0
    for link in _mentions(ParticipantLink.objects.all(), ["name"], terms):
        name = _redact(link.name, pattern)[:100]
        if name != link.name:
            ParticipantLink.objects.filter(pk=link.pk).update(name=name)
            changed += 1
    return changed


def _end_sessions(user: User) -> int:
    """Delete the person's sessions. The session table is keyed by a random key, so each
    live session is read to find whose it is; any other session engine is ended all the
    same, since a changed password and an inactive account end every session's sign-in."""
    mine = [
        session.session_key
        for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator()
        if str(session.get_decoded().get("_auth_user_id")) == str(user.pk)
    ]
    deleted, _ = Session.objects.filter(session_key__in=mine).delete()
    return deleted


def _scrub_admin_log(user: User, pattern: re.Pattern | None, new_name: str) -> int:
    """Django admin's log names the account in each entry about it."""
    account = ContentType.objects.get_for_model(get_user_model())
    changed = LogEntry.objects.filter(content_type=account, object_id=str(user.pk)).update(
        object_repr=new_name, change_message=""
    )
    if pattern is not None:
        others = LogEntry.objects.exclude(content_type=account, object_id=str(user.pk))
        for entry in others.filter(object_repr__icontains=user.get_username()):
            LogEntry.objects.filter(pk=entry.pk).update(
                object_repr=_redact(entry.object_repr, pattern)[:200]
            )
            changed += 1
    return changed


def _unused_name() -> str:
    accounts = get_user_model()
    while True:
        name = ERASED_PREFIX + secrets.token_hex(6)
        if not accounts.objects.filter(username=name).exists():
            return name


@transaction.atomic
def identity_erase(
    *, user: User, reason: str, by: User | None = None, automatic: bool = False
) -> ErasureResult:
    """Erase ``user``'s identifying data everywhere; a second call finds it done and says so.

    The account row is locked first, so two erasures of one person (the beat task and an
    administrator, two clicks) run one after the other, and the second finds the first's
    record.
    """
    reason = reason_text(
        reason,
        limit=MAX_REASON_CHARS,
        missing="Give the reason for the erasure (e.g. the person's request and its date).",
        error=ErasureError,
    )
    user = user_lock(user.pk)
    done = IdentityErasure.objects.filter(user=user).order_by("erased_at").first()
    if done is not None:
        return ErasureResult(
            user_id=user.pk,
            username=user.get_username(),
            already=True,
            erased_at=done.erased_at,
            pseudonyms=list(done.detail.get("pseudonyms", [])),
        )
    refusal = erasure_refusal(user)
    if refusal:
        raise ErasureError(refusal)

    # The full name, not a first name alone: another "Anna" in the trail is someone else.
    terms = [user.get_username(), user.email, user.get_full_name()]
    # A rater imported from elsewhere is known by the name their file gave them.
    terms += list(
        Membership.objects.filter(user=user)
        .exclude(external_name="")
        .values_list("external_name", flat=True)
    )
    # A crowd platform's ids for the person, as a coordinator may have pasted them; not the
    # platform's study id, which every participant of that study shares.
    for ids in Participant.objects.filter(membership__user=user).values_list(
        "external_id", "vendor_session_id"
    ):
        terms += list(ids)
    terms = [t for t in terms if len(t.strip()) >= MIN_MENTION_CHARS]
    pattern = _mention_pattern(terms)
    # The reason is kept: it must not name the person it is about either.
    reason = _redact(reason, pattern) if pattern else reason
    new_name = _unused_name()
    memberships = list(Membership.objects.filter(user=user).select_related("study").order_by("pk"))
    studies = {membership.study_id for membership in memberships}
    counts = {
        "sessions": _end_sessions(user),
        "API tokens": ApiToken.objects.filter(user=user, revoked_at=None).update(
            revoked_at=timezone.now()
        ),
        "invitations": _scrub_invitations(user, pattern, terms),
        "audit trail entries": _scrub_events(pattern, terms) if pattern else 0,
        "admin log entries": _scrub_admin_log(user, pattern, new_name),
        "participant link names": _scrub_participant_links(pattern, terms) if pattern else 0,
        **(
            own_text_scrub(user=user, redact=lambda value: _redact(value, pattern))
            if pattern
            else {}
        ),
        # A file prepared before (a worksheet, the long table, the bundle) may hold what
        # was just redacted, and is downloadable for a day: deleted, prepared anew on asking.
        "prepared export files": job_files_remove(jobs=Job.objects.filter(study_id__in=studies)),
        "imported names": Membership.objects.filter(user=user)
        .exclude(external_name="")
        .update(external_name=""),
        # A crowd platform's ids for the person (issue 29): identity like a username.
        "participant ids": Participant.objects.filter(membership__user=user).update(
            external_id="", vendor_study_id="", vendor_session_id=""
        ),
    }
    ApiToken.objects.filter(user=user).update(name=REDACTED)
    user.username = new_name
    user.first_name = user.last_name = user.email = ""
    user.set_unusable_password()
    user.is_active = False
    user.last_login = None
    user.save(
        update_fields=["username", "first_name", "last_name", "email", "password", "is_active"]
        + ["last_login"]
    )
    counts = {"account": 1, **counts}
    pseudonyms = [held_pseudonym(m) for m in memberships]
    now = timezone.now()
    IdentityErasure.objects.create(
        user=user,
        automatic=automatic,
        reason=reason,
        erased_by=by if getattr(by, "pk", None) else None,
        detail={"counts": counts, "pseudonyms": pseudonyms, "studies": len(memberships)},
        erased_at=now,
    )
    for membership in memberships:
        # The study's trail names the person by their pseudonym in it, never by name.
        study_event_record(
            study_id=membership.study_id,
            actor=by,
            kind=StudyEvent.Kind.IDENTITY_ERASED,
            membership=membership,
            reason=reason,
            automatic=automatic,
            pseudonym=membership.pseudonym,
        )
    return ErasureResult(
        user_id=user.pk,
        username=new_name,
        already=False,
        erased_at=now,
        pseudonyms=pseudonyms,
        counts=counts,
    )


def identities_purge(
    *, now=None, dry_run: bool = False
) -> list[tuple[list[str], ErasureResult | None]]:
    """Erase everyone whose retention period has ended (``studies.retention``); per person,
    the pseudonyms they held and the result (None on a dry run)."""
    done: list[tuple[list[str], ErasureResult | None]] = []
    for user, pseudonyms in users_due_for_erasure(now=now):
        if dry_run:
            done.append((pseudonyms, None))
            continue
        try:
            result = identity_erase(user=user, reason=RETENTION_REASON, automatic=True)
        except ErasureError:
            # Became a lead or an administrator since it was selected: kept, and listed again.
            continue
        done.append((pseudonyms, result))
    return done
