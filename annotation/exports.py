"""Exports of a study's results: the raters' worksheet, a tidy long table, a data dictionary
and, once the study is unblinded, the key.

Blinding: before the study is unblinded nothing here reads a response's system, so no
cell, header, file name or row order can depend on it; rows are ordered by rater
pseudonym, test case position and key label. Raters appear only by pseudonym.

Every row is produced by a generator over ``.iterator()`` querysets, so a large study is
written out as it is read (CSV streams; .xlsx goes through openpyxl's write-only mode into
a temporary file) and is never held in memory whole.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC
from typing import IO, Any

from django.utils import timezone

from studies.bulk_rows import batches
from studies.errors import ApplicationError
from studies.models import BlindedLabel, Membership, Study, TestCase
from studies.rubric import answer_flag

from .export_files import csv_lines
from .export_profiles import profile_rows
from .models import Adjudication, Assignment, Rating
from .selectors import expected_answer_details
from .worksheets.columns import (
    WORKSHEET_FIXED,
    DimensionColumn,
    cell_value,
    dimension_columns,
)

CHUNK = 500

WORKSHEET_CSV = "worksheet-csv"
WORKSHEET_XLSX = "worksheet-xlsx"
LONG_CSV = "long-csv"
DICTIONARY_MD = "dictionary-md"
KEY_CSV = "key-csv"
# Gold items' and attention checks' answers against their expected answers, in a file of
# their own: they are not part of the sample, so the long table leaves them out.
GOLD_CSV = "gold-csv"
# Rater profiles beside pseudonyms, only of the raters who agreed to that
# (``annotation.export_profiles``).
PROFILES_CSV = "profiles-csv"
# Skipped cases, one row per skip: a skip is never a rating, so it is in no other file.
SKIPS_CSV = "skips-csv"
FORMATS = (
    WORKSHEET_CSV, WORKSHEET_XLSX, LONG_CSV, DICTIONARY_MD, KEY_CSV, GOLD_CSV, PROFILES_CSV,
    SKIPS_CSV,
)  # fmt: skip
# The column of a rater's own worksheet where they mark a case they skip ("yes", or one of
# the reasons ``Assignment.SkipReason``); read back by ``worksheets.validation``.
SKIPPED_HEADING = "Skipped"


class ExportNotAllowedError(ApplicationError):
    """The export would reveal the blinding key before the study is unblinded."""


def worksheet_header(
    *, study: Study, columns: list[DimensionColumn] | None = None, one_rater: bool = False
) -> list[str]:
    """The instructions' columns first and in their order, then Rater (and System, once
    unblinded): a rater's file reads as the template they were given. One rater's
    worksheet has a Skipped column before Rater, where they can mark a case they skip."""
    columns = columns if columns is not None else dimension_columns(study=study)
    skipped = [SKIPPED_HEADING] if one_rater else []
    header = [
        *WORKSHEET_FIXED[:2],
        *[c.header for c in columns],
        *WORKSHEET_FIXED[2:],
        *skipped,
        "Rater",
    ]
    if study.is_unblinded:
        header.append("System")
    return header


def _labels_by_case(study: Study) -> dict[int, list[str]]:
    labels: dict[int, list[str]] = {}
    rows = BlindedLabel.objects.filter(test_case__study=study).order_by("test_case_id", "label")
    for test_case_id, label in rows.values_list("test_case_id", "label").iterator():
        labels.setdefault(test_case_id, []).append(label)
    return labels


def _systems(study: Study) -> dict[tuple[int, str], str] | None:
    """(test case pk, key label) -> system name; None while the study is blinded."""
    if not study.is_unblinded:
        return None
    rows = BlindedLabel.objects.filter(test_case__study=study).values_list(
        "test_case_id", "label", "response__system__name"
    )
    systems = {(case, label): name for case, label, name in rows.order_by("test_case_id", "label")}
    # A case-level answer (a preference) concerns the pair: its systems in key order.
    pairs: dict[int, list[str]] = {}
    for (case, _), name in systems.items():
        pairs.setdefault(case, []).append(name)
    systems.update({(case, ""): " vs ".join(names) for case, names in pairs.items()})
    return systems


@dataclass(slots=True)
class _Rated:
    """What the exports read of one assignment, and of its ratings (``_RatingRow``).
    Plain slotted classes, not frozen ones: a frozen dataclass sets each field through
    ``object.__setattr__``, and a large study's export makes 100,000s of these."""

    pk: int
    test_case_id: int
    case_id: str
    stratum: str
    purpose: str
    rater: str  # the pseudonym
    rater_status: str
    status: str
    flipped: bool
    case_scores: dict
    notes: str
    confidence: str  # as stored: low, medium, high or ""
    active_seconds: int
    version: int
    source: str
    ratings: list

    @property
    def confidence_shown(self) -> str:
        return _CONFIDENCE.get(self.confidence, self.confidence)


