"""The one way views look up the rating side's objects, scoped to the signed-in user.

As in ``studies.access``: someone with no part in the study gets 404, exactly as for an
object that does not exist; a member in the wrong role gets 403.
"""

from django.http import Http404

from studies import access
from studies.models import Membership, Study

from .models import Adjudication, Assignment, TrainingItem
from .selectors.adjudication import adjudications_for


def get_assignment_for_rater(user, assignment_uuid) -> Assignment:
    if not user.is_authenticated:
        raise Http404
    assignment = (
        Assignment.objects.select_related("rater__study__rubric", "test_case")
        .filter(
            uuid=assignment_uuid,
            rater__user=user,
            rater__role=Membership.Role.RATER,
        )
        .first()
    )
    if assignment is None:
        raise Http404
    # The case is one of the rater's study: one copy of the study serves both.
    if assignment.test_case.study_id == assignment.rater.study_id:
        assignment.test_case.study = assignment.rater.study
    return assignment


def get_training_item_for_user(
    user, slug: str, item_uuid, *, role: str
) -> tuple[TrainingItem, Study, Membership | None]:
    """A training or qualification item of the study, for a rater or a coordinator.

    Raters reach only training examples that have an answer key: qualification items
    are served one at a time by the qualification page, never by their id.
    """
    study, membership = access.get_study_for_user(user, slug, role=role)
    items = TrainingItem.objects.filter(study=study, uuid=item_uuid)
    if role == access.RATER:
        items = items.filter(kind=TrainingItem.Kind.TRAINING).exclude(key={})
    item = items.first()
    if item is None:
        raise Http404
    return item, study, membership


def get_adjudication_for_adjudicator(
    user, slug: str, adjudication_uuid
) -> tuple[Adjudication, Study, Membership]:
    """An adjudication of the study for one of its adjudicators; a case the person rated
    (under any role they had) is 404, as one that does not exist."""
    study, membership = access.get_membership_for_user(user, slug, role=access.ADJUDICATOR)
    adjudication = (
        adjudications_for(adjudicator=membership)
        .select_related("test_case", "adjudicator")
        .filter(uuid=adjudication_uuid)
        .first()
    )
    if adjudication is None:
        raise Http404
    adjudication.test_case.study = study
    membership.study = study
    return adjudication, study, membership


def get_adjudication_for_coordinator(user, slug: str, adjudication_uuid, *, role: str):
    """An adjudication of the study for its coordinators (or lead, with ``role``)."""
    study, _ = access.get_study_for_user(user, slug, role=role)
    adjudication = (
        Adjudication.objects.select_related("test_case")
        .filter(test_case__study=study, uuid=adjudication_uuid)
        .first()
    )
    if adjudication is None:
        raise Http404
    adjudication.test_case.study = study
    return adjudication, study
