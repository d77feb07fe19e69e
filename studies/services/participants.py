"""Participant links: raters who arrive from a crowd platform (Prolific, MTurk, ...).

The lead makes a link per vendor study; the vendor sends each participant to it with their
ids in URL parameters. The first visit with a new participant id makes an account with no
password, a rater membership (the next pseudonym, under the same study lock as an
invitation) and the participant record, and the browser is signed in as it: the session is
the credential. The rules (session binding, quota, closing, linked studies) are written
out in ``docs/admin.md``, "Raters from a crowd platform".
"""

import re
import secrets
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from urllib.parse import urlsplit

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from studies.errors import ApplicationError
from studies.events import study_event_record
from studies.locks import membership_lock, study_lock
from studies.models import Membership, Participant, ParticipantLink, Study, StudyEvent
from studies.participant_batch import batch_steps

from .membership import membership_add

# (participant, study, session) URL parameter names of each preset.
PRESETS: dict[str, tuple[str, str, str]] = {
    ParticipantLink.Preset.PROLIFIC: ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"),
    # MTurk's assignment id is one worker's one acceptance of the HIT: their session.
    ParticipantLink.Preset.MTURK: ("workerId", "hitId", "assignmentId"),
}
# What MTurk sends while a worker only previews the HIT: not a session to bind.
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
# Vendor ids: letters, digits and a few separators (Prolific's are 24 hex digits, MTurk's
# upper-case letters and digits); anything else is refused rather than stored, and none
# starts like a spreadsheet formula (the payments file writes them as they are).
VENDOR_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,99}$")
PARAM_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,40}$")
CODE = re.compile(r"^[A-Za-z0-9_-]{1,100}$")
CURRENCY = re.compile(r"^[A-Z]{3}$")
MAX_PARTICIPANTS = 100_000
MAX_TIMEOUT_MINUTES = 24 * 60
MAX_BONUS = Decimal("10000")
MAX_BATCH = 10_000
# What the lead sets on a link (the page's form, the API's body).
LINK_FIELDS = (
    "name", "preset", "participant_param", "study_param", "session_param", "completion_code",
    "completion_url", "screened_out_code", "screened_out_url", "max_participants",
    "timeout_minutes", "cases_per_participant", "bonus_rule", "bonus_amount",
    "bonus_currency", "linked_studies",
)  # fmt: skip
FINISHED = (
    Participant.Status.SCREENED_OUT,
    Participant.Status.COMPLETED,
    Participant.Status.RETURNED,
    Participant.Status.TIMED_OUT,
)


class ParticipantError(ApplicationError):
    """The link cannot be used or saved; the message says why, ``reason`` in a word."""

    def __init__(self, message: str, *, reason: str = "invalid"):
        super().__init__(message)
        self.reason = reason


# --- The lead's links ---------------------------------------------------------------------


def _text(values: dict, key: str, *, limit: int, required: bool = False, label: str) -> str:
    value = str(values.get(key) or "").strip()
    if "\x00" in value:
        raise ParticipantError(f"{label} contains a NUL character (\\x00); remove it.")
    if len(value) > limit:
        raise ParticipantError(f"{label} is limited to {limit} characters.")
    if required and not value:
        raise ParticipantError(f"Enter {label.lower()}.")
    return value


def _url(values: dict, key: str, *, label: str) -> str:
    """An http or https address the lead typed: the only places participants are sent."""
    value = _text(values, key, limit=500, label=label)
    if not value:
        return ""
    try:
        URLValidator(schemes=["http", "https"])(value)
    except ValidationError:
        raise ParticipantError(f"{label} must be a full http:// or https:// address.") from None
    if urlsplit(value).scheme not in ("http", "https"):
        raise ParticipantError(f"{label} must be a full http:// or https:// address.")
    return value


def _whole(values: dict, key: str, *, low: int, high: int, default: int, label: str) -> int:
    raw = values.get(key)
    if raw in (None, ""):
        return default
    try:
        number = int(str(raw).strip())
    except ValueError:
        raise ParticipantError(f"{label} must be a whole number.") from None
    if not low <= number <= high:
        raise ParticipantError(f"{label} must be between {low:,} and {high:,}.")
    return number


