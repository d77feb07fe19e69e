"""Writes for annotation, one concern per module.

``ratings`` (assignments, autosaved drafts and submitted ratings: the one rating write
path), ``participation`` (consent, end-of-study feedback, withdrawal), ``training``
(training examples, qualification tests and their settings), ``calibration_call`` (the
calls the lead holds with the raters, and who attended), ``assignment`` (the
assignment designs and the Assign action). The rating names below are the public ones of
``ratings``: import them from here; the other modules are used as modules.
"""

from .exposure import rater_time_zone_report
from .ratings import (
    CONCORD_HELD_MESSAGE,
    DRAFT_TOO_LARGE,
    IMPORTED_HELD_MESSAGE,
    MAX_DRAFT_BYTES,
    MAX_NOTES_LENGTH,
    ImportCounts,
    RatingClosedError,
    RatingInvalidError,
    StaleVersionError,
    assignments_create,
    assignments_create_all,
    design_room_check,
    draft_save,
    rating_submit,
    ratings_import,
    ratings_import_by_system,
    ratings_withdraw,
    submission_check,
)

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
