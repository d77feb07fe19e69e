"""Scoring of rubric dimensions: turns what a rater recorded into points.

Each kind of dimension is a small class with the same interface (``clean`` a raw value
into its canonical form and ``points`` for it), so new kinds are added by writing one
class and registering it in ``KINDS``. Nothing here touches the database.

Counted dimensions and fractional counts: items marked half-weight count 0.5. Bands are
read as "at least the lower bound", so a count falls in the highest band whose lower
bound it reaches: with the reference depth bands (0-1 -> 0, 2-3 -> 2, 4-5 -> 4, 6+ -> 5),
1.5 factors score 0, 2 score 2, 5.5 score 4 and 6 score 5. Half-weight items therefore
never lift a response into a band it has not fully reached.
"""

from dataclasses import dataclass, field
from decimal import Decimal

MAX_ITEMS = 60
MAX_ITEM_LENGTH = 500
MAX_NOTE_LENGTH = 2000


class RubricValueError(ValueError):
    """A recorded value does not fit its dimension."""


# A dimension is rated for each response ("response"), or once per test case ("case"),
# as a pairwise preference is.
SCOPES = ("response", "case")


@dataclass(frozen=True)
class Band:
    minimum: Decimal
    points: int


def _clean_flag(raw: dict) -> dict:
    note = str(raw.get("flag_note") or "").strip()
    if len(note) > MAX_NOTE_LENGTH:
        raise RubricValueError(f"The note is longer than {MAX_NOTE_LENGTH} characters.")
    return {"flagged": bool(raw.get("flagged")), "flag_note": note}


@dataclass(frozen=True)
class CountedDimension:
    """The rater lists what they counted; points come from bands over the count."""

    key: str
    name: str
    bands: tuple[Band, ...]
    kind: str = "counted"
    scope: str = "response"
    default_level: str = "ordinal"

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
        return cls(key=key, name=name, bands=bands)

    @property
    def max_points(self) -> int:
        return self.bands[-1].points

    def band_labels(self) -> list[tuple[str, int]]:
        """Human-readable bands, e.g. [("0-1", 0), ("2-3", 2), ("4-5", 4), ("6+", 5)]."""
        labels = []
        for index, band in enumerate(self.bands):
            low = _format_count(band.minimum)
            if index + 1 < len(self.bands):
                high = self.bands[index + 1].minimum - 1
                text = low if Decimal(high) <= band.minimum else f"{low}-{_format_count(high)}"
            else:
                text = f"{low}+"
            labels.append((text, band.points))
        return labels

    def clean(self, raw: dict | None) -> dict:
        raw = raw or {}
        items = raw.get("items") or []
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
        return {"items": cleaned, **_clean_flag(raw)}

    @staticmethod
    def count(value: dict) -> Decimal:
        return sum(
            (Decimal("0.5") if item["half"] else Decimal(1) for item in value["items"]),
            Decimal(0),
        )

    def points_for_count(self, count: Decimal) -> int:
        points = self.bands[0].points
        for band in self.bands:
            if count >= band.minimum:
                points = band.points
        return points

    def points(self, value: dict) -> int:
        return self.points_for_count(self.count(value))


@dataclass(frozen=True)
class ChecklistDimension:
    """Yes/no criteria, one point for each criterion met."""

    key: str
    name: str
    criteria: tuple[str, ...] = field(default_factory=tuple)
    kind: str = "checklist"
    scope: str = "response"
    default_level: str = "ordinal"

    @classmethod
    def from_config(cls, *, key: str, name: str, config: dict) -> "ChecklistDimension":
        criteria = tuple(str(c["label"]) for c in config.get("criteria") or [])
        if not criteria:
            raise RubricValueError(f"{name}: a checklist needs at least one criterion.")
        return cls(key=key, name=name, criteria=criteria)

    @property
    def max_points(self) -> int:
        return len(self.criteria)

    def clean(self, raw: dict | None) -> dict:
        raw = raw or {}
        checked = raw.get("checked")
        if checked is None:
            checked = [False] * len(self.criteria)
        if not isinstance(checked, list) or len(checked) != len(self.criteria):
            raise RubricValueError(
                f"{self.name}: answer each of the {len(self.criteria)} criteria with yes or no."
            )
        return {"checked": [bool(c) for c in checked], **_clean_flag(raw)}

    def points(self, value: dict) -> int:
        return sum(1 for c in value["checked"] if c)


KINDS = {
    "counted": CountedDimension,
    "checklist": ChecklistDimension,
}

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def dimension_from_config(*, key: str, name: str, kind: str, config: dict):
    try:
        kind_class = KINDS[kind]
    except KeyError:
        raise RubricValueError(f"Unknown dimension kind: {kind!r}.") from None
    return kind_class.from_config(key=key, name=name, config=config)


def score_response(dimensions, raw: dict) -> dict:
    """Clean and score one response: {key: {...value, "points": p}}, raising on bad input."""
    raw = raw if isinstance(raw, dict) else {}
    scored = {}
    for dimension in dimensions:
        value = dimension.clean(raw.get(dimension.key))
        scored[dimension.key] = {**value, "points": dimension.points(value)}
    return scored


def total_points(scored: dict) -> int:
    return sum(entry["points"] for entry in scored.values())


def _format_count(value: Decimal) -> str:
    return f"{value.normalize():f}"
