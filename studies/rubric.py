"""Scoring of rubric dimensions: turns what a rater recorded into points.

Each kind of dimension is a small class with the same interface (``clean`` a raw value
into its canonical form and ``points`` for it), so new kinds are added by writing one
class and registering it in ``KINDS``. Nothing here touches the database.

Counted dimensions and fractional counts: items marked half-weight count 0.5. Bands are
read as "at least the lower bound", so a count falls in the highest band whose lower
bound it reaches: with the reference depth bands (0-1 -> 0, 2-3 -> 2, 4-5 -> 4, 6+ -> 5),
1.5 factors score 0, 2 score 2, 5.5 score 4 and 6 score 5. Half-weight items therefore
never lift a response into a band it has not fully reached.

Kinds, their stored value and their points (``points`` feed the response total):

- ``counted``: ``{"items": [{"text", "half"}]}``; points from the bands.
- ``checklist``: ``{"checked": [bool, ...]}``; one point per criterion met.
- ``scale`` (ordinal scale with anchor texts, e.g. Likert 1-5, correct/partly/incorrect):
  ``{"choice": value or None}``; points are the chosen option's value, so a scale counts
  in the total. Unanswered is stored as ``None`` and scores 0; analysis must read it as
  missing, not as the lowest option.
- ``categorical`` (nominal categories, e.g. harm yes/no, harm category):
  ``{"choice": code or None}``. Categories have no order, so they give no points and are
  not part of the total (``max_points`` is 0).
- ``pairwise`` (preference between the two responses, rated once per test case, scope
  "case"): ``{"choice": v or None}`` with v a signed integer: negative prefers the response
  shown first on the rater's screen ("Response A"), positive the second, 0 is a tie; with
  five labels v runs -2..2. Like categories it is not part of any response total. On a
  flipped screen (balanced side design) the first response shown is the key's label B,
  so analysis reads the sign together with ``Assignment.flipped``.

Every value also carries ``flagged``/``flag_note``.
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


def _clean_text(value, *, what: str, name: str, limit: int = 500, required: bool = True) -> str:
    text = str(value if value is not None else "").strip()
    if required and not text:
        raise RubricValueError(f"{name}: every {what} needs a text.")
    if len(text) > limit:
        raise RubricValueError(f"{name}: a {what} is longer than {limit} characters.")
    return text


def _whole_number(value) -> int:
    """An int, or its decimal text; anything else (2.5, True, "two") is refused."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    raise ValueError(value)


def _clean_choice(raw: dict | None, allowed: dict, *, name: str, convert) -> dict:
    """Shared by the single-choice kinds: ``{"choice": one of allowed or None}``."""
    raw = raw or {}
    if not isinstance(raw, dict):
        raise RubricValueError(f"{name}: choose one of the options.")
    choice = raw.get("choice")
    if choice is None or choice == "":
        return {"choice": None, **_clean_flag(raw)}
    try:
        choice = convert(choice)
    except (TypeError, ValueError):
        raise RubricValueError(f"{name}: choose one of the options.") from None
    if choice not in allowed:
        raise RubricValueError(f"{name}: choose one of the options.")
    return {"choice": choice, **_clean_flag(raw)}


@dataclass(frozen=True)
class ScaleOption:
    value: int
    label: str
    anchor: str = ""


@dataclass(frozen=True)
class ScaleDimension:
    """An ordinal scale: one option per level, each with a label and an anchor text."""

    key: str
    name: str
    options: tuple[ScaleOption, ...]
    kind: str = "scale"
    scope: str = "response"
    default_level: str = "ordinal"

    @classmethod
    def from_config(cls, *, key: str, name: str, config: dict) -> "ScaleDimension":
        options = []
        for raw in config.get("options") or []:
            if not isinstance(raw, dict):
                raise RubricValueError(f"{name}: each option needs a value and a label.")
            value = raw.get("value")
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise RubricValueError(
                    f"{name}: option values must be whole numbers of 0 or more (they are "
                    "the points)."
                )
            options.append(
                ScaleOption(
                    value=value,
                    label=_clean_text(raw.get("label"), what="option", name=name),
                    anchor=_clean_text(
                        raw.get("anchor"), what="anchor", name=name, limit=2000, required=False
                    ),
                )
            )
        if len(options) < 2:
            raise RubricValueError(f"{name}: a scale needs at least two options.")
        values = [option.value for option in options]
        if len(set(values)) != len(values):
            raise RubricValueError(f"{name}: two options have the same value.")
        if values != sorted(values) and values != sorted(values, reverse=True):
            raise RubricValueError(
                f"{name}: list the options in order of their values (rising or falling)."
            )
        return cls(key=key, name=name, options=tuple(options))

    @property
    def max_points(self) -> int:
        return max(option.value for option in self.options)

    def clean(self, raw: dict | None) -> dict:
        allowed = {option.value: option for option in self.options}
        return _clean_choice(raw, allowed, name=self.name, convert=_whole_number)

    def points(self, value: dict) -> int:
        return value["choice"] if value["choice"] is not None else 0


