"""Reads for agreement, by concept: the stored result and its freshness (``results``),
quality control (``qc``), the analysis plan (``plan``), each importable from here; and the
study's ratings as matrices (``ratings``) and the comparison of systems (``comparison``),
imported from their modules by the statistics that read them, since they load numpy (a web
process starts without it: tests/config/test_lean_imports.py)."""

from .plan import dimension_role, study_min_ratings
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
    "KeptResult",
    "PAGE_RESULT_SECONDS",
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
    "study_min_ratings",
]
