"""Writes for annotation, one concern per module.

The one rating write path, by concept: ``assignment_rows`` (the cases a rater is given, in
a seeded order), ``rating_checks`` (limits, errors, cleaning and scoring an answer),
``rating_locks`` (the lock a write takes and the count of a save), ``drafts`` (autosaved
drafts), ``submission`` (submitted ratings and their revisions), ``rating_imports``
(worksheets and ratings imported by system). Then ``participation`` (consent, end-of-study
feedback, withdrawal), ``training`` (training examples, qualification tests and their
settings), ``calibration_call`` (the calls the lead holds with the raters, and who
attended), ``assignment`` (the assignment designs and the Assign action). The rating names
below are the public ones: import them from here; the other modules are used as modules.
"""

from .assignment_rows import assignments_create, assignments_create_all
from .drafts import DRAFT_TOO_LARGE, MAX_DRAFT_BYTES, draft_save
from .exposure import rater_time_zone_report
from .participation import ratings_withdraw
from .rating_checks import (
    CONCORD_HELD_MESSAGE,
    IMPORTED_HELD_MESSAGE,
    MAX_NOTES_LENGTH,
    RatingClosedError,
    RatingInvalidError,
    StaleVersionError,
    submission_check,
)
from .rating_imports import (
    ImportCounts,
    design_room_check,
    ratings_import,
    ratings_import_by_system,
)
from .submission import rating_submit

__all__ = [
    "CONCORD_HELD_MESSAGE",
    "DRAFT_TOO_LARGE",
    "IMPORTED_HELD_MESSAGE",
    "MAX_DRAFT_BYTES",
    "MAX_NOTES_LENGTH",
    "ImportCounts",
    "RatingClosedError",
    "RatingInvalidError",
    "StaleVersionError",
    "assignments_create",
    "assignments_create_all",
    "design_room_check",
    "draft_save",
    "rater_time_zone_report",
    "rating_submit",
    "ratings_import",
    "ratings_import_by_system",
    "ratings_withdraw",
    "submission_check",
]