@dataclass(slots=True)
class _RatingRow:
    label: str
    shown_label: str
    scores: dict
    total: int
    submitted_at: Any


_RATED_FIELDS = (
    "pk", "test_case_id", "test_case__case_id", "test_case__stratum", "test_case__purpose",
    "rater__pseudonym", "rater__status", "status", "flipped", "case_scores", "notes",
    "confidence", "active_seconds", "version", "source",
)  # fmt: skip
_CONFIDENCE = dict(Assignment.Confidence.choices)


def _assignments(
    study: Study,
    *,
    rater: str | None = None,
    submitted_only: bool = False,
    sample_only: bool = False,
) -> Iterator[_Rated]:
    """The raters' assignments in rater and case order, with their ratings: plain rows
    read a chunk at a time (no model instances: a large study's export reads 100,000s)."""
    assignments = Assignment.objects.filter(
        test_case__study=study, rater__role=Membership.Role.RATER
    ).order_by("rater__pseudonym", "test_case__position")
    if sample_only:
        assignments = assignments.filter(test_case__purpose=TestCase.Purpose.SAMPLE)
    if rater:
        assignments = assignments.filter(rater__pseudonym=rater)
    if submitted_only:
        assignments = assignments.filter(status=Assignment.Status.SUBMITTED)
    for chunk in batches(assignments.values_list(*_RATED_FIELDS).iterator(chunk_size=CHUNK), CHUNK):
        yield from _with_ratings(chunk)


def _with_ratings(chunk: list[tuple]) -> Iterator[_Rated]:
    ratings: dict[int, list[_RatingRow]] = {}
    rows = (
        Rating.objects.filter(assignment_id__in=[row[0] for row in chunk])
        .order_by("assignment_id", "label")
        .values_list("assignment_id", "label", "shown_label", "scores", "total", "submitted_at")
    )
    for assignment_id, *fields in rows:
        ratings.setdefault(assignment_id, []).append(_RatingRow(*fields))
    for row in chunk:
        yield _Rated(*row, ratings=ratings.get(row[0], []))


