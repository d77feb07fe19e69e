"""The comments digest (QC-006, "weekly read of free-text comments"): every free-text
comment the raters of a study wrote, newest first, with each coordinator's read marks.

What counts as a comment (``CommentSource``): text a rater wrote about the study's cases
or its rubric, which the coordinators may read today on other pages:

- a rating's notes (``Assignment.notes``, once submitted);
- a flag's note ("hard to apply", ``flag_note`` in each stored answer), per dimension, on
  a response or on the case;
- a skip's reason and note (``Assignment.skip_reason``, ``skip_note``);
- end-of-study feedback (``StudyFeedback``): each dimension's comment, suggestions,
  patterns and notes;
- a withdrawal's reason (``Withdrawal.reason``).

Not comments: drafts (not yet said), replaced revisions (the digest shows what stands),
consent disclosures (about the rater, not the cases; on the onboarding page), training and
qualification answers (about worked examples, not the study's cases), and calibration-call
notes (the lead's, not a rater's).

Blinding: a comment names the response as the rater saw it on screen (``shown_label``),
never the label of the blinding key and never a system; the ratings are read without
their key label or response, so nothing here can map one to the other. Keys and the order
of a case's comments use the shown labels only.

Bounded: a page is found by keyset (``DigestCursor``: time, source, row, place in the
row), so each source reads at most a page and two rows, however many ratings the study
holds; the unread filter and count are asked of the database.
"""

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from django.db.models import CharField, Count, Exists, OuterRef, Prefetch, Q, TextChoices, Value
from django.db.models.fields.json import KeyTextTransform, KeyTransform
from django.db.models.functions import Cast, Concat, Replace
from django.db.models.lookups import GreaterThan

from annotation.models import Assignment, CommentRead, Rating, StudyFeedback, Withdrawal
from studies.models import Study
from studies.rubric import FLAG_NOTE, answer_flag

PAGE_SIZE = 50
MAX_PAGE_SIZE = 200


class CommentSource(TextChoices):
    NOTE = "note", "Rating note"
    FLAG = "flag", "Flag note"
    SKIP = "skip", "Skip"
    FEEDBACK = "feedback", "End-of-study feedback"
    WITHDRAWAL = "withdrawal", "Withdrawal reason"


# Comments saved at the same instant are ordered by source, then row, then place in row.
_RANK = {
    CommentSource.NOTE: 5,
    CommentSource.FLAG: 4,
    CommentSource.SKIP: 3,
    CommentSource.FEEDBACK: 2,
    CommentSource.WITHDRAWAL: 1,
}
# The parts of end-of-study feedback besides each dimension's comment, as the form names them.
FEEDBACK_PARTS = {
    "suggestions": "Rubric feedback",
    "patterns": "Pattern observations",
    "notes": "Anything else",
}
CASE = "case"  # where a flag on the case (not on one response) sits in its key
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# What a read mark's key may be; the service checks each names a row of the study.
KEY_PATTERNS = {
    CommentSource.NOTE: re.compile(r"note:([0-9a-f]{32})"),
    CommentSource.SKIP: re.compile(r"skip:([0-9a-f]{32})"),
    CommentSource.FLAG: re.compile(r"flag:([0-9a-f]{32}):([A-Z]|case):([-\w]{1,50})", re.ASCII),
    CommentSource.FEEDBACK: re.compile(
        r"feedback:([0-9]{1,12}):(suggestions|patterns|notes|dim:[-\w]{1,50})", re.ASCII
    ),
    CommentSource.WITHDRAWAL: re.compile(r"withdrawal:([0-9]{1,12})"),
}


# A skip with something said about it; a rater who withdrew and had their ratings deleted
# took their skips with them.
_SKIPPED = (
    Q(skipped_at__isnull=False)
    & (~Q(skip_note="") | ~Q(skip_reason=""))
    & ~Q(rater__withdrawal__data=Withdrawal.Data.DELETE)
)


