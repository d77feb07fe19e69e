"""Writes for studies, one concern per module.

``settings`` (creating a study, its settings), ``lifecycle`` (the status changes and their
table), ``cases`` (test cases and their blinding), ``rubric`` (dimensions), ``membership``
(who takes part). Every refusal is a ``StudySetupError`` (an ``ApplicationError``) whose
message tells the coordinator what stopped the change; every change is recorded in the
study's audit trail, and changes to what the analysis reads are announced
(``studies.signals``). The names below are the public ones: import them from here.
"""

from studies.errors import CaseImportError, StudySetupError

from .cases import (
    case_upload_create,
    case_upload_import_run,
    case_upload_import_schedule,
    case_upload_import_start,
    case_upload_import_status,
    case_upload_preview_keep,
    identity_mentions_rescan,
    test_cases_add,
    test_cases_import,
    test_cases_remove_all,
)
from .lifecycle import (
    TRANSITIONS,
    CloseNotConfirmedError,
    Transition,
    study_close,
    study_open,
    study_pilot_start,
    study_reopen,
    transitions_available,
)
from .membership import (
    RATER_ACTION_LABELS,
    RATER_ACTIONS,
    membership_add,
    rater_actions_available,
    rater_add,
    rater_pause_automatic,
    rater_status_change,
)
from .rubric import (
    RUBRIC_FROZEN,
    dimension_delete,
    dimension_level_set,
    dimension_move,
    dimension_save,
    rubric_copy,
    rubric_create_from_preset,
    rubric_replace,
    rubric_replace_with_preset,
)
from .settings import (
    ANALYSIS_FIELDS,
    ASSIGNMENT_FIELDS,
    PROTOCOL_FIELD_LABELS,
    PROTOCOL_FIELDS,
    SETTINGS_FIELDS,
    study_create,
    study_update,
)

__all__ = [
    "ANALYSIS_FIELDS",
    "ASSIGNMENT_FIELDS",
    "PROTOCOL_FIELDS",
    "PROTOCOL_FIELD_LABELS",
    "RATER_ACTION_LABELS",
    "RATER_ACTIONS",
    "rater_pause_automatic",
    "RUBRIC_FROZEN",
    "SETTINGS_FIELDS",
    "TRANSITIONS",
    "CloseNotConfirmedError",
    "CaseImportError",
    "StudySetupError",
    "Transition",
    "case_upload_create",
    "case_upload_preview_keep",
    "case_upload_import_run",
    "case_upload_import_schedule",
    "case_upload_import_start",
    "case_upload_import_status",
    "identity_mentions_rescan",
    "dimension_delete",
    "dimension_level_set",
    "dimension_move",
    "dimension_save",
    "membership_add",
    "rater_add",
    "rater_actions_available",
    "rater_status_change",
    "rubric_copy",
    "rubric_create_from_preset",
    "rubric_replace",
    "rubric_replace_with_preset",
    "study_close",
    "study_create",
    "study_open",
    "study_pilot_start",
    "study_reopen",
    "study_update",
    "test_cases_add",
    "test_cases_import",
    "test_cases_remove_all",
    "transitions_available",
]