def _params(values: dict, preset: str) -> tuple[str, str, str]:
    if preset in PRESETS:
        return PRESETS[preset]
    participant_param = _text(
        values, "participant_param", limit=40, required=True, label="The participant parameter"
    )
    study_param = _text(values, "study_param", limit=40, label="The study parameter")
    session_param = _text(values, "session_param", limit=40, label="The session parameter")
    names = [n for n in (participant_param, study_param, session_param) if n]
    if any(not PARAM_NAME.match(n) for n in names) or len(set(names)) != len(names):
        raise ParticipantError("Parameter names are letters, digits, '.', '_' or '-', and differ.")
    return participant_param, study_param, session_param


def _codes(values: dict) -> tuple[str, str]:
    completion = _text(values, "completion_code", limit=100, required=True,
                       label="The completion code")  # fmt: skip
    screened_out = _text(values, "screened_out_code", limit=100, label="The screened-out code")
    for code in (completion, screened_out):
        if code and not CODE.match(code):
            raise ParticipantError("Codes are letters, digits, '_' or '-'.")
    if screened_out and screened_out == completion:
        raise ParticipantError("The screened-out code must differ from the completion code.")
    return completion, screened_out


def _bonus(values: dict) -> tuple[str, Decimal, str]:
    rule = str(values.get("bonus_rule") or ParticipantLink.BonusRule.NONE)
    if rule not in ParticipantLink.BonusRule.values:
        raise ParticipantError("Choose no bonus, a bonus per case or one per hour.")
    try:
        amount = Decimal(str(values.get("bonus_amount") or "0").strip())
    except InvalidOperation:
        raise ParticipantError("The bonus amount must be a number, e.g. 0.10.") from None
    if not amount.is_finite() or not Decimal("0") <= amount <= MAX_BONUS:
        raise ParticipantError(f"The bonus amount must be between 0 and {MAX_BONUS}.")
    if amount != amount.quantize(Decimal("0.01")):
        raise ParticipantError("The bonus amount has at most two decimals.")
    currency = str(values.get("bonus_currency") or "GBP").strip().upper()
    if not CURRENCY.match(currency):
        raise ParticipantError("The currency is a three-letter code, e.g. GBP or USD.")
    return rule, amount, currency


def _linked(values: dict, study: Study, actor: User | None) -> list[Study]:
    """The studies named, each one the actor coordinates: a link refuses the linked
    studies' participants and theirs refuse its own, so no one links a study of others
    (and a study the actor has no part in is "not found", as everywhere)."""
    linked = values.get("linked_studies") or []
    if isinstance(linked, str):
        linked = [s for s in re.split(r"[\s,]+", linked) if s]
    if not isinstance(linked, list) or len(linked) > 20:
        raise ParticipantError("Link at most 20 studies.")
    slugs = {str(s)[:100] for s in linked} - {study.slug}
    found = Study.objects.filter(slug__in=slugs)
    if not (actor is not None and actor.is_staff):
        found = found.filter(
            Q(lead=actor)
            | Q(memberships__user=actor, memberships__role=Membership.Role.COORDINATOR)
        )
    found = list(found.distinct())
    if len(found) != len(slugs):
        raise ParticipantError(
            "A linked study was not found; give the slugs of studies you coordinate."
        )
    return found


def participant_link_clean(*, study: Study, values: dict, actor: User | None = None) -> dict:
    """The link's fields from what the lead entered (the page's form, the API's body), or
    ``ParticipantError`` naming the first problem."""
    preset = str(values.get("preset") or ParticipantLink.Preset.PROLIFIC)
    if preset not in ParticipantLink.Preset.values:
        raise ParticipantError("Choose Prolific, MTurk or custom.")
    participant_param, study_param, session_param = _params(values, preset)
    completion_code, screened_out_code = _codes(values)
    rule, amount, currency = _bonus(values)
    maximum = _whole(values, "max_participants", low=1, high=MAX_PARTICIPANTS, default=0,
                     label="The maximum number of participants")  # fmt: skip
    if not maximum:
        raise ParticipantError("Enter the maximum number of participants.")
    batch = _whole(values, "cases_per_participant", low=1, high=MAX_BATCH, default=0,
                   label="The cases per participant")  # fmt: skip
    return {
        "name": _text(values, "name", limit=100, required=True, label="A name"),
        "preset": preset,
        "participant_param": participant_param,
        "study_param": study_param,
        "session_param": session_param,
        "completion_code": completion_code,
        "completion_url": _url(values, "completion_url", label="The completion URL"),
        "screened_out_code": screened_out_code,
        "screened_out_url": _url(values, "screened_out_url", label="The screened-out URL"),
        "max_participants": maximum,
        "timeout_minutes": _whole(
            values,
            "timeout_minutes",
            low=5,
            high=MAX_TIMEOUT_MINUTES,
            default=60,
            label="The time-out",
        ),  # fmt: skip
        # None: the study's design plans the participants' cases like any rater's.
        "cases_per_participant": batch or None,
        "bonus_rule": rule,
        "bonus_amount": amount,
        "bonus_currency": currency,
        "linked_studies": _linked(values, study, actor),
    }


