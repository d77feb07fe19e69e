"""Issue 39 in the analysis: a response's Total read through the rubric's rule (missing
when a part is unanswered, whatever the stored column says), and the minimum of valid
ratings applied to every question, the mixed model's and the ranking's included, with the
excluded cases counted."""

import math

import pytest

from agreement.analysis.outcomes import compare_systems
from agreement.analysis.robustness import robustness_check
from agreement.analysis.roles import TOTAL_MEASURE
from agreement.selectors.ratings import study_ratings
from annotation.models import Rating
from studies.models import Membership
from tests.payloads import full_marks_payload, submit

from .test_aggregation import TOTALS, comparison

NAN = math.nan


@pytest.mark.django_db
def test_a_total_stored_from_some_of_its_parts_is_read_as_missing(study, rater):
    assignment = Membership.objects.get(study=study, user=rater).assignments.first()
    submit(assignment, full_marks_payload())
    rating = Rating.objects.get(assignment=assignment, label="B")
    # As an earlier version stored it: a scale-like part unanswered, the total of the rest.
    scores = {**rating.scores, "evidence": {"checked": None, "points": 0}}
    scores.pop("structure")
    Rating.objects.filter(pk=rating.pk).update(scores=scores, total=14)
    data = study_ratings(study=study, pilot=study.opened_at is None)
    row = data.raters.index("R-01")
    case = data.case_ids.index(assignment.test_case_id)
    a, b = data.totals[row, case * 2], data.totals[row, case * 2 + 1]
    assert a == 20 and math.isnan(b)  # 14 on main: the blank parts counted 0


def test_the_mixed_model_leaves_out_the_cases_under_the_minimum_and_counts_them():
    # Case 3 has one rater's totals: under the minimum of 2, excluded from the Total, as
    # from its per-system means; 16 ratings remain (18 with case 3).
    fits = robustness_check(comparison())["fits"]
    total = next(f for f in fits if f["measure"] == TOTAL_MEASURE)
    assert (total["n"], total["excluded_cases"]) == (16, 1)
    every = robustness_check(comparison(min_ratings=1))["fits"]
    total = next(f for f in every if f["measure"] == TOTAL_MEASURE)
    assert (total["n"], total["excluded_cases"]) == (18, 0)


def test_a_total_with_a_part_missing_leaves_its_case_under_the_minimum():
    # c0B's totals 2, 2, 2: two raters left a part of it unanswered, so it has one valid
    # rating and case 0 leaves the Total whole (c0A's three with it), as case 3 does.
    totals = TOTALS.copy()
    totals[0, 1] = totals[1, 1] = NAN
    data = comparison(totals=totals)
    fits = robustness_check(data)["fits"]
    total = next(f for f in fits if f["measure"] == TOTAL_MEASURE)
    assert (total["excluded_cases"], total["n"]) == (2, 10)  # cases 1 and 2: 5 ratings each
    question = next(
        q for q in compare_systems(data, n_resamples=20)["aggregation"]["questions"]
        if q["measure"] == TOTAL_MEASURE
    )  # fmt: skip
    assert question["excluded_cases"] == 2
