"""Counted with bands: the rater lists what they counted; points come from bands over it.

Stored ``{"items": [{"text", "half"}]}``; ``items`` is ``None`` when only the points were
recorded (a worksheet filled in offline holds points only): ``clean`` accepts
``{"points": p}`` for that, p being one of the bands' points. Without points either, no
answer was given (an empty list is an answer: nothing counted).

Items marked half-weight count 0.5 (``CountedDimension.count`` is the one place this is
written in Python; ``dimension-kinds.js`` has it for the live total). Bands are read as
"at least the lower bound", so a count falls in the highest band whose lower bound it
reaches: with the reference depth bands (0-1 -> 0, 2-3 -> 2, 4-5 -> 4, 6+ -> 5), 1.5
factors score 0, 2 score 2, 5.5 score 4 and 6 score 5. Half-weight items therefore never
lift a response into a band it has not fully reached.
"""

import re
from dataclasses import dataclass
from decimal import Decimal

from core.user_input import quoted

from .base import (
    ConfigField,
    PointsInCell,
    RubricValueError,
    cell_number,
    clean_flag,
    expected_parts,
    format_count,
    points_only,
)

MAX_ITEMS = 60
MAX_ITEM_LENGTH = 500

# The long table's text for a counted dimension's items: "½ " marks a half-weight item.
HALF_MARK = "½ "
ITEM_SEPARATOR = " | "
# A line of the builder's bands: the lowest count, a colon (or an arrow), the points.
BAND_LINE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(?::|->|→)\s*(\d+)\s*")


@dataclass(frozen=True)
class Band:
    minimum: Decimal
    points: int