@transaction.atomic
def participant_link_save(
    *, study: Study, actor: User, values: dict, link: ParticipantLink | None = None
) -> ParticipantLink:
    """Create a link (with a new unguessable token) or change one; the lead's action."""
    cleaned = participant_link_clean(study=study, values=values, actor=actor)
    linked = cleaned.pop("linked_studies")
    study = study_lock(study.pk, exclusive=True)
    if study.is_closed:
        raise ParticipantError("The study is closed; no one can join it now.", reason="closed")
    if link is None:
        link = ParticipantLink(study=study, created_by=actor, token=secrets.token_urlsafe(32))
    else:
        link = ParticipantLink.objects.select_for_update(of=("self",)).get(pk=link.pk)
    for field, value in cleaned.items():
        setattr(link, field, value)
    link.save()
    link.linked_studies.set(linked)
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.PARTICIPANT_LINK_SAVED,
        link=link.name,
        max_participants=link.max_participants,
        timeout_minutes=link.timeout_minutes,
        cases_per_participant=link.cases_per_participant,
    )
    return link


@transaction.atomic
def participant_link_close(*, link: ParticipantLink, actor: User) -> ParticipantLink:
    """Stop new arrivals; participants who started can still finish. Closing twice is once."""
    # The study first (a join holds it exclusively while it counts the link's quota).
    study_lock(link.study_id, exclusive=True)
    link = ParticipantLink.objects.select_for_update(of=("self",)).get(pk=link.pk)
    if link.closed_at is None:
        link.closed_at = timezone.now()
        link.save(update_fields=["closed_at"])
        study_event_record(
            study_id=link.study_id,
            actor=actor,
            kind=StudyEvent.Kind.PARTICIPANT_LINK_CLOSED,
            link=link.name,
        )
    return link


# --- Joining and resuming -----------------------------------------------------------------


@dataclass(frozen=True)
class JoinOutcome:
    participant: Participant
    user: User
    # A later visit that continues where the participant stopped.
    resumed: bool


def _vendor_id(value, *, label: str, required: bool) -> str:
    value = str(value or "").strip()
    if not value:
        if required:
            raise ParticipantError(
                f"The link is missing your {label}. Open the study again from the platform "
                "that sent you here.",
                reason="missing",
            )
        return ""
    if not VENDOR_ID.match(value):
        raise ParticipantError(
            f"The {label} in the link is not one this study can use. Open the study again "
            "from the platform that sent you here.",
            reason="malformed",
        )
    return value


def participant_link_for_token(*, token: str) -> ParticipantLink:
    """The link a URL names, or an error (the page's 404) that says nothing more."""
    link = (
        ParticipantLink.objects.select_related("study").filter(token=str(token)[:64]).first()
        if token
        else None
    )
    if link is None:
        raise ParticipantError("This study link is not valid.", reason="invalid")
    return link


LINKED_REFUSAL = (
    "You have already taken part in a related study, so you cannot take part in this one. "
    "Please return it on the platform that sent you here."
)


def participant_join(
    *, link: ParticipantLink, params, signed_in: User | None = None
) -> JoinOutcome:
    """Join through the link, or resume: the ids come from the vendor's URL parameters.

    One external id is one participant per study, whoever asks and however many times at
    once: the study is locked exclusively before the id is looked up again and the row
    inserted, and the unique constraint stands behind the lock.
    """
    if signed_in is not None and _reads_texts_by_system(signed_in, link.study_id):
        # A browser signed in as someone who reads the texts by system would be signed in
        # as a new rater (issue 38). A private window gets round this: it stops the
        # obvious route, not a second identity (docs/blinding.md says so).
        raise ParticipantError(
            "You are signed in as an administrator or a coordinator of this study, who sees "
            "which system wrote each response: a participant link is for participants. "
            "Sign out to test the link as a participant would.",
            reason="coordinator",
        )
    external_id = _vendor_id(params.get(link.participant_param), label="participant id",
                             required=True)  # fmt: skip
    session = _vendor_id(params.get(link.session_param) if link.session_param else "",
                         label="session id", required=bool(link.session_param))  # fmt: skip
    if link.preset == ParticipantLink.Preset.MTURK and session == MTURK_PREVIEW:
        raise ParticipantError(
            "Accept the HIT first; the study starts once you have accepted it.", reason="preview"
        )
    vendor_study = _vendor_id(params.get(link.study_param) if link.study_param else "",
                              label="study id", required=False)  # fmt: skip
    existing = _existing(link.study_id, external_id)
    if existing is None and _in_linked_study(link, external_id):
        _refusal_record(link, None, "linked_study")
        raise ParticipantError(LINKED_REFUSAL, reason="linked")
    if existing is None:
        try:
            outcome = _join_new(link, external_id, session, vendor_study)
        except ParticipantError as exc:
            refusal = {"no_places": "no_places", "linked": "linked_study"}.get(exc.reason)
            if refusal:
                _refusal_record(link, None, refusal)
            raise
        except IntegrityError:
            # Should the lock ever be bypassed, the constraint keeps the id to one participant.
            existing = _existing(link.study_id, external_id)
            if existing is None:
                raise
        else:
            if outcome is not None:
                return outcome
            existing = _existing(link.study_id, external_id)
    assert existing is not None
    return _resume(link, existing, session, signed_in)


