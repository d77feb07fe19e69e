"""Who takes part in a study: adding people, and administrators' decisions about raters."""

from django.contrib.auth.models import User
from django.db import transaction

from studies.errors import StudySetupError
from studies.events import study_event_record
from studies.locks import membership_lock, study_lock
from studies.models import Invitation, Membership, Study, StudyEvent
from studies.signals import analysis_inputs_announce, raters_need_cases_announce

# The pseudonyms the people who rate and who resolve disagreements go by in a study.
PSEUDONYM_PREFIXES: dict[str, str] = {
    Membership.Role.RATER: "R",
    Membership.Role.ADJUDICATOR: "A",
}


@transaction.atomic
def membership_add(
    *,
    study: Study,
    user: User,
    role: str,
    joined_via: str = Membership.JoinedVia.OPERATOR,
    joined_by: User | None = None,
    invitation: Invitation | None = None,
) -> Membership:
    """Add a person to a study; raters get the next free pseudonym (R-01, R-02, ...),
    adjudicators theirs (A-01, ...). The membership records how they came in
    (``joined_via``, the ``invitation`` used and who made it, ``joined_by``)."""
    # Joins to one study run one at a time (the study locked exclusively), so two people
    # joining at once cannot both read the same free pseudonym, and the same person added
    # twice at once (a double click, two coordinators) gets the one membership.
    if user.is_staff and role in PSEUDONYM_PREFIXES:
        # An administrator coordinates every study: with the case texts by system there
        # and the responses by label on a rating or adjudication screen, they would hold
        # the key.
        raise StudySetupError(
            "An administrator account sees which system wrote each response, so it cannot "
            f"take part as {Membership.Role(role).label.lower()}; use an account without "
            "administrator rights."
        )
    study_lock(study.pk, exclusive=True)
    membership, created = Membership.objects.get_or_create(
        study=study,
        user=user,
        defaults={
            "role": role,
            "joined_via": joined_via,
            "joined_by": joined_by,
            "invitation": invitation,
        },
    )
    prefix = PSEUDONYM_PREFIXES.get(role)
    if created and prefix:
        taken = set(study.memberships.exclude(pseudonym="").values_list("pseudonym", flat=True))
        number = 1
        while f"{prefix}-{number:02d}" in taken:
            number += 1
        membership.pseudonym = f"{prefix}-{number:02d}"
        membership.save(update_fields=["pseudonym"])
    if created and role == Membership.Role.RATER:
        # A rater who joins a study that is running gets their cases without anyone
        # pressing Assign (annotation decides, once this commits).
        raters_need_cases_announce(study_id=study.pk, reason="rater_joined")
    return membership


# What an administrator can do to a rater after reviewing the quality-control flags.
RATER_ACTIONS = {
    "pause": (Membership.Status.PAUSED, StudyEvent.Kind.RATER_PAUSED),
    "retrain": (Membership.Status.PAUSED, StudyEvent.Kind.RATER_SENT_TO_RETRAINING),
    "exclude": (Membership.Status.EXCLUDED, StudyEvent.Kind.RATER_EXCLUDED),
    "reinstate": (Membership.Status.ACTIVE, StudyEvent.Kind.RATER_REINSTATED),
    # Reviewed and found fine: the rater's status stays; the flags dismissed are recorded.
    "dismiss": (None, StudyEvent.Kind.RATER_FLAG_DISMISSED),
}
RATER_ACTION_LABELS = {
    "pause": "Pause",
    "retrain": "Send to retraining",
    "exclude": "Exclude from analysis",
    "reinstate": "Reinstate",
    "dismiss": "Dismiss the open flags",
}


def rater_actions_available(*, status: str, has_open_flags: bool) -> list[str]:
    """The actions that would change something for a rater in this status: a paused rater
    can be reinstated but not paused again; flags can be dismissed only while some are open."""
    if status == Membership.Status.WITHDRAWN:
        return []
    return [
        action
        for action, (target, _) in RATER_ACTIONS.items()
        if (has_open_flags if target is None else target != status or action == "retrain")
    ]


