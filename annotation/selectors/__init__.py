"""Reads for the rating side, by concept: progress (``progress``), the rating screen
(``screen``), onboarding (``onboarding``), the cases raters share (``overlap``); the daily
exposure limits (``exposure``); the calibration call's items and attendance
(``calibration``); feedback on a rater's answers (``feedback``). Every read is importable
from here. Nothing here joins the system of a response."""

from .adjudicated_labels import adjudication_counts
from .calibration import (
    CalibrationItem,
    CalibrationSheet,
    CallAttendanceRow,
    calibration_attendance,
    calibration_attendees_choices,
    calibration_calls,
    calibration_sheet,
)
from .exposure import Exposure, LimitCounts, exposure_today, held_back, raters_at_limit_today
from .feedback import SelfCheck, expected_answer_details, gold_feedback, self_check
from .incomplete import IncompleteRatings, incomplete_ratings
from .onboarding import (
    OnboardingState,
    RaterOnboardingRow,
    item_responses,
    onboarding_blocking_step,
    onboarding_overview,
    onboarding_settings,
    onboarding_state,
    practice_case,
    qualification_next_item,
    qualification_open_attempt,
    setup_checklist_onboarding,
    training_answers,
    training_items,
)
from .overlap import (
    rater_pair_overlap_range,
)
from .progress import (
    CASES_PER_PAGE,
    Progress,
    case_progress_page,
    case_progress_table,
    next_unrated,
    pause_kind,
    pending_cases,
    rater_assignments,
    rater_memberships,
    rater_progress,
    rater_progress_table,
    rater_pseudonyms,
    rating_hold,
    study_rating_activity,
    study_rating_counts,
)
from .queue import study_adjudicators
from .screen import (
    CasePosition,
    blinded_responses,
    case_position,
    screen_labels,
)
from .skips import SkipSummary, study_skip_summary

__all__ = [
    "IncompleteRatings",
    "incomplete_ratings",
    "Exposure",
    "LimitCounts",
    "exposure_today",
    "held_back",
    "pending_cases",
    "raters_at_limit_today",
    "SkipSummary",
    "study_skip_summary",
    "adjudication_counts",
    "study_adjudicators",
    "CASES_PER_PAGE",
    "CalibrationItem",
    "CalibrationSheet",
    "CallAttendanceRow",
    "CasePosition",
    "OnboardingState",
    "Progress",
    "RaterOnboardingRow",
    "SelfCheck",
    "blinded_responses",
    "calibration_attendance",
    "calibration_attendees_choices",
    "calibration_calls",
    "calibration_sheet",
    "case_position",
    "case_progress_page",
    "case_progress_table",
    "expected_answer_details",
    "gold_feedback",
    "item_responses",
    "next_unrated",
    "onboarding_blocking_step",
    "onboarding_overview",
    "onboarding_settings",
    "onboarding_state",
    "practice_case",
    "qualification_next_item",
    "qualification_open_attempt",
    "rater_assignments",
    "rater_memberships",
    "pause_kind",
    "rater_pair_overlap_range",
    "setup_checklist_onboarding",
    "rater_progress",
    "rater_progress_table",
    "rater_pseudonyms",
    "rating_hold",
    "screen_labels",
    "self_check",
    "study_rating_activity",
    "study_rating_counts",
    "training_answers",
    "training_items",
]
