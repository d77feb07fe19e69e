"""The autosaved draft: the rating form as the rater left it, kept to what the rubric
defines, and refused when it would overwrite a newer save."""

import json

from django.db import transaction
from django.utils import timezone

from annotation.models import Assignment

from .rating_checks import (
    STALE_MESSAGE,
    RatingInvalidError,
    StaleVersionError,
    _clean_case_fields,
    _score_labels,
)
from .rating_locks import _locked, _saved

# A draft holds one form: a few hundred answers and notes at most.
MAX_DRAFT_BYTES = 256 * 1024


DRAFT_TOO_LARGE = (
    "This draft is too large to save. Shorten the listed items or notes; your answers "
    "are kept in this tab."
)


def _answers_known(dimensions, raw) -> dict:
    """The answers of a draft to the given dimensions, each cleaned by its kind."""
    raw = raw if isinstance(raw, dict) else {}
    return {d.key: d.clean(raw[d.key]) for d in dimensions if isinstance(raw.get(d.key), dict)}


def _draft_clean(*, assignment: Assignment, payload: dict) -> dict:
    """The form as the rater left it, keeping only what the rubric defines; raises on bad input.

    Unknown labels, unknown dimension keys and fields a kind does not have are dropped,
    and a draft larger than ``MAX_DRAFT_BYTES`` is refused.
    """
    study = assignment.test_case.study
    labels = list(assignment.test_case.labels.values_list("label", flat=True))
    # Reject what could never be submitted.
    _score_labels(study=study, labels=labels, payload=payload)
    confidence, notes = _clean_case_fields(payload)
    dimensions = study.rubric.scoring_dimensions()
    per_response = [d for d in dimensions if d.scope == "response"]
    per_case = [d for d in dimensions if d.scope == "case"]
    responses = payload.get("responses")
    if not isinstance(responses, dict):
        responses = {}
    draft = {
        "responses": {
            label: _answers_known(per_response, responses[label])
            for label in labels
            if isinstance(responses.get(label), dict)
        },
        "case": _answers_known(per_case, payload.get("case")),
        "confidence": confidence,
        "notes": notes,
    }
    if len(json.dumps(draft)) > MAX_DRAFT_BYTES:
        raise RatingInvalidError(DRAFT_TOO_LARGE)
    return draft


@transaction.atomic
def draft_save(
    *, assignment: Assignment, payload: dict, expected_version: int, active_seconds: int = 0
) -> Assignment:
    """Store the form as the rater left it. Refuses a save based on an older version,
    unless it brings exactly the answers stored: that is no conflict, nothing is lost.

    The page sends its answers as it unloads; when the rater reloads, the new page may be
    rendered before that save lands, and then sends the same answers with the version it
    was rendered at (after a pause and reinstatement, say). Only answers that differ from
    a newer stored version are a conflict between two tabs or devices.
    """
    locked = _locked(assignment)
    draft = _draft_clean(assignment=locked, payload=payload)
    if expected_version != locked.version:
        if draft != locked.draft:
            raise StaleVersionError(STALE_MESSAGE)
        return locked  # stored already; the caller learns the current version
    locked.draft = draft
    if locked.status == Assignment.Status.TODO:
        locked.status = Assignment.Status.DRAFT
    _saved(locked, claimed_seconds=active_seconds, now=timezone.now())
    locked.save(
        update_fields=[
            "draft",
            "status",
            "version",
            "active_seconds",
            "last_saved_at",
            "updated_at",
        ]
    )
    return locked
