"""Exports of a study's results: the raters' worksheet, a tidy long table, a data dictionary
and, once the study is unblinded, the key.

Blinding: before the study is unblinded nothing here reads a response's system, so no
cell, header, file name or row order can depend on it; rows are ordered by rater
pseudonym, test case position and key label. Raters appear only by pseudonym.

Every row is produced by a generator over ``.iterator()`` querysets, so a large study is
written out as it is read (CSV streams; .xlsx goes through openpyxl's write-only mode into
a temporary file) and is never held in memory whole.

This module names the formats and writes any of them; the rows are built by concept in
``export_worksheet`` (the worksheet, the skips), ``export_long`` (the long table, the gold
file) and ``export_dictionary``, from what ``export_assignments`` reads.
"""

from collections.abc import Iterator
from typing import IO

from studies.errors import ApplicationError
from studies.models import BlindedLabel, Study

from .export_assignments import CHUNK
from .export_dictionary import data_dictionary
from .export_files import csv_lines
from .export_long import LONG_COLUMNS, gold_rows, long_rows
from .export_profiles import profile_rows
from .export_worksheet import SKIPPED_HEADING, skips_rows, worksheet_header, worksheet_rows

# The rows' builders, named here too: callers ask this module for any export.
__all__ = [
    "DICTIONARY_MD", "FORMATS", "GOLD_CSV", "KEY_CSV", "LONG_COLUMNS", "LONG_CSV",
    "PROFILES_CSV", "SKIPPED_HEADING", "SKIPS_CSV", "WORKSHEET_CSV", "WORKSHEET_XLSX",
    "ExportNotAllowedError", "data_dictionary", "export_filename", "export_text",
    "export_write", "gold_rows", "key_rows", "long_rows", "skips_rows", "worksheet_header",
    "worksheet_rows",
]  # fmt: skip

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


class ExportNotAllowedError(ApplicationError):
    """The export would reveal the blinding key before the study is unblinded."""


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
