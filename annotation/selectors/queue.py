"""Reads about the adjudication queue that the coordinators' and adjudicators' pages show:
counts by status, and the study's adjudicators. (The adjudication screen's own
reads are ``annotation.selectors.adjudication``.)"""

from django.db.models import Count

from annotation.models import Adjudication
from studies.models import Membership, Study


def adjudication_counts(*, study: Study) -> dict[str, int]:
    """The study's adjudications by status: {"waiting", "done", "unresolvable"}."""
    counts = dict(
        Adjudication.objects.filter(test_case__study=study)
        .values_list("status")
        .annotate(n=Count("id"))
        .order_by()
    )
    return {status: counts.get(status, 0) for status in Adjudication.Status.values}


def study_adjudicators(*, study: Study) -> list[Membership]:
    """The study's adjudicators, by pseudonym."""
    return list(study.memberships.filter(role=Membership.Role.ADJUDICATOR).order_by("pseudonym"))