@dataclass(frozen=True)
class Category:
    value: str
    label: str
    help: str = ""


@dataclass(frozen=True)
class CategoricalDimension:
    """Nominal categories: the rater picks one; no order, so no points."""

    key: str
    name: str
    categories: tuple[Category, ...]
    kind: str = "categorical"
    scope: str = "response"
    default_level: str = "nominal"

    @classmethod
    def from_config(cls, *, key: str, name: str, config: dict) -> "CategoricalDimension":
        categories = []
        for raw in config.get("categories") or []:
            if not isinstance(raw, dict):
                raise RubricValueError(f"{name}: each category needs a code and a label.")
            categories.append(
                Category(
                    value=_clean_text(raw.get("value"), what="category code", name=name, limit=50),
                    label=_clean_text(raw.get("label"), what="category", name=name),
                    help=_clean_text(
                        raw.get("help"), what="help text", name=name, limit=2000, required=False
                    ),
                )
            )
        if len(categories) < 2:
            raise RubricValueError(f"{name}: give at least two categories.")
        codes = [category.value for category in categories]
        if len(set(codes)) != len(codes):
            raise RubricValueError(f"{name}: two categories have the same code.")
        return cls(key=key, name=name, categories=tuple(categories))

    @property
    def max_points(self) -> int:
        return 0

    def clean(self, raw: dict | None) -> dict:
        allowed = {category.value: category for category in self.categories}
        return _clean_choice(raw, allowed, name=self.name, convert=str)

    def points(self, value: dict) -> int:
        return 0


def pairwise_values(count: int) -> list[int]:
    """Signed values for ``count`` labels: 5 -> [-2, -1, 0, 1, 2]; 4 -> [-2, -1, 1, 2]."""
    half = count // 2
    if count % 2:
        return list(range(-half, half + 1))
    return [v for v in range(-half, half + 1) if v != 0]


@dataclass(frozen=True)
class PairwiseDimension:
    """A preference between the two responses of a test case, rated once per case."""

    key: str
    name: str
    labels: tuple[str, ...]
    kind: str = "pairwise"
    scope: str = "case"
    default_level: str = "ordinal"

    @classmethod
    def from_config(cls, *, key: str, name: str, config: dict) -> "PairwiseDimension":
        labels = tuple(
            _clean_text(label, what="label", name=name) for label in config.get("labels") or []
        )
        if not 2 <= len(labels) <= 9:
            raise RubricValueError(
                f"{name}: a preference scale needs 2 to 9 labels, from 'A much better' to "
                "'B much better'."
            )
        return cls(key=key, name=name, labels=labels)

    @property
    def max_points(self) -> int:
        return 0

    def options(self) -> list[tuple[int, str]]:
        return list(zip(pairwise_values(len(self.labels)), self.labels, strict=True))

    def clean(self, raw: dict | None) -> dict:
        return _clean_choice(raw, dict(self.options()), name=self.name, convert=_whole_number)

    def points(self, value: dict) -> int:
        return 0


KINDS = {
    "counted": CountedDimension,
    "checklist": ChecklistDimension,
    "scale": ScaleDimension,
    "categorical": CategoricalDimension,
    "pairwise": PairwiseDimension,
}

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def allowed_levels(kind: str) -> tuple[str, ...]:
    """Categories have no order, so they can only be nominal; the other kinds can be any."""
    return ("nominal",) if kind == "categorical" else LEVELS


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
        answer = raw.get(dimension.key)
        if answer is not None and not isinstance(answer, dict):
            raise RubricValueError(f"{dimension.name}: the answer could not be read; reload.")
        value = dimension.clean(answer)
        scored[dimension.key] = {**value, "points": dimension.points(value)}
    return scored


def score_form(dimensions, payload: dict, *, labels) -> tuple[dict, dict]:
    """Score a whole rating form: ({label: scored response}, scored per-case dimensions).

    ``payload`` is ``{"responses": {label: {...}}, "case": {...}}``; a problem with one
    response is raised with its label, e.g. "Response B: Logical Structure: ...".
    """
    payload = payload if isinstance(payload, dict) else {}
    per_response = [d for d in dimensions if d.scope == "response"]
    per_case = [d for d in dimensions if d.scope == "case"]
    responses = payload.get("responses") if isinstance(payload.get("responses"), dict) else {}
    scored = {}
    for label in labels:
        try:
            scored[label] = score_response(per_response, responses.get(label) or {})
        except RubricValueError as error:
            raise RubricValueError(f"Response {label}: {error}") from error
    return scored, score_response(per_case, payload.get("case") or {})


def total_points(scored: dict) -> int:
    return sum(entry["points"] for entry in scored.values())


def _format_count(value: Decimal) -> str:
    return f"{value.normalize():f}"
