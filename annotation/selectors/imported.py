"""Reads about ratings imported from elsewhere, by system name (``Assignment.Source.IMPORTED``).

A study holds either ratings made in Concord (the screen, worksheets) or imported ones,
never both: imported by system name, they would let anyone who knows what the file said
(say, "system X: all 5s") read the key off the statistics by label of the ratings made in
Concord. These reads let the writes keep the two apart.
"""

from collections import Counter

from django.db.models import Count

from annotation.models import Assignment, Rating
from studies.models import Study, StudyEvent, TestCase

_IMPORTED = Assignment.Source.IMPORTED


def imported_ratings_held(*, study_id: int) -> bool:
    """Whether ratings have been imported into the study from elsewhere.

    Read from its history, where each import is recorded in the import's own transaction:
    every submit asks, and a study's events are far fewer than its assignments. Ratings
    once imported keep the study apart even if they were deleted since (a withdrawal):
    the statistics may have shown them beside the key's labels.
    """
    return StudyEvent.objects.filter(
        study_id=study_id, kind=StudyEvent.Kind.RATINGS_IMPORTED
    ).exists()


def concord_ratings_held(*, study_id: int) -> bool:
    """Whether the study holds any rating made in Concord (on the screen or a worksheet)."""
    return (
        Assignment.objects.filter(test_case__study_id=study_id, status=Assignment.Status.SUBMITTED)
        .exclude(source=_IMPORTED)
        .exists()
    )


def imported_ratings_count(*, study_id: int) -> int:
    """The study's ratings imported from elsewhere: one per response rated, or, in a rubric
    of preferences only, one per rater and case (a verdict), as the analysis counts them."""
    ratings = Rating.objects.filter(
        assignment__test_case__study_id=study_id,
        assignment__source=_IMPORTED,
        assignment__status=Assignment.Status.SUBMITTED,
    )
    if rubric_rates_responses(study_id=study_id):
        return ratings.count()
    return ratings.values("assignment_id").distinct().count()


def rubric_rates_responses(*, study_id: int) -> bool:
    """Whether the study's rubric rates anything per response (else its ratings are
    verdicts: one per rater and case)."""
    study = Study.objects.select_related("rubric").get(pk=study_id)
    return any(d.scope == "response" for d in study.rubric.scoring_dimensions())


def imported_raters_per_case(*, study_id: int) -> dict[int, int]:
    """Of the sample cases with imported ratings: how many cases have each number of raters
    (``{raters: cases}``, ascending). A file sets its own design, whatever the study's."""
    per_case = (
        Assignment.objects.filter(
            test_case__study_id=study_id,
            test_case__purpose=TestCase.Purpose.SAMPLE,
            source=_IMPORTED,
            status=Assignment.Status.SUBMITTED,
        )
        .values("test_case_id")
        .annotate(raters=Count("rater_id", distinct=True))
        .values_list("raters", flat=True)
    )
    return dict(sorted(Counter(per_case).items()))
