"""Raters get their cases without anyone pressing Assign: at the pilot, at opening, on joining."""

import datetime
from collections import Counter

import pytest
import time_machine
from django.urls import reverse

from annotation import assignment_jobs
from annotation.models import Assignment
from jobs import services as job_services
from jobs.models import Job
from studies.models import Membership, Study
from studies.services import (
    membership_add,
    rater_status_change,
    study_open,
    study_pilot_start,
)

from ..factories import UserFactory, make_study
from .test_locks import together

pytestmark = pytest.mark.django_db(transaction=True)  # the assignment follows the commit


def rater_joins(study: Study) -> Membership:
    return membership_add(study=study, user=UserFactory(), role=Membership.Role.RATER)


def cases_of(membership: Membership) -> int:
    return Assignment.objects.filter(rater=membership).count()


def test_a_rater_joining_an_open_study_gets_every_case_of_the_full_design():
    study = make_study(cases=4, raters=[], status=Study.Status.OPEN)
    assert cases_of(rater_joins(study)) == 4


def test_a_draft_assigns_nothing_and_the_pilot_and_opening_assign_everyone():
    study = make_study(cases=3, raters=[], status=Study.Status.DRAFT)
    first, second = rater_joins(study), rater_joins(study)
    assert cases_of(first) == cases_of(second) == 0
    study_pilot_start(study=study, actor=study.lead)
    assert cases_of(first) == cases_of(second) == 3
    third = rater_joins(study)
    assert cases_of(third) == 3
    study_open(study=study, actor=study.lead)  # tops up: nothing new, nothing twice
    assert Assignment.objects.filter(rater__study=study).count() == 9


def test_opening_gives_the_balanced_design():
    study = make_study(cases=6, raters=[], status=Study.Status.DRAFT)
    Study.objects.filter(pk=study.pk).update(raters_per_item=2)
    raters = [rater_joins(study) for _ in range(3)]
    study_open(study=study, actor=study.lead)
    per_case = Counter(
        Assignment.objects.filter(rater__study=study).values_list("test_case_id", flat=True)
    )
    assert sorted(per_case.values()) == [2] * 6
    assert sorted(cases_of(r) for r in raters) == [4, 4, 4]


def test_two_raters_joining_at_once_both_get_their_cases_once():
    study = make_study(cases=5, raters=[], status=Study.Status.OPEN)
    runs = together(lambda: rater_joins(study), lambda: rater_joins(study))
    assert [run.error for run in runs] == [None, None]
    for run in runs:
        assert cases_of(run.result) == 5
    rows = list(Assignment.objects.filter(rater__study=study).values_list("rater", "test_case"))
    assert len(rows) == len(set(rows)) == 10


def test_a_rater_who_joins_while_an_assign_job_runs_gets_cases_when_it_ends():
    study = make_study(cases=3, raters=[], status=Study.Status.OPEN)
    first = rater_joins(study)
    job = job_services.job_create(kind=Job.Kind.ASSIGN, study_id=study.pk)
    late = rater_joins(study)  # told that the job runs: nothing of its own
    assert cases_of(late) == 0
    assignment_jobs.assignment_job_run(job_id=job.pk)
    assert cases_of(first) == cases_of(late) == 3


def test_a_design_that_cannot_be_made_yet_does_not_stop_the_rater_joining():
    study = make_study(cases=4, raters=[], status=Study.Status.OPEN)
    Study.objects.filter(pk=study.pk).update(raters_per_item=2)
    alone = rater_joins(study)  # two raters per case, one rater: not yet
    assert cases_of(alone) == 0
    failed = Job.objects.get(study_id=study.pk, kind=Job.Kind.ASSIGN)
    assert failed.state == Job.State.FAILED and "2 raters per test case" in failed.error
    second = rater_joins(study)
    assert cases_of(alone) == cases_of(second) == 4


def test_a_rater_the_design_has_no_case_for_starts_one_assign_and_no_more():
    # Every case has its k raters already: the newcomer gets nothing, and the job that
    # gave them nothing must not take them for a rater who joined while it ran, even when
    # the join and the job share a timestamp (a stopped clock: each job then started
    # another, until the stack ran out).
    with time_machine.travel(datetime.datetime(2026, 5, 1, tzinfo=datetime.UTC), tick=False):
        _no_case_for_the_newcomer()


def _no_case_for_the_newcomer():
    study = make_study(cases=4, raters=[], status=Study.Status.OPEN)
    Study.objects.filter(pk=study.pk).update(raters_per_item=2)
    first, second = rater_joins(study), rater_joins(study)
    assert cases_of(first) == cases_of(second) == 4
    jobs_before = Job.objects.filter(study_id=study.pk, kind=Job.Kind.ASSIGN).count()

    newcomer = rater_joins(study)

    assert cases_of(newcomer) == 0
    jobs = Job.objects.filter(study_id=study.pk, kind=Job.Kind.ASSIGN)
    assert jobs.count() == jobs_before + 1
    assert jobs.first().state == Job.State.DONE


def test_the_raters_page_says_why_a_rater_still_has_no_cases(client):
    study = make_study(cases=4, raters=[], status=Study.Status.DRAFT)
    Study.objects.filter(pk=study.pk).update(raters_per_item=2)
    rater_joins(study)
    study_open(study=study, actor=study.lead)  # two raters per case, one rater: nothing yet
    client.force_login(study.lead)
    page = client.get(reverse("annotation:raters", args=[study.slug])).content.decode()
    assert "No cases yet for R-01." in page
    assert "The design needs 2 raters per test case but the study has 1 rater." in page
    rater_joins(study)  # the design can be made now: both get their cases, no warning left
    page = client.get(reverse("annotation:raters", args=[study.slug])).content.decode()
    assert 'id="unassigned"' not in page


def test_a_rater_paused_when_the_study_opened_gets_cases_when_reinstated():
    study = make_study(cases=3, raters=[], status=Study.Status.DRAFT)
    paused = rater_joins(study)
    rater_status_change(membership=paused, action="pause", reason="Checking", actor=study.lead)
    study_open(study=study, actor=study.lead)  # the design gives cases to active raters only
    assert cases_of(paused) == 0
    rater_status_change(membership=paused, action="reinstate", reason="Fine", actor=study.lead)
    assert cases_of(paused) == 3
