"""The point stage reads the study's ratings once and keeps their answers' values per
process: whatever happens to the study, each run stores what a computation from scratch
gives, its layout matches one built from the model instances, and its queries do not grow
with the study."""

import math

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agreement import selectors
from agreement.models import StudyAgreement
from agreement.services import recompute as services
from annotation.models import Assignment, Rating
from annotation.services import rating_submit
from annotation.services.participation import withdrawal_record
from studies.models import Membership, Study
from studies.rubric import allowed_levels
from studies.services import rater_status_change
from studies.services.lifecycle import study_close, study_open, study_pilot_start, study_reopen
from studies.services.rubric import (
    dimension_level_set,
    rubric_create_from_preset,
    rubric_replace_with_preset,
)
from studies.services.unblinding import study_unblind

from ..factories import UserFactory, make_study
from .test_pipeline import payload_with_depth
from .test_stages import request_run, stored


def pairwise(choice: int, confidence: str = "high") -> dict:
    return {"case": {"preference": {"choice": choice}}, "confidence": confidence}


def answer(study: Study, assignment: Assignment, n: int) -> dict:
    """A varied answer for the study's rubric: ``n`` picks it."""
    if study.rubric.dimensions.filter(kind="pairwise").exists():
        return pairwise((n + assignment.pk) % 5 - 2, ("low", "medium", "high")[n % 3])
    return payload_with_depth((n + assignment.pk) % 7, (n * 3 + assignment.rater_id) % 7)


def submit(study: Study, *, rater: str, cases=None, n: int = 0) -> None:
    membership = study.memberships.get(pseudonym=rater)
    for assignment in membership.assignments.select_related("test_case").order_by("position"):
        if cases is None or assignment.test_case.case_id in cases:
            rating_submit(
                assignment=assignment, payload=answer(study, assignment, n), any_version=True
            )


def naive_layout(study: Study, *, pilot: bool) -> dict:
    """The agreement matrices built from model instances, one rating at a time."""
    study = Study.objects.get(pk=study.pk)
    ratings = [
        r
        for r in Rating.objects.select_related("assignment__rater", "assignment__test_case")
        if r.assignment.test_case.study_id == study.pk
        and r.assignment.status == Assignment.Status.SUBMITTED
        and r.assignment.test_case.purpose == "sample"
        and r.assignment.rater.status != Membership.Status.EXCLUDED
        and (
            study.opened_at is None
            or (r.submitted_at < study.opened_at) == pilot
        )
    ]  # fmt: skip
    cases = list(study.test_cases.in_sample().order_by("position").values_list("pk", flat=True))
    raters = sorted({r.assignment.rater.pseudonym for r in ratings})
    labels = sorted({r.label for r in ratings}) or ["A", "B"]
    matrices = {}
    for dimension in study.rubric.dimensions.all():
        scoring = dimension.scoring()
        per_case = scoring.scope == "case"
        matrix = np.full((len(raters), len(cases) * (1 if per_case else len(labels))), np.nan)
        for r in ratings:
            a = r.assignment
            given = (a.case_scores if per_case else r.scores).get(dimension.key)
            value = scoring.agreement_value(given, flipped=a.flipped)
            column = cases.index(a.test_case_id)
            if not per_case:
                column = column * len(labels) + labels.index(r.label)
            matrix[raters.index(a.rater.pseudonym), column] = math.nan if value is None else value
        matrices[dimension.key] = matrix
    # A rating per response rated; a rubric of preferences only has one per case (a verdict).
    rates_responses = any(d.scoring().scope == "response" for d in study.rubric.dimensions.all())
    n_ratings = len(ratings) if rates_responses else len({r.assignment_id for r in ratings})
    return {"raters": raters, "matrices": matrices, "n_ratings": n_ratings}


def check(study: Study) -> None:
    """Run the point stage; its stored result must equal one computed from scratch."""
    study = Study.objects.select_related("rubric").get(pk=study.pk)
    target = request_run(study)
    services.agreement_point_stage(study_id=study.pk)
    row = stored(study)
    assert row.computed == target
    # The inputs' ratings part, taken from the rows the run read, is the summary's own.
    assert row.inputs == selectors.analysis_inputs(study=Study.objects.get(pk=study.pk))
    selectors.ratings._ANSWER_VALUES.clear()  # from scratch: every answer read and converted again
    expected, data = services._point_result(study=study)
    assert row.result == expected
    assert row.n_ratings == data.n_ratings
    naive = naive_layout(study, pilot=study.current_phase == "pilot")
    assert data.raters == naive["raters"] and data.n_ratings == naive["n_ratings"]
    for dimension in data.dimensions:
        np.testing.assert_array_equal(dimension.key_matrix, naive["matrices"][dimension.key])
    # And once more with the values kept by this process: the same again.
    services.agreement_point_stage(study_id=study.pk)
    assert stored(study).result == expected


