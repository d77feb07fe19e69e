"""The raters' worksheet (one row per rater, test case and response, as raters know it) and
the skips file (one row per skipped case). Raters appear only by pseudonym; a system only
once the study is unblinded."""

from collections.abc import Iterator

from studies.models import Membership, Study
from studies.rubric import response_total

from .export_assignments import CHUNK, _assignments, _labels_by_case, _systems, _timestamp
from .models import Assignment
from .worksheets.columns import WORKSHEET_FIXED, DimensionColumn, cell_value, dimension_columns

# The column of a rater's own worksheet where they mark a case they skip ("yes", or one of
# the reasons ``Assignment.SkipReason``); read back by ``worksheets.validation``.
SKIPPED_HEADING = "Skipped"


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
    scorings = [c.scoring for c in columns]
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
                # Blank, never 0, when a part is unanswered: the rubric's one rule.
                total = response_total(scorings, rating.scores)
                row += ["" if total is None else total, assignment.confidence_shown,
                        assignment.notes]  # fmt: skip
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