def worksheet_rows(*, study: Study, rater: str | None = None) -> Iterator[list]:
    """The raters' worksheet: a header, then one row per rater, test case and response.

    The whole study's worksheet lists the sample only, as the statistics count it: gold
    items and attention checks are left out (the gold export has them), so alpha computed
    from this file is the agreement page's. One rater's worksheet (``rater``) lists every
    case assigned to them, quality items included, unmarked: it doubles as their offline
    worksheet, where cases not yet submitted have empty score cells. ``Response`` is the key
    label, the same for every rater. Confidence and notes (per test case) repeat on each row.

    Skipped cases are not ratings: the whole study's worksheet leaves them out (the skips
    file lists them); one rater's worksheet marks them in its Skipped column.
    """
    columns = dimension_columns(study=study)
    yield worksheet_header(study=study, columns=columns, one_rater=rater is not None)
    labels = _labels_by_case(study)
    systems = _systems(study)
    for assignment in _assignments(study, rater=rater, sample_only=rater is None):
        skipped = assignment.status == Assignment.Status.SKIPPED
        if skipped and rater is None:
            continue
        submitted = assignment.status == Assignment.Status.SUBMITTED
        ratings = {r.label: r for r in assignment.ratings} if submitted else {}
        for label in labels.get(assignment.test_case_id, []):
            rating = ratings.get(label)
            row: list = [assignment.case_id, label]
            for column in columns:
                if rating is None:
                    row.append("")
                    continue
                source = assignment.case_scores if column.scope == "case" else rating.scores
                row.append(cell_value(column, source.get(column.key), flipped=assignment.flipped))
            if rating is None:
                row += ["", "", ""]
            else:
                row += [rating.total, assignment.confidence_shown, assignment.notes]
            if rater is not None:
                row.append("yes" if skipped else "")
            row.append(assignment.rater)
            if systems is not None:
                row.append(systems.get((assignment.test_case_id, label), ""))
            yield row


SKIPS_COLUMNS = (
    ("rater", "The rater's pseudonym."),
    ("rater_status", "The rater's participation now: active, paused, withdrawn or excluded."),
    ("test_case", "The test case id."),
    ("stratum", "The test case's stratum (empty: none)."),
    ("purpose", "sample, gold or attention: gold items and attention checks are not handed on."),
    ("reason", "The reason the rater chose (empty: none given): "
     + ", ".join(f"{value} ({label.lower()})" for value, label in Assignment.SkipReason.choices)
     + "."),
    ("note", "What the rater wrote, if anything."),
    ("skipped_at", "When the case was skipped (ISO 8601, UTC)."),
)  # fmt: skip


def skips_rows(*, study: Study) -> Iterator[list]:
    """One row per skipped case, by rater and case order: counted apart, never a rating.
    Nothing in it names a response or a system."""
    yield [name for name, _ in SKIPS_COLUMNS]
    skips = (
        Assignment.objects.filter(
            test_case__study=study,
            rater__role=Membership.Role.RATER,
            status=Assignment.Status.SKIPPED,
        )
        .order_by("rater__pseudonym", "test_case__position")
        .values_list(
            "rater__pseudonym",
            "rater__status",
            "test_case__case_id",
            "test_case__stratum",
            "test_case__purpose",
            "skip_reason",
            "skip_note",
            "skipped_at",
        )
    )
    for *fields, skipped_at in skips.iterator(chunk_size=CHUNK):
        yield [*fields, _timestamp(skipped_at)]