@dataclass(frozen=True, order=True)
class DigestCursor:
    """Where a page ends: the digest continues with the comments ordered before it."""

    when: datetime
    rank: int
    tie: int
    sub: int

    def encode(self) -> str:
        micros = (self.when - _EPOCH) // timedelta(microseconds=1)
        return f"{micros}.{self.rank}.{self.tie:x}.{self.sub}"

    @classmethod
    def decode(cls, text: str) -> "DigestCursor | None":
        """The cursor ``text`` names, or None when it is not one."""
        match = re.fullmatch(r"(-?[0-9]{1,18})\.([1-5])\.([0-9a-f]{1,32})\.(-?[0-9]{1,4})", text)
        if match is None:
            return None
        try:
            when = _EPOCH + timedelta(microseconds=int(match[1]))
        except OverflowError:
            return None
        return cls(when, int(match[2]), int(match[3], 16), int(match[4]))


@dataclass(frozen=True)
class DigestFilters:
    since: datetime | None = None
    dimension: str = ""  # a dimension key: flags and feedback on that dimension only
    stratum: str = ""  # cases of that stratum only (feedback and withdrawals have none)
    source: str = ""  # one of CommentSource, or every source
    unread: bool = False  # only the comments the reader has not marked read since written
    after: DigestCursor | None = None


@dataclass(frozen=True)
class Comment:
    key: str
    source: str
    when: datetime
    rater: str  # the pseudonym
    text: str
    read: bool
    order: DigestCursor
    case: str = ""  # the coordinator-side case id
    stratum: str = ""
    dimension: str = ""  # its name
    dimension_key: str = ""
    response: str = ""  # "Response B" as the rater saw it; "" for the case or none
    reason: str = ""  # a skip's reason, as its choice reads

    @property
    def source_label(self) -> str:
        return CommentSource(self.source).label


@dataclass(frozen=True)
class DigestPage:
    comments: list[Comment]
    next: DigestCursor | None
    dimensions: list[tuple[str, str]] = field(default_factory=list)


# SQL pieces ---------------------------------------------------------------------------------


def _hex(expression):
    """A UUID column as 32 hex digits, on PostgreSQL (hyphens removed) and SQLite alike."""
    return Replace(Cast(expression, CharField(max_length=36)), Value("-"), Value(""))


def _key(*parts):
    return Concat(*[Value(p) if isinstance(p, str) else p for p in parts], output_field=CharField())


def _has_text(json_field, dimension_key: str, name: str):
    """A non-empty text at ``json_field[dimension_key][name]``."""
    return GreaterThan(KeyTextTransform(name, KeyTransform(dimension_key, json_field)), Value(""))


def _unread(*, study: Study, reader, key, when):
    """No read mark of the reader's on ``key`` made since ``when`` (an outer reference)."""
    return ~Exists(
        CommentRead.objects.filter(study=study, reader=reader, key=key, read_at__gte=when)
    )


def _after(cursor: DigestCursor | None, rank: int, when: str, tie: str, tie_value) -> Q:
    """The rows of a source at or before the cursor (its own row is trimmed in Python)."""
    if cursor is None:
        return Q()
    if rank < cursor.rank:
        return Q(**{f"{when}__lte": cursor.when})
    if rank > cursor.rank:
        return Q(**{f"{when}__lt": cursor.when})
    return Q(**{f"{when}__lt": cursor.when}) | Q(
        **{when: cursor.when, f"{tie}__lte": tie_value(cursor.tie)}
    )


def _since(filters: DigestFilters, when: str) -> Q:
    return Q(**{f"{when}__gte": filters.since}) if filters.since else Q()


def _uuid_tie(value: int) -> uuid.UUID:
    return uuid.UUID(int=min(value, 2**128 - 1))


def _id_tie(value: int) -> int:
    return min(value, 2**63 - 1)


def _dimensions(study: Study) -> list[tuple[str, str]]:
    return list(study.rubric.dimensions.order_by("position").values_list("key", "name"))


# Sources ------------------------------------------------------------------------------------


