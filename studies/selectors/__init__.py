"""Reads for coordinators, by concept: the set-up and its checklist (``setup``), the rubric
as shown and its adjudication rules (``rubric``), rater welfare (``welfare``), quality
control's settings (``quality``), the frozen protocol (``protocol``), test-case files and the
blinding check (``cases``), the audit trail (``events``), invitations and API tokens
(``invitations``). Every read is importable from here."""

from .accounts import (
    LABEL_READERS,
    account_reads_blinded_labels,
)
from .cases import (
    MENTIONS_SHOWN,
    case_upload_kept_mentions,
    case_upload_preview,
    case_upload_preview_key,
    study_blinding_check,
    study_identity_mention_counts,
    study_identity_mentions,
    study_identity_report,
    study_next_case_position,
    test_cases_check,
    test_cases_preview,
    test_cases_preview_blinding_check,
)
from .events import (
    QUALITY_ITEM_EVENTS,
    RATER_DECISIONS,
    RATER_HISTORY,
    SETUP_EVENTS,
    study_setup_events,
)
from .invitations import (
    InvitationRow,
    api_tokens_for_user,
    invitation_find,
    invitation_state,
    invitations_for_study,
    invitations_for_user,
    token_hash,
)
from .protocol import (
    PROTOCOL_CHUNK,
    study_protocol_chunks,
    study_protocol_fingerprint,
)
from .quality import (
    QUALITY_ID_WORDS,
    quality_ids_standing_out,
    quality_settings_for,
)
from .rubric import (
    adjudication_rules_table,
    rubric_for_display,
)
from .setup import (
    coordinated_studies,
    study_case_summary,
    study_has_assignments,
    study_open_problems,
    study_rating_started,
    study_setup_checklist,
    study_setup_locked_reason,
    study_unfinished_work,
)
from .welfare import (
    case_content_warnings,
    information_sheet_additions,
    profile_questions_of,
    skips_handed_on,
    study_strata,
    welfare_settings_for,
    welfare_strata_table,
)

__all__ = [
    "LABEL_READERS",
    "account_reads_blinded_labels",
    "test_cases_preview",
    "MENTIONS_SHOWN",
    "study_identity_mentions",
    "study_identity_mention_counts",
    "study_next_case_position",
    "study_identity_report",
    "study_blinding_check",
    "test_cases_check",
    "case_upload_kept_mentions",
    "case_upload_preview_key",
    "case_upload_preview",
    "test_cases_preview_blinding_check",
    "SETUP_EVENTS",
    "RATER_DECISIONS",
    "RATER_HISTORY",
    "QUALITY_ITEM_EVENTS",
    "study_setup_events",
    "token_hash",
    "invitation_state",
    "InvitationRow",
    "invitations_for_study",
    "invitation_find",
    "invitations_for_user",
    "api_tokens_for_user",
    "study_protocol_chunks",
    "PROTOCOL_CHUNK",
    "study_protocol_fingerprint",
    "quality_settings_for",
    "QUALITY_ID_WORDS",
    "quality_ids_standing_out",
    "rubric_for_display",
    "adjudication_rules_table",
    "coordinated_studies",
    "study_rating_started",
    "study_setup_locked_reason",
    "study_has_assignments",
    "study_case_summary",
    "study_unfinished_work",
    "study_setup_checklist",
    "study_open_problems",
    "case_content_warnings",
    "skips_handed_on",
    "information_sheet_additions",
    "welfare_settings_for",
    "study_strata",
    "welfare_strata_table",
    "profile_questions_of",
]
