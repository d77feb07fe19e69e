"""The worksheet's columns and cells: the rubric as the table raters know.

``TC-ID | Response | <one column per dimension> | Total | Confidence | Notes`` (a Rater
column optional). The exports write these columns and the import reads them back.
"""

import re
from dataclasses import dataclass, field
from typing import Any

from studies.models import Study

MAX_BYTES = 5 * 1024 * 1024


MAX_ROWS = 20_000


MAX_PROBLEMS = 200


CONFIDENCE = {"low": "low", "medium": "medium", "high": "high"}


# The worksheet's own columns, around the rubric's: TC-ID, Response, <dimensions>, ...
WORKSHEET_FIXED = ("TC-ID", "Response", "Total", "Confidence", "Notes")


# A cell starting with one of these is read as a formula by spreadsheet programs.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


# A plain number such as "-2" or "-0.5" is a value, not a formula: it is left as it is.
# ASCII digits only: "-" before another script's digit is no number a spreadsheet reads.
PLAIN_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")


# A cell that a spreadsheet opens with another delimiter (comma, semicolon, tab, pipe)
# starts after it, perhaps after spaces or a double quote: opened with ";" as the delimiter,
# "see;=1+1" is the cells "see" and "=1+1", a formula. A single quote put before the
# formula's first character makes it text, at the start of the cell and after each such
# delimiter. Quotes already in that place get one more, so that ``unneutralise`` gives back
# exactly what was written, whatever it was.
_FORMULA_AFTER_DELIMITER = re.compile(r"(?P<before>[,;\t|][\s\"]*)(?=(?P<quotes>'*)[=+\-@])")
_NEUTRALISED_AFTER_DELIMITER = re.compile(r"(?P<before>[,;\t|][\s\"]*)'(?='*[=+\-@])")
_FORMULA_AT_START = re.compile(r"'*[=+\-@\t\r]")
# A text cell a spreadsheet would run as a formula (Excel marks it text with a quote prefix).
FORMULA_START = re.compile(r"[=+\-@\t\r]")


# Without one of these characters a text starts no formula anywhere (the common case, for
# which an export of a large study calls ``neutralise`` millions of times), and without a
# delimiter it can start one only at its start.
_FORMULA_CHARACTER = re.compile(r"[=+\-@\t\r]")
_DELIMITER = re.compile(r"[,;\t|]")


def neutralise(value: Any) -> Any:
    """Put a single quote before each place where a spreadsheet would start a formula."""
    if (
        not isinstance(value, str)
        or not _FORMULA_CHARACTER.search(value)
        or PLAIN_NUMBER.fullmatch(value)
    ):
        return value
    if _DELIMITER.search(value):
        value = _FORMULA_AFTER_DELIMITER.sub(r"\g<before>'", value)
    return "'" + value if _FORMULA_AT_START.match(value) else value


def unneutralise(text: str) -> str:
    """Undo ``neutralise`` on text read back from a worksheet."""
    if text.startswith("'") and _FORMULA_AT_START.match(text, 1):
        text = text[1:]
    return _NEUTRALISED_AFTER_DELIMITER.sub(r"\g<before>", text)


@dataclass(frozen=True)
class DimensionColumn:
    """A rubric dimension as a worksheet column; its kind (``scoring``) reads and writes
    the cells: counted dimensions and checklists hold points, scales the chosen option's
    value (also its points), categories the category code, pairwise preferences the signed
    preference in key order (negative prefers key label A)."""

    key: str
    name: str
    header: str
    scoring: Any = field(compare=False)  # the kind instance, from ``studies.rubric.KINDS``

    @property
    def kind(self) -> str:
        return self.scoring.kind

    @property
    def scope(self) -> str:
        return self.scoring.scope

    @property
    def max_points(self) -> int:
        return self.scoring.max_points

    @property
    def choices(self) -> tuple:
        return self.scoring.cell_choices

    def describe_choices(self) -> str:
        return self.scoring.describe_choices()

    def describe_cell(self) -> str:
        return self.scoring.describe_cell()


def dimension_header(dimension) -> str:
    """The worksheet column of a dimension: "Depth" for the key "depth"."""
    custom = str(dimension.config.get("column") or "").strip()
    return custom or dimension.key.replace("-", " ").replace("_", " ").title()


def dimension_columns(*, study: Study) -> list[DimensionColumn]:
    return [
        DimensionColumn(
            key=dimension.key,
            name=dimension.name,
            header=dimension_header(dimension),
            scoring=dimension.scoring(),
        )
        for dimension in study.rubric.dimensions.all()
    ]


def cell_value(column: DimensionColumn, entry: dict | None, *, flipped: bool):
    """What a worksheet cell shows for a stored answer ("" when there is none)."""
    return column.scoring.cell_out(entry, flipped=flipped)


def cell_read(column: DimensionColumn, text: str) -> dict:
    """The stored answer for a worksheet cell; a RubricValueError (a ValueError) says what
    is wrong, e.g. "3 is not allowed; Depth takes 0, 2, 4, 5."."""
    return column.scoring.read_cell(text, header=column.header)