@pytest.mark.parametrize("preset", ["reference", "pairwise"])
def test_every_run_equals_one_from_scratch_through_a_studys_life(db, preset):
    users = [UserFactory() for _ in range(4)]
    study = make_study(
        slug=f"life-{preset}", cases=6, raters=users, consented=True, status=Study.Status.DRAFT
    )
    lead = study.lead
    rubric_replace_with_preset(study=study, actor=lead, preset=preset)
    study_pilot_start(study=Study.objects.get(pk=study.pk), actor=lead)
    study.refresh_from_db()
    check(study)  # nothing submitted yet

    # Pilot ratings, then a level of measurement changed during the pilot.
    submit(study, rater="R-01", cases={"TC-001", "TC-002", "TC-003"})
    submit(study, rater="R-02", cases={"TC-001", "TC-002"})
    check(study)
    first = study.rubric.dimensions.order_by("position").first()
    level = next(level for level in allowed_levels(first.kind) if level != first.level)
    dimension_level_set(study=study, actor=lead, key=first.key, level=level)
    check(study)

    # Opened: the pilot ratings become the other phase; the main phase fills up.
    study_open(study=study, actor=lead, acknowledge_warnings=True)
    check(study)
    for rater in ("R-01", "R-02", "R-03", "R-04"):
        submit(study, rater=rater, n=1)
        check(study)

    # A revision of one case, then of a whole rater's cases.
    submit(study, rater="R-02", cases={"TC-004"}, n=7)
    check(study)
    submit(study, rater="R-03", n=5)
    check(study)

    # A rater excluded, then reinstated; another withdraws with their data deleted.
    r3 = study.memberships.get(pseudonym="R-03")
    rater_status_change(membership=r3, action="exclude", reason="Too fast.", actor=lead)
    check(study)
    rater_status_change(membership=r3, action="reinstate", reason="Checked.", actor=lead)
    check(study)
    withdrawal_record(rater=study.memberships.get(pseudonym="R-04"), data="delete")
    assert not Rating.objects.filter(assignment__rater__pseudonym="R-04").exists()
    check(study)

    # Closed, reopened, a late revision, closed again and unblinded.
    study_close(study=study, actor=lead)
    check(study)
    study_reopen(study=Study.objects.get(pk=study.pk), actor=lead)
    submit(study, rater="R-01", cases={"TC-006"}, n=3)
    check(study)
    study_close(study=Study.objects.get(pk=study.pk), actor=lead)
    study_unblind(study=Study.objects.get(pk=study.pk), actor=lead)
    check(study)
    if preset == "pairwise":
        result = stored(study).result
        assert result["dimensions"][0]["orientation"] == "system"


def test_an_answer_rewritten_with_a_new_stamp_is_read_again(db):
    # What the kept values rely on: every write of an answer sets its submitted_at.
    users = [UserFactory() for _ in range(2)]
    study = make_study(slug="stamp", cases=3, raters=users, consented=True)
    for rater in ("R-01", "R-02"):
        submit(study, rater=rater)
    check(study)
    rating = Rating.objects.filter(assignment__rater__pseudonym="R-01").first()
    other = Rating.objects.exclude(total=rating.total).first()  # another answer
    before = services._point_result(study=study)[1].dimensions
    Rating.objects.filter(pk=rating.pk).update(scores=other.scores, submitted_at=timezone.now())
    check(study)
    after = services._point_result(study=study)[1].dimensions
    assert any(
        not np.array_equal(x.matrix, y.matrix, equal_nan=True)
        for x, y in zip(before, after, strict=True)
    )


def test_the_kept_values_are_dropped_with_the_rubric(db):
    users = [UserFactory() for _ in range(2)]
    study = make_study(
        slug="rubric", cases=3, raters=users, consented=True, status=Study.Status.PILOT
    )
    for rater in ("R-01", "R-02"):
        submit(study, rater=rater)
    check(study)
    # Another rubric under the same ratings (no service allows it once rating began; an
    # edit in the database): every kept value is dropped and read again.
    Study.objects.filter(pk=study.pk).update(rubric=rubric_create_from_preset(preset="pairwise"))
    check(study)
    for rater in ("R-01", "R-02"):
        submit(Study.objects.get(pk=study.pk), rater=rater, n=2)
    check(study)


def point_stage_queries(cases: int, slug: str) -> int:
    users = [UserFactory() for _ in range(3)]
    study = make_study(slug=slug, cases=cases, raters=users, consented=True)
    for rater in ("R-01", "R-02", "R-03"):
        submit(study, rater=rater)
    StudyAgreement.objects.get_or_create(study=study)
    services.agreement_point_stage(study_id=study.pk)  # the answers' values are kept now
    submit(study, rater="R-02", cases={"TC-002"}, n=4)  # a submission, as in a real run
    request_run(study)
    with CaptureQueriesContext(connection) as queries:
        services.agreement_point_stage(study_id=study.pk)
    return len(queries)


def test_the_point_stage_runs_as_many_queries_whatever_the_studys_size(db):
    small = point_stage_queries(3, "small")
    assert point_stage_queries(12, "large") == small
    # 25, the adjudication queue's two reads of a study without rules (its rules, and
    # whether any case waits), the alpha tallies' (their update, their check against
    # the data read, and here their first build: lock, replace), and the monitor's look at
    # the analysis plan (whether the primary question is monitored).
    assert small <= 45


def test_a_run_reads_the_ratings_once(db):
    # The rows serve the agreement data, the QC records and the inputs summary alike.
    users = [UserFactory() for _ in range(3)]
    study = make_study(slug="once", cases=4, raters=users, consented=True)
    for rater in ("R-01", "R-02", "R-03"):
        submit(study, rater=rater)
    StudyAgreement.objects.get_or_create(study=study)
    services.agreement_point_stage(study_id=study.pk)  # the answers' values are kept now
    request_run(study)
    with CaptureQueriesContext(connection) as queries:
        services.agreement_point_stage(study_id=study.pk)
    reads = [q["sql"] for q in queries if '"annotation_rating"' in q["sql"]]
    assert len(reads) == 1, reads
    assert stored(study).inputs == selectors.analysis_inputs(study=study)
