"""What closing a study leaves undone, registered with ``studies.activity``: the sample
cases under their planned number of ratings and the cases not started or not submitted."""

from django.db.models import Count, Q

from studies.activity import UnfinishedWork
from studies.models import Membership, Study, TestCase

from ..models import Assignment


def study_unfinished_work(*, study: Study) -> UnfinishedWork:
    """Counted by the database, in three queries whatever the study's size."""
    k = study.raters_per_item or (
        study.memberships.filter(
            role=Membership.Role.RATER, status=Membership.Status.ACTIVE
        ).count()
    )
    submitted = Count(
        "assignments",
        filter=Q(
            assignments__status=Assignment.Status.SUBMITTED,
            assignments__rater__role=Membership.Role.RATER,
        ),
    )
    sample = study.test_cases.filter(purpose=TestCase.Purpose.SAMPLE)
    under_k = sample.annotate(n=submitted).filter(n__lt=k).count() if k else 0
    states = Assignment.objects.filter(
        test_case__study=study,
        rater__role=Membership.Role.RATER,
        rater__status=Membership.Status.ACTIVE,
    ).aggregate(
        unstarted=Count("pk", filter=Q(status=Assignment.Status.TODO)),
        in_progress=Count("pk", filter=Q(status=Assignment.Status.DRAFT)),
    )
    return UnfinishedWork(
        cases=sample.count(),
        k=k,
        under_k=under_k,
        unstarted=states["unstarted"],
        in_progress=states["in_progress"],
    )