class _Reading:
    """One page's reading of the sources, for one reader and one set of filters."""

    def __init__(self, *, study: Study, reader, filters: DigestFilters, rows: int):
        self.study = study
        self.reader = reader
        self.filters = filters
        self.rows = rows
        self.dimensions = _dimensions(study)
        self.names = dict(self.dimensions)
        # The dimensions whose comments are wanted.
        self.keys = (
            [filters.dimension] if filters.dimension else [key for key, _ in self.dimensions]
        )

    def unread(self, key, when):
        return _unread(study=self.study, reader=self.reader, key=key, when=when)

    def _assignments(self, rank: int, when: str):
        rows = Assignment.objects.filter(test_case__study=self.study)
        if self.filters.stratum:
            rows = rows.filter(test_case__stratum=self.filters.stratum)
        return (
            rows.filter(_since(self.filters, when))
            .filter(_after(self.filters.after, rank, when, "uuid", _uuid_tie))
            .select_related("rater", "test_case")
            .only(
                "uuid",
                "notes",
                "case_scores",
                "skip_reason",
                "skip_note",
                "skipped_at",
                "submitted_at",
                "rater__pseudonym",
                "test_case__case_id",
                "test_case__stratum",
            )
            .order_by(f"-{when}", "-uuid")
        )

    def _by_rater(self, model, rank: int, when: str):
        return (
            model.objects.filter(rater__study=self.study)
            .filter(_since(self.filters, when))
            .filter(_after(self.filters.after, rank, when, "rater_id", _id_tie))
            .select_related("rater")
            .order_by(f"-{when}", "-rater_id")
        )

    def _comment(self, assignment, source, when, sub, **fields) -> Comment:
        return Comment(
            source=source,
            when=when,
            rater=assignment.rater.pseudonym,
            case=assignment.test_case.case_id,
            stratum=assignment.test_case.stratum,
            read=False,
            order=DigestCursor(when, _RANK[source], assignment.uuid.int, -sub),
            **fields,
        )

    # Each source: the rows wanted (at most ``self.rows``), and their comments.

    def notes(self) -> list[Comment]:
        if self.filters.dimension:
            return []
        rows = self._assignments(_RANK[CommentSource.NOTE], "submitted_at").filter(
            status=Assignment.Status.SUBMITTED
        )
        rows = rows.exclude(notes="")
        if self.filters.unread:
            rows = rows.filter(
                self.unread(_key("note:", _hex(OuterRef("uuid"))), OuterRef("submitted_at"))
            )
        return [
            self._comment(
                a, CommentSource.NOTE, a.submitted_at, 0, key=f"note:{a.uuid.hex}", text=a.notes
            )
            for a in rows[: self.rows]
        ]

    def skips(self) -> list[Comment]:
        if self.filters.dimension:
            return []
        rows = self._assignments(_RANK[CommentSource.SKIP], "skipped_at").filter(_SKIPPED)
        if self.filters.unread:
            rows = rows.filter(
                self.unread(_key("skip:", _hex(OuterRef("uuid"))), OuterRef("skipped_at"))
            )
        return [
            self._comment(
                a,
                CommentSource.SKIP,
                a.skipped_at,
                0,
                key=f"skip:{a.uuid.hex}",
                text=a.skip_note,
                reason=a.get_skip_reason_display() if a.skip_reason else "",
            )
            for a in rows[: self.rows]
        ]

    def flags(self) -> list[Comment]:
        if not self.keys:
            return []
        rows = self._assignments(_RANK[CommentSource.FLAG], "submitted_at").filter(
            status=Assignment.Status.SUBMITTED
        )
        on_case, on_response = Q(), Q()
        for key in self.keys:
            case_note = _has_text("case_scores", key, FLAG_NOTE)
            response_note = _has_text("scores", key, FLAG_NOTE)
            if self.filters.unread:
                case_note = Q(case_note) & self.unread(
                    _key("flag:", _hex(OuterRef("uuid")), f":{CASE}:{key}"),
                    OuterRef("submitted_at"),
                )
                response_note = Q(response_note) & self.unread(
                    _key(
                        "flag:",
                        _hex(OuterRef("assignment__uuid")),
                        ":",
                        OuterRef("shown_label"),
                        f":{key}",
                    ),
                    OuterRef("submitted_at"),
                )
            on_case |= Q(case_note)
            on_response |= Q(response_note)
        # The ratings without their key label or response: only what the rater saw.
        ratings = Rating.objects.filter(assignment=OuterRef("pk")).filter(on_response)
        rows = rows.filter(on_case | Q(Exists(ratings))).prefetch_related(
            Prefetch(
                "ratings",
                queryset=Rating.objects.only("assignment_id", "shown_label", "scores").order_by(
                    "shown_label"
                ),
            )
        )
        comments = []
        for a in rows[: self.rows]:
            places = [(r.shown_label, r.scores or {}) for r in a.ratings.all()]
            places.append((CASE, a.case_scores or {}))
            sub = 0
            for shown, scores in places:
                for key in self.keys:
                    note = answer_flag(scores.get(key))[1]
                    if not note:
                        continue
                    comments.append(
                        self._comment(
                            a,
                            CommentSource.FLAG,
                            a.submitted_at,
                            sub,
                            key=f"flag:{a.uuid.hex}:{shown}:{key}",
                            text=note,
                            dimension=self.names.get(key, key),
                            dimension_key=key,
                            response="" if shown == CASE else f"Response {shown}",
                        )
                    )
                    sub += 1
        return comments

    def _feedback_parts(self) -> list[tuple[str, str, str]]:
        """(key part, dimension key, SQL field or JSON path) of each feedback text wanted."""
        parts = [(f"dim:{key}", key, "") for key in self.keys]
        if not self.filters.dimension:
            parts += [(name, "", name) for name in FEEDBACK_PARTS]
        return parts

    def feedback(self) -> list[Comment]:
        if self.filters.stratum:
            return []
        rank = _RANK[CommentSource.FEEDBACK]
        rows = self._by_rater(StudyFeedback, rank, "updated_at")
        wanted = Q()
        for part, key, column in self._feedback_parts():
            has = Q(_has_text("dimensions", key, "comment")) if key else ~Q(**{column: ""})
            if self.filters.unread:
                has &= self.unread(
                    _key("feedback:", Cast(OuterRef("rater_id"), CharField()), f":{part}"),
                    OuterRef("updated_at"),
                )
            wanted |= has
        if not wanted:
            return []
        comments = []
        for row in rows.filter(wanted)[: self.rows]:
            sub = 0
            for part, key, column in self._feedback_parts():
                if key:
                    answer = (row.dimensions or {}).get(key)
                    text = str(answer.get("comment") or "") if isinstance(answer, dict) else ""
                    label = self.names.get(key, key)
                else:
                    text, label = getattr(row, column), FEEDBACK_PARTS[column]
                if not text:
                    continue
                comments.append(
                    Comment(
                        key=f"feedback:{row.rater_id}:{part}",
                        source=CommentSource.FEEDBACK,
                        when=row.updated_at,
                        rater=row.rater.pseudonym,
                        text=text,
                        read=False,
                        order=DigestCursor(row.updated_at, rank, row.rater_id, -sub),
                        dimension=label,
                        dimension_key=key,
                    )
                )
                sub += 1
        return comments

    def withdrawals(self) -> list[Comment]:
        if self.filters.stratum or self.filters.dimension:
            return []
        rank = _RANK[CommentSource.WITHDRAWAL]
        rows = self._by_rater(Withdrawal, rank, "withdrawn_at").exclude(reason="")
        if self.filters.unread:
            rows = rows.filter(
                self.unread(
                    _key("withdrawal:", Cast(OuterRef("rater_id"), CharField())),
                    OuterRef("withdrawn_at"),
                )
            )
        return [
            Comment(
                key=f"withdrawal:{row.rater_id}",
                source=CommentSource.WITHDRAWAL,
                when=row.withdrawn_at,
                rater=row.rater.pseudonym,
                text=row.reason,
                read=False,
                order=DigestCursor(row.withdrawn_at, rank, row.rater_id, 0),
            )
            for row in rows[: self.rows]
        ]

    def read(self) -> list[Comment]:
        readers: dict[str, Callable[[], list[Comment]]] = {
            CommentSource.NOTE: self.notes,
            CommentSource.FLAG: self.flags,
            CommentSource.SKIP: self.skips,
            CommentSource.FEEDBACK: self.feedback,
            CommentSource.WITHDRAWAL: self.withdrawals,
        }
        wanted = [self.filters.source] if self.filters.source else list(readers)
        comments = [c for source in wanted for c in readers[source]()]
        if self.filters.after is not None:
            comments = [c for c in comments if c.order < self.filters.after]
        marks = dict(
            CommentRead.objects.filter(
                study=self.study, reader=self.reader, key__in={c.key for c in comments}
            ).values_list("key", "read_at")
        )
        comments = [replace(c, read=c.key in marks and marks[c.key] >= c.when) for c in comments]
        if self.filters.unread:
            comments = [c for c in comments if not c.read]
        return sorted(comments, key=lambda c: c.order, reverse=True)


