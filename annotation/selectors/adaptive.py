"""Reads of the adaptive design (k_min to k_max raters per case): the cases that may get
one more rater, and how many ratings the design used and saved."""

from dataclasses import dataclass

from django.db.models import Count, Q

from annotation.models import Assignment
from studies.models import Study, TestCase

from .skips import HOLDS_A_PLACE

SUBMITTED = Q(status=Assignment.Status.SUBMITTED)


def _places(study: Study):
    """Per sample case: the assignments that hold a place, and how many are submitted."""
    return (
        Assignment.objects.filter(
            HOLDS_A_PLACE, test_case__study=study, test_case__purpose=TestCase.Purpose.SAMPLE
        )
        .values("test_case_id")
        .annotate(places=Count("pk"), submitted=Count("pk", filter=SUBMITTED))
        .order_by("test_case_id")
    )


def adaptive_cases_waiting(*, study: Study) -> dict[int, int]:
    """{test case pk: its raters} of the sample cases that may get one more rater: every
    rater holding a place has submitted, and they are at least k_min and fewer than k_max.
    Empty outside the adaptive design."""
    design = study.adaptive_raters
    if design is None:
        return {}
    k_min, k_max = design
    rows = _places(study).filter(places__gte=k_min, places__lt=k_max)
    return {row["test_case_id"]: row["places"] for row in rows if row["places"] == row["submitted"]}


@dataclass(frozen=True)
class AdaptiveSummary:
    """What the adaptive design spent: the report's account of it."""

    k_min: int
    k_max: int
    cases: int  # sample cases with at least one submitted rating
    extended: int  # cases that got more than k_min raters
    by_raters: dict[int, int]  # raters holding a place -> cases
    ratings: int  # submitted ratings of sample cases by raters holding a place
    saved: int  # ratings k_max on every case would have taken, less those given


def adaptive_summary(*, study: Study) -> AdaptiveSummary | None:
    """How many cases got extra raters, and the ratings saved against k_max on every case;
    None outside the adaptive design. Counts only: nothing here names a response."""
    design = study.adaptive_raters
    if design is None:
        return None
    k_min, k_max = design
    by_raters: dict[int, int] = {}
    cases = ratings = 0
    for row in _places(study).filter(submitted__gt=0):
        cases += 1
        ratings += row["submitted"]
        by_raters[row["places"]] = by_raters.get(row["places"], 0) + 1
    extended = sum(n for places, n in by_raters.items() if places > k_min)
    return AdaptiveSummary(
        k_min=k_min,
        k_max=k_max,
        cases=cases,
        extended=extended,
        by_raters=dict(sorted(by_raters.items())),
        ratings=ratings,
        saved=k_max * cases - ratings,
    )