LONG_COLUMNS = [
    ("rater", "Rater pseudonym (R-01, R-02, ...)."),
    ("rater_status", "The rater's status in the study: active, paused, withdrawn or excluded."),
    (
        "phase",
        "pilot or main: pilot ratings were last submitted before the study opened (or the "
        "study is still in its pilot).",
    ),
    ("test_case", "Test case id (TC-ID)."),
    ("stratum", "The test case's stratum, if any."),
    (
        "response_label",
        "The response's label in the blinding key (the same for every rater); empty for "
        "dimensions rated once per test case.",
    ),
    (
        "shown_label",
        "The label the rater saw on screen; differs from response_label on flipped screens "
        "in the balanced side design. Ratings imported from worksheets use the key label.",
    ),
    (
        "flipped",
        "yes when the rater's screen showed the responses in reverse key order (balanced "
        "side design).",
    ),
    ("dimension", "Dimension key."),
    ("dimension_name", "Dimension name."),
    ("scope", "response (rated for each response) or case (rated once per test case)."),
    (
        "items",
        "Counted dimensions: what the rater counted, separated by ' | '; an item counted at "
        "half-weight starts with '½ '.",
    ),
    (
        "value",
        "The recorded answer: the count for counted dimensions (half-weight items count "
        "0.5); yes/no per criterion (separated by ';', in the rubric's order) for "
        "checklists; the chosen option's value for scales, the category code for categories "
        "and the signed preference for pairwise dimensions (empty when unanswered). "
        "Pairwise values are given in key order: negative prefers the response with key "
        "label A, positive key label B, 0 is a tie, whatever the rater's screen showed "
        "first. Empty for counted dimensions and checklists imported from worksheets.",
    ),
    (
        "points",
        "Points for this dimension (categories and pairwise preferences give none; an "
        "unanswered scale gives 0, so read the value column for those).",
    ),
    ("flagged", "yes when the rater flagged the dimension as hard to apply."),
    ("flag_note", "The rater's note on the flag."),
    (
        "imported",
        "yes when the rating came from an imported worksheet (counted dimensions and "
        "checklists then record points only).",
    ),
    ("response_total", "Total points of the response (sum over per-response dimensions)."),
    ("confidence", "The rater's confidence for the test case: Low, Medium or High."),
    ("active_seconds", "Seconds the rater actively spent on the test case (all visits)."),
    ("submitted_at", "When the rating was last submitted (ISO 8601, UTC)."),
    ("version", "Revision counter of the rater's work on the test case; rises on every save."),
    (
        "adjudication",
        "The test case's adjudication: waiting, done or unresolvable (cannot be resolved); "
        "empty when the case was never sent to adjudication. The same on every rater's row.",
    ),
    (
        "adjudicated_value",
        "The adjudicator's resolved answer to this dimension (and response), as a worksheet "
        "cell holds it (the rubric table above), in key order like value; empty when the "
        "dimension was not adjudicated or the case is not done. Agreement statistics never "
        "read it; the analysis takes it as the item's label where it exists.",
    ),
    (
        "adjudication_reason",
        "The adjudicator's reason for the decision (or for 'cannot be resolved').",
    ),
]
SYSTEM_COLUMN = (
    "system",
    "The system that wrote the response (only after unblinding); on a case-level row such "
    "as a preference, the pair in key order, 'A-system vs B-system'.",
)


def long_header(*, study: Study) -> list[str]:
    header = [name for name, _ in LONG_COLUMNS]
    if study.is_unblinded:
        header.append(SYSTEM_COLUMN[0])
    return header


def _adjudications(study: Study) -> dict[int, tuple[str, dict, str]]:
    """Test case pk -> (status, resolved answers, reason) of the study's adjudications."""
    rows = Adjudication.objects.filter(test_case__study=study).values_list(
        "test_case_id", "status", "answers", "reason"
    )
    return {case: (status, answers or {}, reason) for case, status, answers, reason in rows}


def _resolved(answers: dict, column, *, label: str) -> Any:
    """The adjudicator's resolved answer to the dimension, for the response ``label`` (""
    for a per-case one), as a worksheet cell holds it; "" when there is none."""
    if label:
        resolved = ((answers.get("responses") or {}).get(label) or {}).get(column.key)
    else:
        resolved = (answers.get("case") or {}).get(column.key)
    # Resolved on a screen that shows the pair in key order: never flipped.
    return "" if resolved is None else column.scoring.cell_out(resolved, flipped=False)


