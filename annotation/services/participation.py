"""Writes about a rater's part in a study: consent, end-of-study feedback, withdrawal.

Each write also leaves a row in the study's audit trail (``StudyEvent``).
"""

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotation.models import (
    Assignment,
    ConsentRecord,
    OnboardingSettings,
    Rating,
    RatingRevision,
    StudyFeedback,
    Withdrawal,
)
from annotation.selectors import onboarding_settings
from studies.errors import ApplicationError
from studies.events import study_event_record
from studies.locks import membership_lock
from studies.models import Membership, StudyEvent
from studies.selectors import information_sheet_additions
from studies.services.participants import participant_returned
from studies.signals import analysis_inputs_announce

from .profile import profile_delete

MAX_TEXT_LENGTH = 5000


class ParticipationError(ApplicationError):
    """The request cannot be recorded; the message says why."""


def event_record(
    *,
    membership: Membership,
    kind: StudyEvent.Kind,
    reason: str = "",
    detail: dict | None = None,
    actor: User | None = None,
) -> StudyEvent:
    """Record a rater's step (consent, feedback, withdrawal, qualification); by the rater
    unless ``actor`` says who recorded it for them."""
    return study_event_record(
        study_id=membership.study_id,
        actor=actor or membership.user,
        kind=kind,
        membership=membership,
        reason=reason,
        **(detail or {}),
    )


def _text(value, *, field: str) -> str:
    text = str(value or "").strip()
    if len(text) > MAX_TEXT_LENGTH:
        raise ParticipationError(f"{field} is limited to {MAX_TEXT_LENGTH} characters.")
    return text


@transaction.atomic
def consent_record(
    *, rater: Membership, agreed: bool, prior_knowledge: bool | None, disclosure: str = ""
) -> ConsentRecord:
    """Record consent to the study's current information sheet, with the disclosure answer.

    Consenting again to the same version changes nothing: the first record stands, and
    the repeat (a double click, a second tab) is answered with it.
    """
    # Consents of one rater are recorded one at a time, so two at once cannot both find
    # no record and both create one.
    rater = membership_lock(rater.pk, exclusive=True)
    study = rater.study
    if rater.status == Membership.Status.WITHDRAWN:
        raise ParticipationError("You have withdrawn from this study.")
    if study.consent_text.strip() and not agreed:
        raise ParticipationError("Tick the box to confirm you agree to take part.")
    disclosure = _text(disclosure, field="Your answer")
    if study.disclosure_question.strip():
        if prior_knowledge is None:
            raise ParticipationError("Answer the question about prior knowledge.")
        if prior_knowledge and not disclosure:
            raise ParticipationError("Describe your prior knowledge of the research.")
    existing = ConsentRecord.objects.filter(rater=rater, version=study.consent_version).first()
    if existing is not None:
        return existing
    # What the rater read: the sheet, and what the study's welfare settings add to it.
    additions = information_sheet_additions(study=study)
    sheet = "\n\n".join([study.consent_text.strip(), *(f"- {line}" for line in additions)])
    record = ConsentRecord.objects.create(
        rater=rater,
        version=study.consent_version,
        consent_text=sheet.strip(),
        disclosure_question=study.disclosure_question,
        prior_knowledge=prior_knowledge,
        disclosure=disclosure if prior_knowledge else "",
        agreed_at=timezone.now(),
    )
    event_record(
        membership=rater,
        kind=StudyEvent.Kind.RATER_CONSENTED,
        detail={"consent_version": record.version, "prior_knowledge": prior_knowledge},
    )
    return record


@transaction.atomic
def feedback_submit(
    *, rater: Membership, dimensions: dict, suggestions: str, patterns: str, notes: str
) -> StudyFeedback:
    """Store the end-of-study form; sending it again replaces the earlier answers."""
    keys = set(rater.study.rubric.dimensions.values_list("key", flat=True))
    clarity = StudyFeedback.Clarity.values
    cleaned = {}
    for key, answer in (dimensions or {}).items():
        if key not in keys or not isinstance(answer, dict):
            continue
        value = str(answer.get("clarity") or "")
        if value and value not in clarity:
            raise ParticipationError("Choose clear, mostly clear or unclear for each dimension.")
        cleaned[key] = {
            "clarity": value,
            "comment": _text(answer.get("comment"), field="A comment"),
        }
    now = timezone.now()
    fields = {
        "dimensions": cleaned,
        "suggestions": _text(suggestions, field="Suggestions"),
        "patterns": _text(patterns, field="Pattern observations"),
        "notes": _text(notes, field="Notes"),
        "updated_at": now,
    }
    feedback, created = StudyFeedback.objects.update_or_create(
        rater=rater,
        defaults=fields,
        create_defaults={**fields, "submitted_at": now},
    )
    event_record(membership=rater, kind=StudyEvent.Kind.RATER_FEEDBACK, detail={"first": created})
    return feedback


