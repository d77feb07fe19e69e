"""Reads about retention and erasure: who is due, what an erasure would touch, past erasures.

A person's identity is due for erasure once every study they take part in is closed (or
unblinded), sets a retention period (``WelfareSettings.retention_days``) and was closed more
than that many days ago. A study that keeps identities (no period) or is still running
(draft, pilot, open) holds them back: a rater of two studies is erased when the later
period ends, and never while one of their studies would still need them.
"""

from datetime import timedelta

from django.contrib.auth.models import User
from django.utils import timezone

from studies.models import IdentityErasure, Membership

# The people a retention period erases: those who rate or resolve disagreements.
PARTICIPANT_ROLES = (Membership.Role.RATER, Membership.Role.ADJUDICATOR)


def held_pseudonym(membership: Membership) -> str:
    """How a person is named in an erasure's record: "R-03 in study-slug"."""
    return f"{membership.pseudonym or membership.get_role_display()} in {membership.study.slug}"


def _retention_ended(study, now) -> bool:
    days = getattr(getattr(study, "welfare", None), "retention_days", None)
    if not study.is_closed or study.closed_at is None or days is None:
        return False
    return study.closed_at + timedelta(days=days) <= now


def users_due_for_erasure(*, now=None) -> list[tuple[User, list[str]]]:
    """Each person whose retention period has ended, with the pseudonyms they hold, in
    account order; administrators, study leads and those erased before are never listed."""
    now = now or timezone.now()
    candidates = (
        Membership.objects.filter(role__in=PARTICIPANT_ROLES)
        .exclude(user__is_staff=True)
        .exclude(user__is_superuser=True)
        .exclude(user__led_studies__isnull=False)
        .exclude(user__erasures__isnull=False)
        .values_list("user_id", flat=True)
        .distinct()
    )
    memberships = (
        Membership.objects.filter(user_id__in=candidates)
        .select_related("study__welfare", "user")
        .order_by("user_id", "pk")
    )
    people: dict[int, tuple[User, list[str], bool]] = {}
    for membership in memberships:
        user, pseudonyms, due = people.get(membership.user_id, (membership.user, [], True))
        pseudonyms.append(held_pseudonym(membership))
        people[membership.user_id] = (
            user,
            pseudonyms,
            due and _retention_ended(membership.study, now),
        )
    return [(user, pseudonyms) for user, pseudonyms, due in people.values() if due]


def identity_erasures(*, limit: int = 100) -> list[IdentityErasure]:
    """The latest erasures, newest first, with who ran them."""
    return list(
        IdentityErasure.objects.select_related("erased_by", "user").order_by("-erased_at")[:limit]
    )


def erasure_preview(*, user: User) -> dict:
    """What erasing ``user`` would touch: their studies by pseudonym, tokens and invitations.

    Shown to an administrator before they confirm; names no one but the person asked for.
    """
    memberships = Membership.objects.filter(user=user).select_related("study").order_by("pk")
    return {
        "memberships": [
            {
                "study": m.study.name,
                "role": m.get_role_display(),
                "pseudonym": m.pseudonym or "(none)",
                "status": m.study.get_status_display(),
            }
            for m in memberships
        ],
        "tokens": user.api_tokens.filter(revoked_at=None).count(),
        "erased": IdentityErasure.objects.filter(user=user).first(),
    }
