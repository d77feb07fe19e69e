"""Writes for the comments digest: a coordinator's own "read" marks.

A mark is personal (each coordinator reads the digest for themselves), so it is not an
event of the study's audit trail, and it locks nothing: one upsert on the mark's unique
(study, reader, key) makes marking idempotent and safe when two tabs mark at once.
"""

from collections.abc import Sequence

from django.db import transaction
from django.utils import timezone

from annotation.models import Assignment, CommentRead
from annotation.selectors.comments import KEY_PATTERNS, MAX_PAGE_SIZE, CommentSource
from studies.errors import ApplicationError
from studies.models import Membership, Study

# At most a page of the digest at a time ("mark all shown as read").
MAX_KEYS = MAX_PAGE_SIZE
UNKNOWN = "Some of these comments are not in this study; nothing was marked. Reload the page."


class CommentReadError(ApplicationError):
    """The marks cannot be recorded; the message says why."""


def _rows_named(keys: Sequence[str]) -> tuple[set[str], set[int]]:
    """The assignment uuids (hex) and membership ids the keys name; refuses any other key."""
    assignments, raters = set(), set()
    for key in keys:
        for source, pattern in KEY_PATTERNS.items():
            match = pattern.fullmatch(key)
            if match is None:
                continue
            if source in (CommentSource.FEEDBACK, CommentSource.WITHDRAWAL):
                raters.add(int(match[1]))
            else:
                assignments.add(match[1])
            break
        else:
            raise CommentReadError(UNKNOWN)
    return assignments, raters


@transaction.atomic
def comments_mark_read(*, study: Study, reader, keys: Sequence[str]) -> int:
    """Mark the comments ``keys`` name as read by ``reader`` now; how many were marked.

    Marking again moves the mark to now. Every key must name a comment row of this study,
    or nothing is marked.
    """
    keys = sorted({str(key) for key in keys})
    if not keys:
        raise CommentReadError("Choose the comments to mark as read.")
    if len(keys) > MAX_KEYS:
        raise CommentReadError(f"Mark at most {MAX_KEYS} comments at a time.")
    assignments, raters = _rows_named(keys)
    found = {
        row.hex
        for row in Assignment.objects.filter(
            test_case__study=study, uuid__in=list(assignments)
        ).values_list("uuid", flat=True)
    }
    members = set(
        Membership.objects.filter(study=study, pk__in=raters).values_list("pk", flat=True)
    )
    if found != assignments or members != raters:
        raise CommentReadError(UNKNOWN)
    now = timezone.now()
    CommentRead.objects.bulk_create(
        [CommentRead(study=study, reader=reader, key=key, read_at=now) for key in keys],
        update_conflicts=True,
        unique_fields=["study", "reader", "key"],
        update_fields=["read_at"],
    )
    return len(keys)