def long_rows(*, study: Study) -> Iterator[list]:
    """One row per submitted rating and dimension (per-case dimensions once per case).

    Each row is built as a list in ``LONG_COLUMNS`` order from the parts its assignment
    and rating share: a large study's table has millions of rows."""
    columns = dimension_columns(study=study)
    per_response = [c for c in columns if c.scope != "case"]
    per_case = [c for c in columns if c.scope == "case"]
    yield long_header(study=study)
    systems = _systems(study)
    adjudications = _adjudications(study)
    for assignment in _assignments(study, submitted_only=True):
        ratings = assignment.ratings
        if not ratings or assignment.purpose != TestCase.Purpose.SAMPLE:
            continue  # gold items and attention checks: see ``gold_rows``
        case_pk = assignment.test_case_id
        status, answers, reason = adjudications.get(case_pk, ("", {}, ""))
        flipped = assignment.flipped
        imported = "yes" if assignment.source == Assignment.Source.WORKSHEET else ""
        after = [assignment.confidence_shown, assignment.active_seconds]
        for rating in ratings:
            label = rating.label
            head = [assignment.rater, assignment.rater_status, study.phase_at(rating.submitted_at),
                    assignment.case_id, assignment.stratum, label, rating.shown_label,
                    "yes" if flipped else "no"]  # fmt: skip
            tail = [_timestamp(rating.submitted_at), assignment.version, status]
            system = None if systems is None else systems.get((case_pk, label), "")
            for column in per_response:
                yield _long_row(
                    head, column, rating.scores.get(column.key), flipped, imported,
                    rating.total, after, tail, _resolved(answers, column, label=label),
                    reason, system,
                )  # fmt: skip
        first = ratings[0]
        phase = study.phase_at(first.submitted_at)
        head = [assignment.rater, assignment.rater_status, phase, assignment.case_id,
                assignment.stratum, "", "", "yes" if flipped else "no"]  # fmt: skip
        tail = [_timestamp(first.submitted_at), assignment.version, status]
        system = None if systems is None else systems.get((case_pk, ""), "")
        for column in per_case:
            yield _long_row(
                head, column, assignment.case_scores.get(column.key), flipped, imported, "",
                after, tail, _resolved(answers, column, label=""), reason, system,
            )  # fmt: skip


GOLD_COLUMNS = (
    "rater", "rater_status", "test_case", "purpose", "response_label", "dimension",
    "expected", "given", "met", "confidence", "active_seconds", "submitted_at",
)  # fmt: skip


def gold_rows(*, study: Study) -> Iterator[list]:
    """One row per submitted gold item or attention check and expected answer: what was
    expected, what the rater gave and whether it met it (each dimension's kind says).
    Responses are named by key label, and by system only after unblinding."""
    yield [*GOLD_COLUMNS, *([SYSTEM_COLUMN[0]] if study.is_unblinded else [])]
    systems = _systems(study)
    dimensions = {d.key: d for d in study.rubric.scoring_dimensions()}
    assignments = (
        Assignment.objects.filter(
            test_case__study=study,
            rater__role=Membership.Role.RATER,
            status=Assignment.Status.SUBMITTED,
            test_case__expected__isnull=False,
        )
        .exclude(test_case__purpose=TestCase.Purpose.SAMPLE)
        .select_related("rater", "test_case__expected")
        .prefetch_related("ratings")
        .order_by("rater__pseudonym", "test_case__position")
    )
    for assignment in assignments.iterator(chunk_size=CHUNK):
        names = {rating.label: rating.label for rating in assignment.ratings.all()}
        for detail in expected_answer_details(
            assignment=assignment,
            expected=assignment.test_case.expected.answers or {},
            dimensions=dimensions,
            names=names,
        ):
            label = detail["label"]
            row = [
                assignment.rater.pseudonym,
                assignment.rater.status,
                assignment.test_case.case_id,
                assignment.test_case.purpose,
                label,
                detail["key"],
                detail["expected"],
                detail["given"],
                "yes" if detail["met"] else "no",
                assignment.get_confidence_display(),
                assignment.active_seconds,
                _timestamp(assignment.submitted_at),
            ]
            if systems is not None:
                row.append(systems.get((assignment.test_case_id, label), "") if label else "")
            yield row


def _long_row(
    head, column, entry, flipped, imported, total, after, tail, resolved, reason, system
) -> list:
    """One row of the long table: ``head`` (rater ... flipped), the dimension's answer,
    ``after`` (confidence, active seconds), ``tail`` (submitted_at, version, adjudication),
    the resolved answer and the reason, and the system once unblinded (else None)."""
    entry = entry or {}
    items, value = column.scoring.long_text(entry, flipped=flipped)
    points = column.scoring.recorded_points(entry)
    flagged, note = answer_flag(entry)
    row = [
        *head, column.key, column.name, column.scope, items, value,
        "" if points is None else points, "yes" if flagged else "", note, imported, total,
        *after, *tail, resolved, reason,
    ]  # fmt: skip
    if system is not None:
        row.append(system)
    return row


