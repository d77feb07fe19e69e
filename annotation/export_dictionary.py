"""The data dictionary: a markdown description of the exported files, for a study's rubric."""

from django.utils import timezone

from studies.models import Study

from .export_assignments import _timestamp
from .export_long import LONG_COLUMNS, SYSTEM_COLUMN
from .export_worksheet import SKIPPED_HEADING, SKIPS_COLUMNS, worksheet_header
from .models import Assignment
from .selectors.imported import imported_ratings_count
from .worksheets.columns import dimension_columns


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
        imported = imported_ratings_count(study_id=study.pk)
        if imported:
            lines += [
                f"{imported} ratings were imported from elsewhere by system name. They are "
                "left out of the worksheet, the long table and the gold file until the study "
                "is unblinded: listed by response label beside the file that named their "
                "systems, they would give the key. The agreement statistics count them.",
                "",
            ]
    lines += [
        "## Rubric",
        "",
        "| column | key | dimension | kind | rated | answer | worksheet cell |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for c in columns:
        rated = "once per test case" if c.scope == "case" else "per response"
        answer = "required" if c.scoring.required else "optional"
        cell = c.describe_cell()
        lines.append(
            f"| {c.header} | `{c.key}` | {c.name} | {c.kind} | {rated} | {answer} | {cell} |"
        )
    lines += [
        "",
        "**Unanswered answers.** A dimension left unanswered has an empty cell (worksheet), "
        "an empty value and empty points (long table): it is no valid rating of that "
        "dimension and never counts as 0 points. A required dimension is answered in every "
        "rating submitted since answers became required; a rating stored earlier may still "
        "lack one (the quality page counts them). For counted dimensions and checklists, "
        "nothing counted and no criterion met are answers (0 points). **Totals** are the sum "
        "of a response's points over its per-response dimensions with points, and are "
        "empty when any of them is unanswered. **The minimum of valid ratings** (the "
        "analysis plan's) applies to every question the report asks, the Total included: an "
        "item with fewer valid (answered) ratings has no label, and its test case is left "
        "out of that question and counted.",
    ]
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
        " dimensions, empty when any of them is unanswered. Confidence and Notes belong to "
        "the test case and repeat on each of its rows; dimensions rated once per test case "
        "repeat likewise. The same layout "
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
