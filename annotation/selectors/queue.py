"""The study's adjudicators, as the coordinators' pages list them. (The queue's counts are
``adjudicated_labels.adjudication_counts``; the adjudication screen's reads are
``annotation.selectors.adjudication``.)"""

from studies.models import Membership, Study


def study_adjudicators(*, study: Study) -> list[Membership]:
    """The study's adjudicators, by pseudonym."""
    return list(study.memberships.filter(role=Membership.Role.ADJUDICATOR).order_by("pseudonym"))
