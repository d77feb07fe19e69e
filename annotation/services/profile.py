"""Writes of a rater's own profile (protocol 4.1): given, changed, declined or withdrawn.

Only the rater writes their profile. It is kept apart from identity and from ratings, and
nothing about it goes into the audit trail, which coordinators read: not even whether a
rater gave one. Declining is an answer like any other and never stops anyone from rating.
"""

from django.db import transaction
from django.utils import timezone

from annotation.models import RaterProfile
from studies.errors import ApplicationError
from studies.locks import membership_lock
from studies.models import Membership
from studies.profile_questions import answers_clean
from studies.selectors import profile_questions_of


class ProfileError(ApplicationError):
    """The profile cannot be saved; the message says why."""


@transaction.atomic
def profile_save(
    *, rater: Membership, consented: bool | None, answers: dict, share_with_pseudonym: bool
) -> RaterProfile:
    """Record the rater's profile: with their consent, their answers ({key: value or None
    for "prefer not to say"}) and whether an export may carry it beside their pseudonym;
    without it, only that they declined (no answers are kept). Saving again replaces it.
    ``consented`` None: the rater did not say (refused, nothing is written)."""
    if consented is None:
        raise ProfileError(
            "Choose whether you agree to give these characteristics (declining is fine)."
        )
    # One rater's profile is written one at a time (a second tab cannot create a second
    # row), and not while they withdraw, whose deletion would otherwise be undone.
    rater = membership_lock(rater.pk, exclusive=True)
    if rater.role != Membership.Role.RATER:
        raise ProfileError("Only a rater of the study has a profile.")
    if rater.status == Membership.Status.WITHDRAWN:
        raise ProfileError("You have withdrawn from this study.")
    questions = profile_questions_of(study=rater.study)
    if not questions:
        raise ProfileError("This study asks for no profile.")
    if consented:
        cleaned = answers_clean(questions, answers)
    else:
        cleaned, share_with_pseudonym = {}, False
    profile, _ = RaterProfile.objects.update_or_create(
        rater=rater,
        defaults={
            "consented": consented,
            "answers": cleaned,
            "share_with_pseudonym": bool(share_with_pseudonym),
            "answered_at": timezone.now(),
        },
    )
    return profile


@transaction.atomic
def profile_delete(*, rater: Membership) -> bool:
    """Delete the rater's profile (their withdrawal of it, or of their data); False when
    there was none."""
    membership_lock(rater.pk, exclusive=True)
    deleted, _ = RaterProfile.objects.filter(rater_id=rater.pk).delete()
    return bool(deleted)