def _reads_texts_by_system(user: User, study_id: int) -> bool:
    return (
        user.is_staff
        or Study.objects.filter(pk=study_id, lead=user).exists()
        or Membership.objects.filter(
            study_id=study_id, user=user, role=Membership.Role.COORDINATOR
        ).exists()
    )


def _linked_study_ids(link: ParticipantLink):
    """The studies linked to this link's study, either way round: named by this link, or
    with a link of their own that names this link's study (a query, not yet run)."""
    pairs = ParticipantLink.linked_studies.through.objects
    named = pairs.filter(participantlink=link).values_list("study_id", flat=True)
    naming = pairs.filter(study_id=link.study_id).values_list("participantlink__study_id",
                                                              flat=True)  # fmt: skip
    return named.union(naming)


def _in_linked_study(link: ParticipantLink, external_id: str) -> bool:
    """Whether the id took part in a study linked to this one, either way round."""
    return (
        Participant.objects.filter(study__in=list(_linked_study_ids(link)))
        .filter(external_id=external_id)
        .exclude(study_id=link.study_id)
        .exists()
    )


def _study_and_linked_lock(link: ParticipantLink) -> Study:
    """This link's study and every study linked to it, locked exclusively in the order of
    their ids (every join takes its group's locks in that one order, so two joins cannot
    wait on each other): one id joining two linked arms at once joins one of them."""
    ids = sorted({link.study_id, *_linked_study_ids(link)})
    locked = {study_id: study_lock(study_id, exclusive=True) for study_id in ids}
    return locked[link.study_id]


def _existing(study_id: int, external_id: str) -> Participant | None:
    return (
        Participant.objects.select_related("membership__user", "link")
        .filter(study_id=study_id, external_id=external_id)
        .first()
    )


@transaction.atomic
def _join_new(
    link: ParticipantLink, external_id: str, session: str, vendor_study: str
) -> JoinOutcome | None:
    """A new participant, or None when the id joined while this request waited."""
    # Joins to one study run one at a time (membership_add locks it the same way): the
    # quota counted here and the pseudonym picked there cannot be read twice.
    study = _study_and_linked_lock(link)
    if Participant.objects.filter(study=study, external_id=external_id).exists():
        return None
    link = ParticipantLink.objects.get(pk=link.pk)
    if _in_linked_study(link, external_id):
        # The same id joined a linked arm while this request waited for the locks.
        raise ParticipantError(LINKED_REFUSAL, reason="linked")
    if study.is_closed:
        raise ParticipantError("This study has closed; no one can join it now.", reason="closed")
    if study.is_draft:
        # Refused before any account is made: a draft has nothing to rate and no code.
        raise ParticipantError(
            "This study has not started yet, so it cannot take participants. Please return "
            "it on the platform that sent you here, or come back once it is open.",
            reason="not_started",
        )
    if link.closed_at is not None:
        raise ParticipantError(
            "This study is not taking new participants. If you started it already, open "
            "it again from the platform that sent you here to finish.",
            reason="link_closed",
        )
    # The places taken: those taking part and those who completed. Someone screened out,
    # who returned the study or timed out frees their place, as on the vendor's side.
    taken = link.participants.filter(
        status__in=(Participant.Status.STARTED, Participant.Status.COMPLETED)
    ).count()
    if taken >= link.max_participants:
        raise ParticipantError(
            "This study has all the participants it needs. Please return it on the "
            "platform that sent you here; thank you for your interest.",
            reason="full",
        )
    # A batch link: refused before any account is made when no sample case has a place
    # left (the study has the ratings it needs), and so not counted in the quota.
    batch = link.cases_per_participant
    if batch and not batch_steps().room(study=study):
        raise ParticipantError(
            "This study has all the ratings it needs, so there is nothing left for you to "
            "rate. Please return it on the platform that sent you here; thank you for your "
            "interest.",
            reason="no_places",
        )
    accounts = get_user_model()
    user = accounts(username=f"participant-{secrets.token_hex(8)}")
    user.set_unusable_password()
    user.save()
    membership = membership_add(
        study=study,
        user=user,
        role=Membership.Role.RATER,
        joined_via=Membership.JoinedVia.PARTICIPANT_LINK,
        joined_by=link.created_by,
    )
    participant = Participant.objects.create(
        link=link,
        study=study,
        membership=membership,
        external_id=external_id,
        vendor_study_id=vendor_study,
        vendor_session_id=session,
    )
    if batch:
        # Under the study lock held since the count above: no other join, Assign or
        # release can take the places between the count and the writes.
        batch_steps().give(study=study, rater=membership, size=batch)
    study_event_record(
        study=study,
        actor=user,
        kind=StudyEvent.Kind.PARTICIPANT_JOINED,
        membership=membership,
        link=link.name,
    )
    return JoinOutcome(participant=participant, user=user, resumed=False)


