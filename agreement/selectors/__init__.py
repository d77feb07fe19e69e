"""Reads for agreement, by concept: the study's ratings as matrices (``ratings``), the
comparison of systems (``comparison``), the stored result and its freshness (``results``)
and quality control (``qc``). Every read is importable from here."""

from .comparison import dimension_role, study_comparison_data, study_min_ratings
from .qc import (
    dismissed_flags,
    dismissed_flags_by_rater,
    qc_case_records,
    qc_checks,
    qc_quality_answers,
    qc_raters,
    qc_rules,
    rater_decisions,
    rater_reinstated_at,
)
from .ratings import (
    CONFIDENCE_LEVELS,
    EXCLUDED,
    ROW_COLUMNS,
    SAMPLE,
    RatingStamp,
    StudyRatings,
    SubmittedRatings,
    study_ratings,
    study_submitted_ratings,
    study_system_order,
)
from .results import (
    PAGE_RESULT_SECONDS,
    KeptResult,
    agreement_awaits_run,
    agreement_full_run,
    agreement_is_stale,
    analysis_inputs,
    analysis_inputs_but_ratings,
    awaiting_run,
    computed_for_inputs,
    dimensions_missing_target,
    study_agreement,
)
from .setup import setup_checklist_analysis_plan

__all__ = [
    "CONFIDENCE_LEVELS",
    "EXCLUDED",
    "KeptResult",
    "PAGE_RESULT_SECONDS",
    "ROW_COLUMNS",
    "RatingStamp",
    "SAMPLE",
    "StudyRatings",
    "SubmittedRatings",
    "agreement_awaits_run",
    "agreement_full_run",
    "agreement_is_stale",
    "analysis_inputs",
    "analysis_inputs_but_ratings",
    "awaiting_run",
    "computed_for_inputs",
    "dimension_role",
    "dimensions_missing_target",
    "dismissed_flags",
    "qc_case_records",
    "qc_quality_answers",
    "qc_rules",
    "dismissed_flags_by_rater",
    "qc_checks",
    "qc_raters",
    "rater_decisions",
    "rater_reinstated_at",
    "setup_checklist_analysis_plan",
    "study_agreement",
    "study_comparison_data",
    "study_min_ratings",
    "study_ratings",
    "study_submitted_ratings",
    "study_system_order",
]