@dataclass(frozen=True)
class CountedDimension(PointsInCell):
    """The rater lists what they counted; points come from bands over the count."""

    key: str
    name: str
    bands: tuple[Band, ...]
    unit: str = "items"
    item: str = "item"
    half_weight_hint: str = ""
    required: bool = True  # False: the rubric marks the dimension optional
    kind = "counted"
    label = "Counted with bands"
    lists_items = True
    builder_help = (
        "The rater lists what they counted, one item per line, and may mark an item "
        "half-weight; points come from bands over the count. Example: Depth of Analysis, "
        "0-1 factors → 0, 2-3 → 2, 4-5 → 4, 6+ → 5."
    )
    config_fields = (
        ConfigField(
            "unit",
            label="What is counted (plural)",
            max_length=50,
            initial="factors",
            help_text="e.g. 'factors', 'alternatives', 'recommendations'.",
        ),
        ConfigField(
            "item",
            label="One item (singular)",
            max_length=50,
            initial="factor",
            help_text="Used on the button raters press: 'Add factor'.",
        ),
        ConfigField(
            "bands",
            rows=4,
            initial="0: 0\n2: 2\n4: 4\n6: 5",
            help_text=(
                "One band per line: the lowest count, a colon, the points. The first band "
                "starts at 0; a count scores the highest band it reaches. '0: 0, 2: 2, 4: 4, "
                "6: 5' (one per line) means 0-1 → 0, 2-3 → 2, 4-5 → 4, 6+ → 5."
            ),
        ),
        ConfigField(
            "half_weight_hint",
            label="When an item counts half",
            max_length=200,
            required=False,
            help_text="e.g. 'Listed but not integrated into the analysis'.",
        ),
    )

    @classmethod
    def from_config(cls, *, key: str, name: str, config: dict) -> "CountedDimension":
        raw_bands = config.get("bands") or []
        bands = tuple(
            Band(minimum=Decimal(str(minimum)), points=int(points)) for minimum, points in raw_bands
        )
        if not bands or bands[0].minimum != 0:
            raise RubricValueError(f"{name}: the first band must start at 0.")
        for lower, upper in zip(bands, bands[1:], strict=False):
            if upper.minimum <= lower.minimum or upper.points < lower.points:
                raise RubricValueError(f"{name}: bands must rise in both count and points.")
        return cls(
            key=key,
            name=name,
            bands=bands,
            unit=config.get("unit", "items"),
            item=config.get("item", "item"),
            half_weight_hint=config.get("half_weight_hint", ""),
        )

    @classmethod
    def config_from_form(cls, texts: dict) -> dict:
        bands = []
        for number, line in enumerate(texts["bands"].splitlines(), start=1):
            if not line.strip():
                continue
            match = BAND_LINE.fullmatch(line)
            if not match:
                raise ValueError(
                    f"Bands, line {number}: write the lowest count, a colon and the points, "
                    "e.g. '2: 2'."
                )
            minimum = Decimal(match.group(1))
            bands.append(
                [
                    int(minimum) if minimum == minimum.to_integral() else float(minimum),
                    int(match.group(2)),
                ]
            )
        return {
            "unit": texts["unit"],
            "item": texts["item"],
            "bands": bands,
            "half_weight_hint": texts.get("half_weight_hint", ""),
        }

    @classmethod
    def config_to_form(cls, config: dict) -> dict:
        return {
            "unit": config.get("unit", ""),
            "item": config.get("item", ""),
            "bands": "\n".join(f"{low}: {points}" for low, points in config.get("bands", [])),
            "half_weight_hint": config.get("half_weight_hint", ""),
        }

    def rating_help(self) -> dict:
        return {
            **super().rating_help(),
            "unit": self.unit,
            "item": self.item,
            "half_weight_hint": self.half_weight_hint,
            "bands": [[str(b.minimum), b.points] for b in self.bands],
            "band_labels": self.band_labels(),
        }

    @property
    def max_points(self) -> int:
        return self.bands[-1].points

    def band_labels(self) -> list[tuple[str, int]]:
        """Human-readable bands, e.g. [("0-1", 0), ("2-3", 2), ("4-5", 4), ("6+", 5)]."""
        labels = []
        for index, band in enumerate(self.bands):
            low = format_count(band.minimum)
            if index + 1 < len(self.bands):
                high = self.bands[index + 1].minimum - 1
                text = low if Decimal(high) <= band.minimum else f"{low}-{format_count(high)}"
            else:
                text = f"{low}+"
            labels.append((text, band.points))
        return labels

    def clean(self, raw: dict | None) -> dict:
        raw = raw or {}
        items = raw.get("items")
        if items is None and raw.get("points") is not None:
            points = points_only(self, raw, self.cell_choices)
            return {"items": None, "points": points, **clean_flag(raw)}
        if items is None:  # nothing listed, not even an empty list: no answer
            return {"items": None, **clean_flag(raw)}
        if not isinstance(items, list):
            raise RubricValueError(f"{self.name}: items must be a list.")
        cleaned = []
        for item in items:
            if not isinstance(item, dict):
                raise RubricValueError(f"{self.name}: each item needs a text.")
            text = str(item.get("text") or "").strip()
            if not text:
                continue
            if len(text) > MAX_ITEM_LENGTH:
                raise RubricValueError(
                    f"{self.name}: an item is longer than {MAX_ITEM_LENGTH} characters."
                )
            cleaned.append({"text": text, "half": bool(item.get("half"))})
        if len(cleaned) > MAX_ITEMS:
            raise RubricValueError(f"{self.name}: at most {MAX_ITEMS} items can be listed.")
        return {"items": cleaned, **clean_flag(raw)}

    @staticmethod
    def count(value: dict) -> Decimal | None:
        """The count of the listed items, a half-weight item counting 0.5; None if unlisted."""
        items = value.get("items")
        if items is None:
            return None
        return sum(
            (Decimal("0.5") if item.get("half") else Decimal(1) for item in items), Decimal(0)
        )

    def points_for_count(self, count: Decimal) -> int:
        points = self.bands[0].points
        for band in self.bands:
            if count >= band.minimum:
                points = band.points
        return points

    def points(self, value: dict) -> int:
        count = self.count(value)
        if count is None:
            return int(value.get("points") or 0)
        return self.points_for_count(count)

    listed_field = "items"

    def answered(self, value: dict | None) -> bool:
        return isinstance(value, dict) and bool(value.get("points") or value.get("items"))

    def listed_items(self, value: dict | None) -> list[tuple[str, bool]]:
        items = value.get("items") if isinstance(value, dict) else None
        return [
            (item["text"], bool(item.get("half")))
            for item in items or []
            if isinstance(item, dict) and str(item.get("text") or "").strip()
        ]

    def agreement_value(self, value: dict | None, *, flipped: bool = False) -> float | None:
        return float(self.points(value)) if self.given(value) else None

    @property
    def cell_choices(self) -> tuple:
        return tuple(sorted({band.points for band in self.bands}))

    def band_index(self, points: int) -> int:
        """The position of the band that gives these points (the highest, if several do)."""
        index = 0
        for position, band in enumerate(self.bands):
            if band.points <= points:
                index = position
        return index

    def expected_in(self, text: str, *, names: dict | None = None) -> dict:
        value, tolerance, unit = expected_parts(text, name=self.name)
        points = cell_number(value)
        if points not in self.cell_choices:
            raise RubricValueError(
                f"{self.name}: {quoted(value)} is not a possible score; expected points "
                f"are {self.describe_choices()}."
            )
        return {"points": points, "tolerance": tolerance, "unit": unit or "band"}

    def expected_text(self, expected: dict, *, names: dict | None = None) -> str:
        if not expected.get("tolerance"):
            return str(expected["points"])
        tolerance, unit = expected["tolerance"], expected.get("unit", "band")
        return f"{expected['points']} ±{tolerance} {unit}{'s' if tolerance > 1 else ''}"

    def expected_met(self, expected: dict, value: dict | None, *, flipped: bool = False) -> bool:
        if not isinstance(value, dict) or not self.given(value):
            return False
        given, wanted, tolerance = self.points(value), expected["points"], expected["tolerance"]
        if expected.get("unit", "band") == "band":
            return abs(self.band_index(given) - self.band_index(wanted)) <= tolerance
        return abs(given - wanted) <= tolerance

    def attention_expected(self) -> dict | None:
        return {"points": self.bands[0].points, "tolerance": 0, "unit": "band"}

    def describe_expected(self) -> str:
        return (
            f"points ({self.describe_choices()}), optionally within a number of bands or "
            "points: 4, 4 ±1 band, 4 ±2 points"
        )

    def long_text(self, value: dict | None, *, flipped: bool = False) -> tuple[str, str]:
        count = self.count(value) if isinstance(value, dict) else None
        if value is None or count is None:
            return "", ""
        text = ITEM_SEPARATOR.join(
            (HALF_MARK if item.get("half") else "") + str(item.get("text", ""))
            for item in value["items"]
        )
        return text, format_count(count)

    def display(self, value: dict | None) -> dict:
        view = super().display(value)
        if not isinstance(value, dict):
            return {**view, "shape": ""}
        count = self.count(value)
        return {
            **view,
            "shape": "items",
            "items": value["items"] if count is not None else [],
            "count": "" if count is None else format_count(count),
            "offline": count is None,
        }
