"""The worksheet's columns and cells: the rubric as the table raters know.

``TC-ID | Response | <one column per dimension> | Total | Confidence | Notes`` (a Rater
column optional). The exports write these columns and the import reads them back.
"""

import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
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


# Kinds whose cell holds the rater's choice rather than points derived from what they noted.
CHOICE_KINDS = ("scale", "categorical", "pairwise")


# A plain number such as "-2" or "-0.5" is a value, not a formula: it is left as it is.
PLAIN_NUMBER = re.compile(r"-?\d+(\.\d+)?")


def neutralise(value: Any) -> Any:
    """Prefix text that a spreadsheet would run as a formula with a single quote."""
    if (
        isinstance(value, str)
        and value.startswith(FORMULA_PREFIXES)
        and not PLAIN_NUMBER.fullmatch(value)
    ):
        return "'" + value
    return value


def unneutralise(text: str) -> str:
    """Undo ``neutralise`` on text read back from a worksheet."""
    if text.startswith("'") and text[1:].startswith(FORMULA_PREFIXES):
        return text[1:]
    return text


@dataclass(frozen=True)
class DimensionColumn:
    """A rubric dimension as a worksheet column.

    Counted dimensions and checklists hold points; scales hold the chosen option's value
    (which is also its points); categories hold the category code; pairwise preferences
    hold the signed preference in key order (negative prefers key label A).
    """

    key: str
    name: str
    header: str
    kind: str
    scope: str
    max_points: int
    choices: tuple  # the values a cell may hold
    aliases: dict = field(default_factory=dict, compare=False)  # lower-case label -> value

    @property
    def holds_choice(self) -> bool:
        return self.kind in CHOICE_KINDS

    def describe_choices(self) -> str:
        values = [str(v) for v in self.choices]
        if all(isinstance(v, int) for v in self.choices) and len(values) > 2:
            ints = sorted(self.choices)
            if ints == list(range(ints[0], ints[-1] + 1)):
                return f"{ints[0]} to {ints[-1]}"
        return ", ".join(values)


def dimension_header(dimension) -> str:
    """The worksheet column of a dimension: "Depth" for the key "depth"."""
    custom = str(dimension.config.get("column") or "").strip()
    return custom or dimension.key.replace("-", " ").replace("_", " ").title()


def dimension_columns(*, study: Study) -> list[DimensionColumn]:
    columns = []
    for dimension in study.rubric.dimensions.all():
        scoring = dimension.scoring()
        aliases: dict = {}
        if dimension.kind == "scale":
            choices = tuple(option.value for option in scoring.options)
            aliases = {option.label.lower(): option.value for option in scoring.options}
        elif dimension.kind == "categorical":
            choices = tuple(category.value for category in scoring.categories)
            aliases = {category.label.lower(): category.value for category in scoring.categories}
            aliases.update(
                {category.value.lower(): category.value for category in scoring.categories}
            )
        elif dimension.kind == "pairwise":
            choices = tuple(value for value, _ in scoring.options())
            aliases = {label.lower(): value for value, label in scoring.options()}
        elif getattr(scoring, "bands", None):
            choices = tuple(sorted({band.points for band in scoring.bands}))
        else:
            choices = tuple(range(scoring.max_points + 1))
        columns.append(
            DimensionColumn(
                key=dimension.key,
                name=dimension.name,
                header=dimension_header(dimension),
                kind=dimension.kind,
                scope=getattr(scoring, "scope", "response"),
                max_points=scoring.max_points,
                choices=choices,
                aliases=aliases,
            )
        )
    return columns


def choice_in_key_order(column: DimensionColumn, choice, *, flipped: bool):
    """A pairwise choice is recorded relative to the rater's screen; give it in key order."""
    if column.kind == "pairwise" and flipped and isinstance(choice, int):
        return -choice
    return choice


def cell_value(column: DimensionColumn, entry: dict | None, *, flipped: bool):
    """What a worksheet cell shows for a stored score ("" when there is none)."""
    if not entry:
        return ""
    if column.holds_choice:
        choice = choice_in_key_order(column, entry.get("choice"), flipped=flipped)
        return "" if choice is None else choice
    return entry.get("points", "")


def cell_read(column: DimensionColumn, raw: str) -> dict:
    """The stored score for a worksheet cell, marked imported; ValueError says what is wrong."""
    if not raw:
        if column.holds_choice:  # an unanswered choice, as on the rating screen
            return {"choice": None, "points": 0, "imported": True}
        raise ValueError("The score is empty.")
    value = column.aliases.get(raw.lower())
    if value is None:
        try:
            number = Decimal(raw)
        except InvalidOperation:
            number = None
        if number is not None and number == number.to_integral_value():
            value = int(number)
        elif column.kind != "categorical":
            raise ValueError(
                f"{raw} is not a whole number; {column.header} takes {column.describe_choices()}."
            )
        else:
            value = raw
    if value not in column.choices:
        raise ValueError(
            f"{raw} is not allowed; {column.header} takes {column.describe_choices()}."
        )
    if column.kind == "scale":
        return {"choice": value, "points": value, "imported": True}
    if column.holds_choice:
        return {"choice": value, "points": 0, "imported": True}
    return {"points": value, "imported": True}
