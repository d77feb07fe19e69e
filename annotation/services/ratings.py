"""The old home of the rating writes, split by concept (see the package's docstring); its
names are imported from there. Kept so that code written against this path still imports;
new code imports from ``annotation.services``."""

from .assignment_rows import assignments_create, assignments_create_all
from .drafts import DRAFT_TOO_LARGE, MAX_DRAFT_BYTES, draft_save
from .participation import ratings_withdraw
from .rating_checks import (
    CONCORD_HELD_MESSAGE,
    EXPLANATION_FIRST_MESSAGE,
    IMPORTED_HELD_MESSAGE,
    MAX_NOTES_LENGTH,
    STALE_MESSAGE,
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
from .rating_locks import MAX_ACTIVE_SECONDS_PER_SAVE, MOVED_ON_MESSAGE, SKIPPED_MESSAGE
from .submission import NO_VERSION_MESSAGE, STORE_BATCH, Submission, rating_submit

__all__ = [
    "CONCORD_HELD_MESSAGE",
    "DRAFT_TOO_LARGE",
    "EXPLANATION_FIRST_MESSAGE",
    "IMPORTED_HELD_MESSAGE",
    "MAX_ACTIVE_SECONDS_PER_SAVE",
    "MAX_DRAFT_BYTES",
    "MAX_NOTES_LENGTH",
    "MOVED_ON_MESSAGE",
    "NO_VERSION_MESSAGE",
    "SKIPPED_MESSAGE",
    "STALE_MESSAGE",
    "STORE_BATCH",
    "ImportCounts",
    "RatingClosedError",
    "RatingInvalidError",
    "StaleVersionError",
    "Submission",
    "assignments_create",
    "assignments_create_all",
    "design_room_check",
    "draft_save",
    "rating_submit",
    "ratings_import",
    "ratings_import_by_system",
    "ratings_withdraw",
    "submission_check",
]
