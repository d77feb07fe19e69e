"""The predicates and other models' statuses are no lifecycle comparison."""
from annotation.models import Assignment
from studies.models import Membership, Study


def banner(study, assignment, rater, action, qs):
    if study.is_open or study.accepts_ratings:
        return "rating"
    a = assignment.status == Assignment.Status.DRAFT
    b = rater.status != Membership.Status.ACTIVE
    c = qs.filter(status=Assignment.Status.SUBMITTED)
    d = action == "open"
    match action:
        case "open":
            return "button"
    return a, b, c, d, Study
