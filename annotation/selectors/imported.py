"""Reads about ratings imported from elsewhere, by system name (``Assignment.Source.IMPORTED``).

A study holds either ratings made in Concord (the screen, worksheets) or imported ones,
never both: imported by system name, they would let anyone who knows what the file said
(say, "system X: all 5s") read the key off the statistics by label of the ratings made in
Concord. These reads let the writes keep the two apart.
"""

from annotation.models import Assignment, Rating

_IMPORTED = Assignment.Source.IMPORTED


def imported_ratings_held(*, study_id: int) -> bool:
    """Whether the study holds any rating imported from elsewhere."""
    return Assignment.objects.filter(
        test_case__study_id=study_id, source=_IMPORTED, status=Assignment.Status.SUBMITTED
    ).exists()


def concord_ratings_held(*, study_id: int) -> bool:
    """Whether the study holds any rating made in Concord (on the screen or a worksheet)."""
    return (
        Assignment.objects.filter(test_case__study_id=study_id, status=Assignment.Status.SUBMITTED)
        .exclude(source=_IMPORTED)
        .exists()
    )


def imported_ratings_count(*, study_id: int) -> int:
    """The study's ratings imported from elsewhere (one per response rated)."""
    return Rating.objects.filter(
        assignment__test_case__study_id=study_id,
        assignment__source=_IMPORTED,
        assignment__status=Assignment.Status.SUBMITTED,
    ).count()
