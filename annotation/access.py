"""The one way views look up an assignment: only the rater it belongs to can open it."""

from django.http import Http404

from studies.models import Membership

from .models import Assignment


def get_assignment_for_rater(user, assignment_uuid) -> Assignment:
    if not user.is_authenticated:
        raise Http404
    assignment = (
        Assignment.objects.select_related("rater", "test_case__study__rubric")
        .filter(
            uuid=assignment_uuid,
            rater__user=user,
            rater__role=Membership.Role.RATER,
        )
        .first()
    )
    if assignment is None:
        raise Http404
    return assignment
