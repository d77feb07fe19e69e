"""Views of the rating side, by stage: rating, before the first item, after the last, and
the coordinator's pages for training and qualification."""

from .coordinator import (
    onboarding_setup,
    training_item_delete,
    training_item_edit,
    training_item_key,
)
from .onboarding import (
    study_consent,
    study_practice,
    study_qualification,
    study_training,
    training_item_answer,
)
from .rating import (
    assignment_draft,
    assignment_rate,
    assignment_skip,
    assignment_unskip,
    home,
    session_restored,
    study_assignments,
    study_next,
)
from .wrapup import study_feedback, study_self_check, study_withdraw

__all__ = [
    "assignment_draft",
    "assignment_rate",
    "assignment_skip",
    "assignment_unskip",
    "home",
    "onboarding_setup",
    "session_restored",
    "study_assignments",
    "study_consent",
    "study_feedback",
    "study_next",
    "study_practice",
    "study_qualification",
    "study_self_check",
    "study_training",
    "study_withdraw",
    "training_item_answer",
    "training_item_delete",
    "training_item_edit",
    "training_item_key",
]