# Reads --------------------------------------------------------------------------------------


def comments_digest(
    *, study: Study, reader, filters: DigestFilters, limit: int = PAGE_SIZE
) -> DigestPage:
    """One page of the study's comments, newest first, each with the reader's read mark.

    ``next`` is where the following page starts, or None on the last page.
    """
    limit = max(1, min(limit, MAX_PAGE_SIZE))
    # A page and two rows per source: every row but the cursor's own holds a wanted
    # comment, so a source that has more than a page is seen to have more.
    reading = _Reading(study=study, reader=reader, filters=filters, rows=limit + 2)
    comments = reading.read()
    page = comments[:limit]
    more = len(comments) > limit
    return DigestPage(
        comments=page, next=page[-1].order if more else None, dimensions=reading.dimensions
    )


def comments_unread_count(*, study: Study, reader) -> int:
    """How many of the study's comments the reader has not marked read since written.

    Counted by the database, a fixed number of queries whatever the study's size.
    """
    reading = _Reading(study=study, reader=reader, filters=DigestFilters(unread=True), rows=0)
    assignments = Assignment.objects.filter(test_case__study=study)
    counts = {
        "notes": Count(
            "pk",
            filter=Q(status=Assignment.Status.SUBMITTED)
            & ~Q(notes="")
            & reading.unread(_key("note:", _hex(OuterRef("uuid"))), OuterRef("submitted_at")),
        ),
        "skips": Count(
            "pk",
            filter=_SKIPPED
            & reading.unread(_key("skip:", _hex(OuterRef("uuid"))), OuterRef("skipped_at")),
        ),
    }
    on_response = {}
    for n, key in enumerate(reading.keys):
        counts[f"case{n}"] = Count(
            "pk",
            filter=Q(status=Assignment.Status.SUBMITTED)
            & Q(_has_text("case_scores", key, FLAG_NOTE))
            & reading.unread(
                _key("flag:", _hex(OuterRef("uuid")), f":{CASE}:{key}"), OuterRef("submitted_at")
            ),
        )
        on_response[f"response{n}"] = Count(
            "pk",
            filter=Q(assignment__status=Assignment.Status.SUBMITTED)
            & Q(_has_text("scores", key, FLAG_NOTE))
            & reading.unread(
                _key(
                    "flag:", _hex(OuterRef("assignment__uuid")), ":", OuterRef("shown_label"),
                    f":{key}",
                ),
                OuterRef("submitted_at"),
            ),
        )  # fmt: skip
    total = sum(assignments.aggregate(**counts).values())
    if on_response:
        ratings = Rating.objects.filter(assignment__test_case__study=study)
        total += sum(ratings.aggregate(**on_response).values())
    feedback = {}
    for n, (part, key, column) in enumerate(reading._feedback_parts()):
        has = Q(_has_text("dimensions", key, "comment")) if key else ~Q(**{column: ""})
        feedback[f"part{n}"] = Count(
            "pk",
            filter=has
            & reading.unread(
                _key("feedback:", Cast(OuterRef("rater_id"), CharField()), f":{part}"),
                OuterRef("updated_at"),
            ),
        )
    total += sum(StudyFeedback.objects.filter(rater__study=study).aggregate(**feedback).values())
    total += (
        Withdrawal.objects.filter(rater__study=study)
        .exclude(reason="")
        .filter(
            reading.unread(
                _key("withdrawal:", Cast(OuterRef("rater_id"), CharField())),
                OuterRef("withdrawn_at"),
            )
        )
        .count()
    )
    return total


def comment_strata(*, study: Study) -> list[str]:
    """The strata of the study's cases, for the digest's filter."""
    return sorted(
        set(
            study.test_cases.exclude(stratum="")
            .values_list("stratum", flat=True)
            .distinct()
            .order_by()
        )
    )
