"""An erased person's own free text in the rating data: every mention of their username,
e-mail or name replaced (``studies.services.erasure`` calls this through
``studies.erasure_holders``). Only the mentions change: the text, the answers, their points
and every count stay, so no statistic moves.
"""

from collections.abc import Callable
from typing import Any

from django.db.models import Model, QuerySet

from annotation.models import (
    Adjudication,
    Assignment,
    ConsentRecord,
    Rating,
    RatingRevision,
    StudyFeedback,
    TrainingAnswer,
    Withdrawal,
)


def _rows_redact(rows: QuerySet, fields: list[str], redact: Callable[[Any], Any]) -> int:
    """Rewrite ``fields`` of each row where a mention was replaced; how many rows."""
    model: type[Model] = rows.model
    changed = 0
    for row in rows.values("pk", *fields).order_by("pk").iterator():
        redacted = {name: redact(row[name]) for name in fields}
        new = {name: value for name, value in redacted.items() if value != row[name]}
        if new:
            model._default_manager.filter(pk=row["pk"]).update(**new)
            changed += 1
    return changed


def own_text_redact(*, user, redact: Callable[[Any], Any]) -> dict[str, int]:
    """The free text ``user`` wrote as a rater or adjudicator, with mentions replaced."""
    mine = {"rater__user": user}
    return {
        # Notes, a skip's note, the form as left (its notes and counted items), the
        # per-case answers and each response's answers (counted items, flags' comments).
        "rating notes and answers": _rows_redact(
            Assignment.objects.filter(**mine),
            ["notes", "skip_note", "draft", "case_scores"],
            redact,
        )
        + _rows_redact(Rating.objects.filter(assignment__rater__user=user), ["scores"], redact)
        + _rows_redact(
            RatingRevision.objects.filter(assignment__rater__user=user), ["submitted"], redact
        ),
        "comments": _rows_redact(
            StudyFeedback.objects.filter(**mine),
            ["dimensions", "suggestions", "patterns", "notes"],
            redact,
        )
        + _rows_redact(Withdrawal.objects.filter(**mine), ["reason"], redact)
        + _rows_redact(ConsentRecord.objects.filter(**mine), ["disclosure"], redact)
        + _rows_redact(TrainingAnswer.objects.filter(**mine), ["answer"], redact)
        + _rows_redact(
            Adjudication.objects.filter(adjudicator__user=user),
            ["answers", "reason", "draft"],
            redact,
        ),
    }
