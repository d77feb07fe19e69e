"""The one way views look up a study: scoped to the user's role in it.

A person with no part in the study gets 404, exactly as for a study that does not
exist, so slugs cannot be probed. A member whose role does not allow the page gets 403.
"""

from django.core.exceptions import PermissionDenied
from django.http import Http404

from .models import Membership, Study, Webhook

RATER = "rater"
ADJUDICATOR = "adjudicator"
COORDINATOR = "coordinator"
LEAD = "lead"

# Members of this Django group (and staff) may create studies; the creator leads the study.
COORDINATORS_GROUP = "Coordinators"


def can_create_studies(user) -> bool:
    if not user.is_authenticated:
        return False
    return user.is_staff or user.groups.filter(name=COORDINATORS_GROUP).exists()


def study_role(user, study: Study, membership: Membership | None) -> set[str]:
    roles = set()
    if user.pk == study.lead_id:
        roles |= {LEAD, COORDINATOR}
    if membership is not None:
        roles.add(membership.role)
    if user.is_staff:
        roles.add(COORDINATOR)
    return roles


def get_study_for_user(user, slug: str, *, role: str) -> tuple[Study, Membership | None]:
    if not user.is_authenticated:
        raise Http404
    study = Study.objects.select_related("rubric").filter(slug=slug).first()
    if study is None:
        raise Http404
    # With the participant record, if any (a crowd participant's pages ask for it).
    membership = (
        Membership.objects.select_related("participant__link")
        .filter(study=study, user=user)
        .first()
    )
    roles = study_role(user, study, membership)
    if not roles:
        raise Http404
    if role not in roles:
        raise PermissionDenied
    return study, membership


def get_membership_for_user(user, slug: str, *, role: str) -> tuple[Study, Membership]:
    """``get_study_for_user`` for a member's role (rater, adjudicator), with the membership
    the role comes from: a lead or administrator has none, so the role is not theirs."""
    study, membership = get_study_for_user(user, slug, role=role)
    if membership is None:
        raise PermissionDenied
    return study, membership


def get_webhook_for_user(user, slug: str, webhook_uuid) -> tuple[Study, Webhook]:
    """The study's webhook, for its lead only (a coordinator 403, an outsider 404)."""
    study, _ = get_study_for_user(user, slug, role=LEAD)
    webhook = study.webhooks.filter(uuid=webhook_uuid).first()
    if webhook is None:
        raise Http404
    return study, webhook