@transaction.atomic
def rater_status_change(
    *,
    membership: Membership,
    action: str,
    reason: str,
    actor: User,
    flags: list[str] | None = None,
) -> Membership:
    """Pause, send to retraining, exclude or reinstate a rater, with the reason recorded.

    Excluded raters' ratings are kept but left out of the agreement statistics; the change
    is announced as a change of the analysis' inputs.
    """
    if action not in RATER_ACTIONS:
        raise StudySetupError("Choose an action: pause, retrain, exclude, reinstate or dismiss.")
    reason = (reason or "").strip()
    if not reason:
        raise StudySetupError("Give the reason; it is kept in the study's history.")
    if len(reason) > 2000:
        raise StudySetupError("Keep the reason under 2,000 characters.")
    if "\x00" in reason:  # PostgreSQL stores no NUL character in text
        raise StudySetupError("The reason contains a NUL character (\\x00); remove it.")
    locked = membership_lock(membership.pk, exclusive=True)
    if locked.role != Membership.Role.RATER:
        raise StudySetupError("Only raters can be paused, retrained or excluded.")
    if locked.status == Membership.Status.WITHDRAWN:
        raise StudySetupError("This rater has withdrawn from the study.")
    status, kind = RATER_ACTIONS[action]
    if status is None:
        if not flags:
            raise StudySetupError(f"{locked.pseudonym} has no open flag to dismiss.")
        study_event_record(
            study_id=locked.study_id,
            actor=actor,
            kind=kind,
            membership=locked,
            reason=reason,
            flags=[str(flag)[:500] for flag in flags[:20]],
        )
        return locked
    # Sending a paused rater to retraining says something new; the others would not.
    if action not in rater_actions_available(status=locked.status, has_open_flags=True):
        raise StudySetupError(
            f"{locked.pseudonym} is already {locked.get_status_display().lower()}; "
            "nothing was changed."
        )
    locked.status = status
    locked.save(update_fields=["status"])
    study_event_record(
        study_id=locked.study_id,
        actor=actor,
        kind=kind,
        membership=locked,
        reason=reason,
        status=status,
    )
    analysis_inputs_announce(study_id=locked.study_id, reason="rater_status")
    if status == Membership.Status.ACTIVE:
        # A rater paused when the study opened (or when others joined) got no cases then:
        # back at work, they get them by the design as a newcomer would.
        raters_need_cases_announce(study_id=locked.study_id, reason="rater_reinstated")
    return locked


@transaction.atomic
def rater_add(*, study: Study, user: User, actor: User | None) -> Membership:
    """Add an account as a rater directly (an operator's step, e.g. ``add_rater``).

    On the pages raters join by invitation, which the person accepts; this is for those
    who run the server, and it is recorded in the study's history all the same.
    """
    study = study_lock(study.pk, exclusive=True)
    if study.is_closed:
        raise StudySetupError("The study is closed; no one can join it now.")
    existing = Membership.objects.filter(study=study, user=user).first()
    if existing is not None:
        what = existing.pseudonym or existing.get_role_display().lower()
        raise StudySetupError(f"{user.get_username()} already takes part in this study ({what}).")
    membership = membership_add(
        study=study,
        user=user,
        role=Membership.Role.RATER,
        joined_via=Membership.JoinedVia.OPERATOR,
        joined_by=actor,
    )
    study_event_record(
        study=study, actor=actor, kind=StudyEvent.Kind.RATER_ADDED, membership=membership
    )
    return membership


@transaction.atomic
def rater_pause_automatic(*, membership_id: int, rule: str, reason: str, evidence: dict) -> bool:
    """Pause an active rater because a quality rule says so (QC-001: gold accuracy).

    The same state an administrator's pause sets, recorded in the history with no actor
    and the evidence; only an administrator reinstates. False if the rater is not active
    (already paused, excluded or withdrawn): nothing changes then.
    """
    locked = membership_lock(membership_id, exclusive=True)
    if locked.role != Membership.Role.RATER or locked.status != Membership.Status.ACTIVE:
        return False
    locked.status = Membership.Status.PAUSED
    locked.save(update_fields=["status"])
    study_event_record(
        study_id=locked.study_id,
        actor=None,
        kind=StudyEvent.Kind.RATER_PAUSED,
        membership=locked,
        reason=reason,
        status=Membership.Status.PAUSED,
        automatic=True,
        rule=rule,
        evidence=evidence,
    )
    return True