def _timestamp(value) -> str:
    if value is None:
        return ""
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def key_rows(*, study: Study) -> Iterator[list]:
    """The unblinding key: which system wrote the response under each label."""
    # Checked here, not inside the generator, so the refusal comes before any output.
    if not study.is_unblinded:
        raise ExportNotAllowedError("The key can be exported only after the study is unblinded.")
    return _key_rows(study)


def _key_rows(study: Study) -> Iterator[list]:
    yield ["TC-ID", "Response", "System"]
    rows = (
        BlindedLabel.objects.filter(test_case__study=study)
        .order_by("test_case__position", "label")
        .values_list("test_case__case_id", "label", "response__system__name")
    )
    for row in rows.iterator(chunk_size=CHUNK):
        yield list(row)


def data_dictionary(*, study: Study) -> str:
    """A markdown description of the exported files, for this study's rubric."""
    columns = dimension_columns(study=study)
    unblinded = study.is_unblinded
    lines = [
        f"# Data dictionary: {study.name}",
        "",
        f"Study `{study.slug}`, status {study.get_status_display().lower()}, "
        f"exported {_timestamp(timezone.now())}. Raters appear only by pseudonym.",
        "",
    ]
    if unblinded:
        lines += [
            f"The study was unblinded on {_timestamp(study.unblinded_at)}; the exports carry "
            f"the system of each response and the key is available (`{study.slug}-key.csv`: "
            f"TC-ID, Response, System). Blinding seed: {study.blinding_seed}; blinding "
            f"secret: `{study.blinding_secret}` (docs/blinding.md shows how the two give "
            "the key).",
            "",
        ]
    else:
        lines += [
            "The study is still blinded: no export carries the system of a response.",
            "",
        ]
    lines += [
        "## Rubric",
        "",
        "| column | key | dimension | kind | rated | worksheet cell |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for c in columns:
        rated = "once per test case" if c.scope == "case" else "per response"
        cell = c.describe_cell()
        lines.append(f"| {c.header} | `{c.key}` | {c.name} | {c.kind} | {rated} | {cell} |")
    header = worksheet_header(study=study, columns=columns)
    lines += [
        "",
        "## Worksheet (`worksheet.csv`, `worksheet.xlsx`)",
        "",
        "The worksheet raters know, its columns first and in the instructions' order, then "
        f"the rater's pseudonym: `{' | '.join(header)}`. One row per rater, test case and "
        "response, ordered by rater, test case and response label; Response is the key "
        "label, the same for every rater. Score cells are as in the table above; cases not "
        "yet submitted have empty cells. Total is the sum of the points of the per-response"
        " dimensions. Confidence and Notes belong to the test case and repeat on each of "
        "its rows; dimensions rated once per test case repeat likewise. The same layout "
        "(with or without the Rater column, in any column order: columns are read by their "
        "heading) can be filled in offline and imported. Skipped cases are left out; one "
        f"rater's worksheet has a `{SKIPPED_HEADING}` column before Rater, `yes` on the rows "
        "of a case they skipped, which they can fill in offline (`yes`, or a reason: "
        f"{', '.join(Assignment.SkipReason.values)}) to skip a case; its Notes are the "
        "skip's note.",
        "",
        "## Skips (`skips.csv`)",
        "",
        "One row per skipped case. A skip is not a rating: no other file and no statistic "
        "counts it, and the case is offered to another rater where the design allows.",
        "",
        "| column | meaning |",
        "| --- | --- |",
        *[f"| {name} | {meaning} |" for name, meaning in SKIPS_COLUMNS],
        "",
        "## Long table (`long.csv`)",
        "",
        "One row per submitted rating and dimension.",
        "",
        "| column | meaning |",
        "| --- | --- |",
    ]
    long_columns = list(LONG_COLUMNS) + ([SYSTEM_COLUMN] if unblinded else [])
    lines += [f"| {name} | {meaning} |" for name, meaning in long_columns]
    lines += [
        "",
        "## Rater profiles (`rater-profiles.csv`)",
        "",
        "Only the raters who gave a profile under its own consent and agreed that an export "
        "may carry it beside their pseudonym; everyone else is absent from this file, and no "
        "other file carries a profile. Columns: Rater (the pseudonym), then one per profile "
        "question, headed by its key; an answer the rater withheld reads "
        '"prefer not to say".',
    ]
    lines += [
        "",
        "## Conventions",
        "",
        "- In the CSV files, text cells that a spreadsheet would run as a formula (starting "
        "with =, +, -, @, a tab or a carriage return) are prefixed with a single quote ('); so "
        "is =, +, - or @ after a comma, semicolon, tab or pipe inside a cell (see;'=1+1), as a "
        "spreadsheet set to that delimiter would start a cell there. Importing removes these "
        "quotes. In the Excel worksheet every text cell is stored as text (never a formula), "
        "so it holds exactly what was written, with no quote.",
        "- The Excel worksheet's header row is frozen and its columns sized to their content.",
        "- The worksheet CSV starts with a UTF-8 byte order mark so that Excel reads it as "
        "UTF-8; the long CSV has none. Both use commas and double quotes (RFC 4180).",
        "- Times are ISO 8601 in UTC.",
        "",
    ]
    return "\n".join(lines)


def export_filename(*, study: Study, fmt: str, rater: str | None = None) -> str:
    suffix = f"-{rater}" if rater else ""
    return {
        WORKSHEET_CSV: f"{study.slug}-worksheet{suffix}.csv",
        WORKSHEET_XLSX: f"{study.slug}-worksheet{suffix}.xlsx",
        LONG_CSV: f"{study.slug}-long.csv",
        DICTIONARY_MD: f"{study.slug}-data-dictionary.md",
        KEY_CSV: f"{study.slug}-key.csv",
        GOLD_CSV: f"{study.slug}-gold.csv",
        PROFILES_CSV: f"{study.slug}-rater-profiles.csv",
        SKIPS_CSV: f"{study.slug}-skips.csv",
    }[fmt]


def export_text(*, study: Study, fmt: str, rater: str | None = None) -> Iterator[str]:
    """The text formats as a stream of strings."""
    if fmt == WORKSHEET_CSV:
        return csv_lines(worksheet_rows(study=study, rater=rater), bom=True)
    if fmt == LONG_CSV:
        return csv_lines(long_rows(study=study))
    if fmt == KEY_CSV:
        return csv_lines(key_rows(study=study))
    if fmt == GOLD_CSV:
        return csv_lines(gold_rows(study=study))
    if fmt == PROFILES_CSV:
        return csv_lines(profile_rows(study=study))
    if fmt == SKIPS_CSV:
        return csv_lines(skips_rows(study=study))
    if fmt == DICTIONARY_MD:
        return iter([data_dictionary(study=study)])
    raise ValueError(f"Unknown text export {fmt!r}.")


def export_write(*, study: Study, fmt: str, file: IO[bytes], rater: str | None = None) -> None:
    """Write any export to a binary file."""
    if fmt not in FORMATS:
        raise ValueError(f"Unknown export {fmt!r}; choose one of {', '.join(FORMATS)}.")
    if fmt == WORKSHEET_XLSX:
        from .export_xlsx import xlsx_write

        xlsx_write(worksheet_rows(study=study, rater=rater), file)
        return
    for chunk in export_text(study=study, fmt=fmt, rater=rater):
        file.write(chunk.encode("utf-8"))