def _resume(
    link: ParticipantLink, participant: Participant, session: str, signed_in: User | None
) -> JoinOutcome:
    """Session binding: the vendor's session id must match the first visit's (any device);
    a link with no session parameter resumes only in the browser already signed in."""
    user = participant.membership.user
    if link.session_param:
        bound = bool(session) and secrets.compare_digest(session, participant.vendor_session_id)
    else:
        bound = signed_in is not None and signed_in.pk == user.pk
    if not bound or not user.is_active:
        _refusal_record(link, participant.membership, "session")
        raise ParticipantError(
            "This participant id has already started this study in another session, so it "
            "cannot be continued from this link. Open the study from your own page on the "
            "platform that sent you here; if that is what you did, contact the researchers.",
            reason="session",
        )
    return JoinOutcome(participant=participant, user=user, resumed=True)


def _refusal_record(link: ParticipantLink, membership: Membership | None, why: str) -> None:
    """Kept even though the visit is refused: its own transaction, naming no vendor id."""
    with transaction.atomic():
        study_event_record(
            study_id=link.study_id,
            actor=None,
            kind=StudyEvent.Kind.PARTICIPANT_REFUSED,
            membership=membership,
            link=link.name,
            why=why,
        )


# --- How a participant's part ends ------------------------------------------------------


def participant_finish(*, membership: Membership, status: str, reason: str = "") -> Participant:
    """Record how the participant's part ended; the first ending stands (idempotent).

    Called inside the caller's transaction, after the membership is locked (the order
    of ``studies.locks``: membership, then its participant row).
    """
    if status not in FINISHED:
        raise ParticipantError("Unknown ending.")
    participant = Participant.objects.select_for_update(of=("self",)).get(membership=membership)
    if participant.status != Participant.Status.STARTED:
        return participant
    participant.status = status
    participant.screened_reason = reason[:20]
    participant.finished_at = timezone.now()
    participant.save(update_fields=["status", "screened_reason", "finished_at"])
    kinds: dict[str, StudyEvent.Kind] = {
        Participant.Status.SCREENED_OUT: StudyEvent.Kind.PARTICIPANT_SCREENED_OUT,
        Participant.Status.COMPLETED: StudyEvent.Kind.PARTICIPANT_COMPLETED,
        Participant.Status.TIMED_OUT: StudyEvent.Kind.PARTICIPANT_TIMED_OUT,
        Participant.Status.RETURNED: StudyEvent.Kind.RATER_WITHDREW,
    }
    kind = kinds[status]
    if status != Participant.Status.RETURNED:  # the withdrawal records itself
        study_event_record(
            study_id=membership.study_id,
            actor=None,
            kind=kind,
            membership=membership,
            reason=reason,
        )
    return participant


@transaction.atomic
def participant_returned(*, membership: Membership) -> None:
    """A participant withdrew: the vendor calls that "returned"."""
    locked = membership_lock(membership.pk, exclusive=True)
    if Participant.objects.filter(membership=locked).exists():
        participant_finish(membership=locked, status=Participant.Status.RETURNED)