def ratings_withdraw(*, rater: Membership) -> int:
    """Delete a withdrawing rater's submitted ratings, their revision history and their
    drafts, as the study's withdrawal policy says; returns the number of ratings deleted.

    Only ``participation.withdrawal_record`` calls it, in its transaction, once it has
    locked the membership exclusively and applied the policy: no rating of this rater can
    be written meanwhile, and a deletion is never done without a recorded withdrawal.
    """
    assignments = Assignment.objects.filter(rater=rater)
    case_ids = list(
        Rating.objects.filter(assignment__in=assignments)
        .values_list("assignment__test_case_id", flat=True)
        .distinct()
    )
    deleted, _ = Rating.objects.filter(assignment__in=assignments).delete()
    RatingRevision.objects.filter(assignment__in=assignments).delete()
    skipped = Q(status=Assignment.Status.SKIPPED)
    assignments.exclude(skipped).update(
        draft={}, case_scores={}, confidence="", notes="", status=Assignment.Status.TODO,
        submitted_at=None,
    )  # fmt: skip
    # A skip stays a skip (the case went to someone else); the rater's words go.
    assignments.filter(skipped).update(draft={}, skip_note="")
    if deleted:
        analysis_inputs_announce(study_id=rater.study_id, reason="withdrawal", case_ids=case_ids)
    return deleted


@transaction.atomic
def withdrawal_record(
    *,
    rater: Membership,
    data: str | None,
    reason: str = "",
    actor: User | None = None,
) -> Withdrawal:
    """Withdraw a rater from the study, doing with their data what the study's consent says.

    When the data are deleted, the rater's submitted ratings, their revision history, their
    drafts and their profile go; the withdrawal itself and the audit trail stay. ``actor`` is an
    administrator recording a withdrawal the rater asked for elsewhere (by default the
    rater); ``data`` is the rater's choice, used only where the study lets them choose.
    """
    # The membership alone (a rating write of this rater waits, then reads the new status),
    # then its assignments: the order of ``studies.locks``.
    locked = membership_lock(rater.pk, exclusive=True)
    if locked.role != Membership.Role.RATER:
        # A coordinator leaves a study by losing the role, not by a rater's withdrawal.
        raise ParticipationError("Only a rater can withdraw from a study.")
    if locked.status == Membership.Status.WITHDRAWN:
        raise ParticipationError("You have already withdrawn from this study.")
    policy = onboarding_settings(study=locked.study).withdrawal_data
    chosen = policy == OnboardingSettings.WithdrawalData.RATER_CHOOSES
    if chosen:
        if data not in Withdrawal.Data.values:
            raise ParticipationError("Choose what should happen to your ratings.")
    else:
        data = policy
    deleted = 0
    if data == Withdrawal.Data.DELETE:
        # The profile is the rater's data too: it goes with the ratings.
        profile_delete(rater=locked)
        # The one rating write path deletes them, as it writes them.
        deleted = ratings_withdraw(rater=locked)
    consent = ConsentRecord.objects.filter(rater=locked).order_by("-version").first()
    withdrawal = Withdrawal.objects.create(
        rater=locked,
        data=data,
        chosen_by_rater=chosen,
        reason=_text(reason, field="Your reason"),
        consent_version=consent.version if consent else None,
        ratings_deleted=deleted,
        withdrawn_at=timezone.now(),
    )
    locked.status = Membership.Status.WITHDRAWN
    locked.save(update_fields=["status"])
    # A crowd participant who withdraws has "returned" the study, in the vendor's words.
    participant_returned(membership=locked)
    event_record(
        membership=locked,
        kind=StudyEvent.Kind.RATER_WITHDREW,
        reason=withdrawal.reason,
        actor=actor,
        detail={"data": data, "chosen_by_rater": chosen, "ratings_deleted": deleted},
    )
    return withdrawal
