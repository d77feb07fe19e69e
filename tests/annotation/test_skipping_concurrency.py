"""Two skips at the same moment: the same case twice, and two raters' skips of one case.
Real threads on PostgreSQL (``studies.locks``)."""

import pytest

from annotation.models import Assignment
from annotation.services.skipping import case_skip
from studies.models import StudyEvent

from .test_locks import _postgresql_only, together  # noqa: F401 (the fixture applies here too)
from .test_skipping import balanced, first_assignment, kept_raters

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_double_skip_is_one_skip_and_hands_the_case_on_once():
    study = balanced(raters=4, cases=4, k=2)
    skipped = first_assignment(study)
    runs = together(lambda: case_skip(assignment=skipped), lambda: case_skip(assignment=skipped))
    assert all(run.error is None for run in runs)
    assert sorted(run.result.already for run in runs) == [False, True]
    assert StudyEvent.objects.filter(kind=StudyEvent.Kind.CASE_SKIPPED).count() == 1
    assert kept_raters(skipped.test_case) == 2


def test_two_raters_skipping_one_case_at_once_each_hand_it_to_someone_else():
    study = balanced(raters=5, cases=5, k=2)
    case = first_assignment(study).test_case
    skippers = list(case.assignments.select_related("test_case"))
    assert len(skippers) == 2
    runs = together(*[lambda a=a: case_skip(assignment=a) for a in skippers])
    assert all(run.error is None for run in runs), [run.error for run in runs]
    assert kept_raters(case) == 2
    assert case.assignments.filter(status=Assignment.Status.SKIPPED).count() == 2
    raters = list(case.assignments.values_list("rater_id", flat=True))
    assert len(raters) == len(set(raters)) == 4
