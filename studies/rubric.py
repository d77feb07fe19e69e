"""Rubric dimensions: each kind cleans, scores and reads back its own answers.

Each kind of dimension is a small class registered in ``KINDS``; nothing else branches on
a kind's name, so a new kind is one class here, a template under
``templates/annotation/dimensions/`` and an entry in ``static/js/dimension-kinds.js``.
Nothing here touches the database.

Every kind has the class attributes ``kind``, ``label`` (its name in the rubric builder),
``scope`` ("response" or "case"), ``default_level``, ``levels`` (the levels of measurement
it allows), ``lists_items`` (the self-check sets what was listed side by side) and
``compares_two`` (it needs exactly two responses per case), and these methods:

- writing: ``clean(raw) -> value`` (the stored shape, raising ``RubricValueError``) and
  ``points(value) -> int`` (they feed the response total); ``score(raw)`` is both, giving
  the stored answer ``{...value, "points": p}``.
- reading back, from a stored value (``None`` when nothing was recorded):
  ``agreement_value(value, *, flipped) -> float | None``: the number Krippendorff's alpha
  sees, in key order; None when unanswered. ``agreement_values``: every number it can
  give, in order (the full scale for weighted kappa, used or not).
  ``cell_out(value, *, flipped)``: what a worksheet cell shows ("" when nothing), and
  ``cell_in(text, *, header) -> raw answer`` for ``clean`` (``read_cell`` does both steps);
  ``cell_choices``/``cell_aliases``/``describe_choices()``/``describe_cell()`` say what a
  cell may hold.
  ``long_text(value, *, flipped) -> (items, value)``: the long table's text columns.
  ``display(value) -> dict``: the self-check and review pages (``shape`` picks the
  template's part); ``display_options()``: the options shown on the rating form.

- expected answers (gold items and attention checks): ``expected_in(text, *, names)``
  reads what a coordinator wrote (a gold file's cell or the browser form) into the
  stored shape, ``expected_text(expected, *, names)`` writes it back,
  ``expected_met(expected, value, *, flipped) -> bool`` says whether a rater's stored
  answer meets it, with the tolerance that fits the kind, ``given_text(value, *,
  flipped, names)`` shows the rater's answer beside it, and ``attention_expected()`` is
  what an instructed "give it the lowest score" response expects (None: no expectation).
  ``names`` maps key labels to what the coordinator calls the responses (system names),
  for the one kind that compares two.

``flipped`` says the rater's screen showed the responses in reverse key order (balanced
side design); only a pairwise preference depends on it.

Counted dimensions and fractional counts: items marked half-weight count 0.5
(``CountedDimension.count`` is the one place this is written in Python;
``dimension-kinds.js`` has it for the live total). Bands are read as "at least the lower
bound", so a count falls in the highest band whose lower bound it reaches: with the
reference depth bands (0-1 -> 0, 2-3 -> 2, 4-5 -> 4, 6+ -> 5), 1.5 factors score 0, 2
score 2, 5.5 score 4 and 6 score 5. Half-weight items therefore never lift a response into
a band it has not fully reached.

One stored shape for an answer, whatever recorded it (the rating screen, a worksheet, the
demo): the kind's own fields plus ``flagged``, ``flag_note`` and ``points``.

- ``counted``: ``{"items": [{"text", "half"}]}``; points from the bands. ``items`` is
  ``None`` when only the points were recorded (a worksheet filled in offline holds points
  only): ``clean`` accepts ``{"points": p}`` for that, p being one of the bands' points.
- ``checklist``: ``{"checked": [bool, ...]}``; one point per criterion met. ``checked`` is
  ``None`` when only the points (0 to the number of criteria) were recorded.
- ``scale`` (ordinal scale with anchor texts, e.g. Likert 1-5, correct/partly/incorrect):
  ``{"choice": value or None}``; points are the chosen option's value, so a scale counts
  in the total. Unanswered is stored as ``None`` and scores 0; analysis reads it as
  missing, not as the lowest option.
- ``categorical`` (nominal categories, e.g. harm yes/no, harm category):
  ``{"choice": code or None}``. Categories have no order, so they give no points and are
  not part of the total (``max_points`` is 0). For agreement a category is numbered by
  its position in the configuration.
- ``pairwise`` (preference between the two responses, rated once per test case, scope
  "case"): ``{"choice": v or None}`` with v a signed integer: negative prefers the response
  shown first on the rater's screen ("Response A"), positive the second, 0 is a tie; with
  five labels v runs -2..2. Like categories it is not part of any response total. On a
  flipped screen the first response shown is the key's label B, so every reader turns
  the sign back to key order (``in_key_order``).
"""

import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import ClassVar

MAX_ITEMS = 60
MAX_ITEM_LENGTH = 500
MAX_NOTE_LENGTH = 2000

LEVELS = ("nominal", "ordinal", "interval", "ratio")

# The long table's text for a counted dimension's items: "½ " marks a half-weight item.
HALF_MARK = "½ "
ITEM_SEPARATOR = " | "

# A worksheet cell with a whole number in it ("4", "4.0", "-2"). Only these are converted,
# so a cell such as "1E+1000000", "sNaN" or ten thousand digits costs nothing to refuse.
WHOLE_NUMBER = re.compile(r"([+-]?\d{1,9})(?:\.0{0,9})?")
# How much of a refused cell a message repeats.
SHOWN_CHARS = 30


class RubricValueError(ValueError):
    """A recorded value does not fit its dimension; ``field`` names where, when known
    ("{label}-{key}" for a response's dimension, "case-{key}" for a per-case one)."""

    field = ""


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


def _whole_number(value) -> int:
    """An int, or its decimal text; anything else (2.5, True, "two") is refused."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    raise ValueError(value)


def cell_number(text: str) -> int | None:
    """A worksheet cell's whole number ("4", "4.0", "-2"); None when it holds none.

    At most nine digits, converted without ``Decimal``: the one rule for numbers typed
    into a worksheet, the scores' cells and the Total alike.
    """
    match = WHOLE_NUMBER.fullmatch(text.strip())
    return int(match.group(1)) if match else None


# An expected answer as a coordinator writes it: a value, optionally "±k" and a unit.
EXPECTED_TOLERANCE = re.compile(
    r"^(?P<value>.+?)\s*(?:(?:±|\+/-|\+-)\s*(?P<k>\d{1,3})\s*(?P<unit>bands?|points?|pts?)?)?$"
)
MAX_EXPECTED_CHARS = 200


def _expected_parts(text: str, *, name: str) -> tuple[str, int, str]:
    """(value, tolerance, unit) of an expected answer's text, e.g. "4 ±1 band"."""
    text = str(text or "").strip()
    if not text:
        raise RubricValueError(f"{name}: the expected answer is empty.")
    if len(text) > MAX_EXPECTED_CHARS:
        raise RubricValueError(
            f"{name}: the expected answer is longer than {MAX_EXPECTED_CHARS} characters."
        )
    match = EXPECTED_TOLERANCE.match(text)
    if match is None:  # pragma: no cover - the pattern matches every non-empty text
        raise RubricValueError(f"{name}: {cell_shown(text)} cannot be read.")
    unit = (match.group("unit") or "").rstrip("s")
    return match.group("value").strip(), int(match.group("k") or 0), unit.replace("pt", "point")


def cell_shown(text: str) -> str:
    """A cell's text as a message repeats it: its start, when it is long."""
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "…"


class DimensionKind:
    """What every kind shares; each subclass is a frozen dataclass with its configuration."""

    kind: ClassVar[str]
    label: ClassVar[str]
    scope: ClassVar[str] = "response"
    default_level: ClassVar[str] = "ordinal"
    levels: ClassVar[tuple[str, ...]] = LEVELS
    lists_items: ClassVar[bool] = False
    compares_two: ClassVar[bool] = False

    key: str
    name: str

    def score(self, raw: dict | None) -> dict:
        """The stored answer for a raw one: cleaned, with its points."""
        value = self.clean(raw)
        return {**value, "points": self.points(value)}

    def in_key_order(self, choice, *, flipped: bool):
        """The recorded choice as the key orders the responses (only pairwise differs).

        The same turn takes a value in key order to another order of the two responses
        (the systems' order after unblinding): ``flipped`` says the two orders differ.
        """
        return choice

    @property
    def agreement_values(self) -> tuple[float, ...]:
        """Every value ``agreement_value`` can give, in order: the scale's possible points."""
        return tuple(sorted(float(v) for v in self.cell_choices))

    # --- the worksheet ---------------------------------------------------------------

    @property
    def cell_choices(self) -> tuple:
        """The values a worksheet cell may hold."""
        raise NotImplementedError

    @property
    def cell_aliases(self) -> dict:
        """Lower-case text a rater may type instead of a value (option labels, codes)."""
        return {}

    def describe_choices(self) -> str:
        choices = self.cell_choices
        if all(isinstance(v, int) for v in choices) and len(choices) > 2:
            ints = sorted(choices)
            if ints == list(range(ints[0], ints[-1] + 1)):
                return f"{ints[0]} to {ints[-1]}"
        return ", ".join(str(v) for v in choices)

    def describe_cell(self) -> str:
        """What the worksheet cell holds, for the data dictionary."""
        return f"points: {self.describe_choices()}"

    def _cell_value(self, text: str, *, header: str, numeric: bool = True):
        """A worksheet cell's value, one of ``cell_choices``; a clear message otherwise."""
        value = self.cell_aliases.get(text.lower())
        if value is None and numeric:
            value = cell_number(text)
            if value is None:
                raise RubricValueError(
                    f"{cell_shown(text)} is not a whole number; {header} takes "
                    f"{self.describe_choices()}."
                )
        if value not in self.cell_choices:
            raise RubricValueError(
                f"{cell_shown(text)} is not allowed; {header} takes {self.describe_choices()}."
            )
        return value

    def cell_in(self, text: str, *, header: str = "") -> dict:
        """The raw answer a worksheet cell gives, for ``clean``."""
        raise NotImplementedError

    def read_cell(self, text: str, *, header: str = "") -> dict:
        """The stored answer for a worksheet cell; RubricValueError says what is wrong."""
        return self.score(self.cell_in(text.strip(), header=header or self.name))

    # --- expected answers (gold items, attention checks) --------------------------------

    def expected_in(self, text: str, *, names: dict | None = None) -> dict:
        """The stored expected answer for what a coordinator wrote; RubricValueError if bad."""
        raise NotImplementedError

    def expected_text(self, expected: dict, *, names: dict | None = None) -> str:
        """An expected answer written back the way ``expected_in`` reads it."""
        raise NotImplementedError

    def expected_met(self, expected: dict, value: dict | None, *, flipped: bool = False) -> bool:
        """Whether a rater's stored answer meets the expected one (unanswered never does)."""
        raise NotImplementedError

    def given_text(self, value: dict | None, *, flipped: bool = False, names=None) -> str:
        """A rater's stored answer, short, beside the expected one on the QC page."""
        if not isinstance(value, dict):
            return "no answer"
        return str(self.cell_out(value, flipped=flipped))

    def attention_expected(self) -> dict | None:
        """What an instructed response ("give it the lowest score everywhere") expects."""
        return None

    def describe_expected(self) -> str:
        """What an expected answer's cell holds, for the form and the gold file's help."""
        return ""

    # --- display -----------------------------------------------------------------------

    def display(self, value: dict | None) -> dict:
        """A recorded answer shaped for the self-check and review pages."""
        if not isinstance(value, dict):
            return {"points": None, "max": self.max_points, "flagged": False, "note": ""}
        return {
            "points": value.get("points"),
            "max": self.max_points,
            "flagged": bool(value.get("flagged")),
            "note": value.get("flag_note", ""),
        }

    def display_options(self) -> list[dict]:
        """The options of a single-choice kind: [{"value", "label", "anchor"}]."""
        return []


def _points_only(dimension, raw: dict, allowed) -> int:
    """Points recorded without the details behind them (a worksheet filled in offline)."""
    try:
        points = _whole_number(raw.get("points"))
    except ValueError:
        points = None
    if points not in allowed:
        raise RubricValueError(
            f"{dimension.name}: {raw.get('points')} points is not a possible score; "
            f"it takes {dimension.describe_choices()}."
        )
    return points


class PointsInCell(DimensionKind):
    """Kinds whose worksheet cell holds points: what was counted or ticked stays off paper."""

    def cell_out(self, value: dict | None, *, flipped: bool = False):
        return self.points(value) if value else ""

    def cell_in(self, text: str, *, header: str = "") -> dict:
        if not text:
            raise RubricValueError("The score is empty.")
        return {"points": self._cell_value(text, header=header or self.name)}


@dataclass(frozen=True)
class CountedDimension(PointsInCell):
    """The rater lists what they counted; points come from bands over the count."""

    key: str
    name: str
    bands: tuple[Band, ...]
    kind = "counted"
    label = "Counted with bands"
    lists_items = True

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
        items = raw.get("items")
        if items is None and "points" in raw:
            points = _points_only(self, raw, self.cell_choices)
            return {"items": None, "points": points, **_clean_flag(raw)}
        items = items or []
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

    def agreement_value(self, value: dict | None, *, flipped: bool = False) -> float | None:
        return float(self.points(value)) if isinstance(value, dict) else None

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
        value, tolerance, unit = _expected_parts(text, name=self.name)
        points = cell_number(value)
        if points not in self.cell_choices:
            raise RubricValueError(
                f"{self.name}: {cell_shown(value)} is not a possible score; expected points "
                f"are {self.describe_choices()}."
            )
        return {"points": points, "tolerance": tolerance, "unit": unit or "band"}

    def expected_text(self, expected: dict, *, names: dict | None = None) -> str:
        if not expected.get("tolerance"):
            return str(expected["points"])
        tolerance, unit = expected["tolerance"], expected.get("unit", "band")
        return f"{expected['points']} ±{tolerance} {unit}{'s' if tolerance > 1 else ''}"

    def expected_met(self, expected: dict, value: dict | None, *, flipped: bool = False) -> bool:
        if not isinstance(value, dict):
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
        if count is None:
            return "", ""
        text = ITEM_SEPARATOR.join(
            (HALF_MARK if item.get("half") else "") + str(item.get("text", ""))
            for item in value["items"]
        )
        return text, _format_count(count)

    def display(self, value: dict | None) -> dict:
        view = super().display(value)
        if not isinstance(value, dict):
            return {**view, "shape": ""}
        count = self.count(value)
        return {
            **view,
            "shape": "items",
            "items": value["items"] if count is not None else [],
            "count": "" if count is None else _format_count(count),
            "offline": count is None,
        }


@dataclass(frozen=True)
class ChecklistDimension(PointsInCell):
    """Yes/no criteria, one point for each criterion met."""

    key: str
    name: str
    criteria: tuple[str, ...] = field(default_factory=tuple)
    kind = "checklist"
    label = "Checklist"

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
        if checked is None and "points" in raw:
            points = _points_only(self, raw, self.cell_choices)
            return {"checked": None, "points": points, **_clean_flag(raw)}
        if checked is None:
            checked = [False] * len(self.criteria)
        if not isinstance(checked, list) or len(checked) != len(self.criteria):
            raise RubricValueError(
                f"{self.name}: answer each of the {len(self.criteria)} criteria with yes or no."
            )
        return {"checked": [bool(c) for c in checked], **_clean_flag(raw)}

    def points(self, value: dict) -> int:
        checked = value.get("checked")
        if checked is None:
            return int(value.get("points") or 0)
        return sum(1 for c in checked if c)

    def agreement_value(self, value: dict | None, *, flipped: bool = False) -> float | None:
        return float(self.points(value)) if isinstance(value, dict) else None

    @property
    def cell_choices(self) -> tuple:
        return tuple(range(self.max_points + 1))

    def expected_in(self, text: str, *, names: dict | None = None) -> dict:
        words = [w.strip().lower() for w in str(text or "").split(";")]
        meaning = {"yes": True, "no": False, "any": None, "either": None}
        if len(words) != len(self.criteria) or any(w not in meaning for w in words):
            raise RubricValueError(
                f"{self.name}: give yes, no or any for each of the {len(self.criteria)} "
                "criteria, separated by semicolons (yes;no;any)."
            )
        return {"checked": [meaning[w] for w in words]}

    def expected_text(self, expected: dict, *, names: dict | None = None) -> str:
        words = {True: "yes", False: "no", None: "any"}
        return ";".join(words[c] for c in expected["checked"])

    def expected_met(self, expected: dict, value: dict | None, *, flipped: bool = False) -> bool:
        if not isinstance(value, dict):
            return False
        wanted = expected["checked"]
        checked = value.get("checked")
        if checked is None:  # points only (a worksheet): the count must be possible
            least = sum(1 for c in wanted if c is True)
            return least <= self.points(value) <= least + sum(1 for c in wanted if c is None)
        return all(w is None or bool(c) == w for w, c in zip(wanted, checked, strict=False))

    def attention_expected(self) -> dict | None:
        return {"checked": [False] * len(self.criteria)}

    def given_text(self, value: dict | None, *, flipped: bool = False, names=None) -> str:
        if isinstance(value, dict) and value.get("checked") is not None:
            return ";".join("yes" if c else "no" for c in value["checked"])
        return super().given_text(value, flipped=flipped, names=names)

    def describe_expected(self) -> str:
        return f"yes, no or any for each of the {len(self.criteria)} criteria: yes;no;any"

    def long_text(self, value: dict | None, *, flipped: bool = False) -> tuple[str, str]:
        checked = value.get("checked") if isinstance(value, dict) else None
        if checked is None:
            return "", ""
        return "", ";".join("yes" if c else "no" for c in checked)

    def display(self, value: dict | None) -> dict:
        view = super().display(value)
        if not isinstance(value, dict):
            return {**view, "shape": ""}
        checked = value.get("checked")
        criteria = None
        if checked is not None:
            labels = list(self.criteria) + [""] * (len(checked) - len(self.criteria))
            criteria = list(zip(labels, checked, strict=False))
        return {**view, "shape": "checked", "criteria": criteria, "offline": checked is None}


def _clean_text(value, *, what: str, name: str, limit: int = 500, required: bool = True) -> str:
    text = str(value if value is not None else "").strip()
    if required and not text:
        raise RubricValueError(f"{name}: every {what} needs a text.")
    if len(text) > limit:
        raise RubricValueError(f"{name}: a {what} is longer than {limit} characters.")
    return text


class SingleChoice(DimensionKind):
    """Shared by the single-choice kinds: ``{"choice": one of the options or None}``."""

    def _allowed(self) -> tuple:
        return self.cell_choices

    @staticmethod
    def _convert(choice):
        return _whole_number(choice)

    def clean(self, raw: dict | None) -> dict:
        raw = raw or {}
        if not isinstance(raw, dict):
            raise RubricValueError(f"{self.name}: choose one of the options.")
        choice = raw.get("choice")
        if choice is None or choice == "":
            return {"choice": None, **_clean_flag(raw)}
        try:
            choice = self._convert(choice)
        except (TypeError, ValueError):
            raise RubricValueError(f"{self.name}: choose one of the options.") from None
        if choice not in self._allowed():
            raise RubricValueError(f"{self.name}: choose one of the options.")
        return {"choice": choice, **_clean_flag(raw)}

    def points(self, value: dict) -> int:
        return 0

    def _choice(self, value: dict | None, *, flipped: bool):
        choice = value.get("choice") if isinstance(value, dict) else None
        return None if choice is None else self.in_key_order(choice, flipped=flipped)

    def agreement_value(self, value: dict | None, *, flipped: bool = False) -> float | None:
        choice = self._choice(value, flipped=flipped)
        return None if choice is None else float(choice)

    def cell_out(self, value: dict | None, *, flipped: bool = False):
        choice = self._choice(value, flipped=flipped)
        return "" if choice is None else choice

    def cell_in(self, text: str, *, header: str = "") -> dict:
        if not text:  # an unanswered choice, as on the rating screen
            return {"choice": None}
        return {"choice": self._cell_value(text, header=header or self.name)}

    def long_text(self, value: dict | None, *, flipped: bool = False) -> tuple[str, str]:
        choice = self._choice(value, flipped=flipped)
        return "", "" if choice is None else str(choice)

    # Expected answers: one choice or "either of" several (``a|b``).
    def expected_in(self, text: str, *, names: dict | None = None) -> dict:
        parts = [p.strip() for p in str(text or "").split("|")]
        if not any(parts):
            raise RubricValueError(f"{self.name}: the expected answer is empty.")
        choices = []
        for part in parts:
            choice = self._cell_value(part, header=self.name, numeric=self._numeric_cells)
            if choice not in choices:
                choices.append(choice)
        return {"choices": choices}

    _numeric_cells: ClassVar[bool] = True

    def expected_text(self, expected: dict, *, names: dict | None = None) -> str:
        return "|".join(str(c) for c in expected["choices"])

    def expected_met(self, expected: dict, value: dict | None, *, flipped: bool = False) -> bool:
        choice = self._choice(value, flipped=flipped)
        return choice is not None and choice in expected["choices"]

    def describe_expected(self) -> str:
        return f"one of {self.describe_choices()}, or several separated by | (either of)"

    def display(self, value: dict | None) -> dict:
        view = super().display(value)
        if not isinstance(value, dict):
            return {**view, "shape": ""}
        return {**view, "shape": "choice", "choice": value.get("choice")}

    def display_options(self) -> list[dict]:
        return [
            {"value": value, "label": label, "anchor": anchor}
            for value, label, anchor in self._option_rows()
        ]

    def _option_rows(self) -> list[tuple]:
        raise NotImplementedError

    @property
    def cell_aliases(self) -> dict:
        return {label.lower(): value for value, label, _ in self._option_rows()}

    @property
    def cell_choices(self) -> tuple:
        return tuple(value for value, _, _ in self._option_rows())


@dataclass(frozen=True)
class ScaleOption:
    value: int
    label: str
    anchor: str = ""


@dataclass(frozen=True)
class ScaleDimension(SingleChoice):
    """An ordinal scale: one option per level, each with a label and an anchor text."""

    key: str
    name: str
    options: tuple[ScaleOption, ...]
    kind = "scale"
    label = "Ordinal scale with anchors"

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

    def points(self, value: dict) -> int:
        return value["choice"] if value.get("choice") is not None else 0

    def _option_rows(self) -> list[tuple]:
        return [(o.value, o.label, o.anchor) for o in self.options]

    def expected_in(self, text: str, *, names: dict | None = None) -> dict:
        value, tolerance, unit = _expected_parts(text, name=self.name)
        if unit == "band":
            raise RubricValueError(f"{self.name}: a scale's tolerance is in points (±1).")
        choice = self._cell_value(value, header=self.name)
        return {"choice": choice, "tolerance": tolerance}

    def expected_text(self, expected: dict, *, names: dict | None = None) -> str:
        tolerance = expected.get("tolerance")
        return f"{expected['choice']} ±{tolerance}" if tolerance else str(expected["choice"])

    def expected_met(self, expected: dict, value: dict | None, *, flipped: bool = False) -> bool:
        choice = self._choice(value, flipped=flipped)
        return choice is not None and abs(choice - expected["choice"]) <= expected["tolerance"]

    def attention_expected(self) -> dict | None:
        return {"choice": min(o.value for o in self.options), "tolerance": 0}

    def describe_expected(self) -> str:
        return f"an option value ({self.describe_choices()}), optionally within k points: 4 ±1"

    def describe_cell(self) -> str:
        return f"option value (= points): {self.describe_choices()}"


@dataclass(frozen=True)
class Category:
    value: str
    label: str
    help: str = ""


@dataclass(frozen=True)
class CategoricalDimension(SingleChoice):
    """Nominal categories: the rater picks one; no order, so no points."""

    key: str
    name: str
    categories: tuple[Category, ...]
    kind = "categorical"
    label = "Nominal categories"
    default_level = "nominal"
    # Categories have no order, so they can only be nominal.
    levels = ("nominal",)

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

    @staticmethod
    def _convert(choice):
        return str(choice)

    def agreement_value(self, value: dict | None, *, flipped: bool = False) -> float | None:
        """The category's position in the configuration: only its identity matters."""
        choice = self._choice(value, flipped=flipped)
        codes = self.cell_choices
        return float(codes.index(choice)) if choice in codes else None

    @property
    def agreement_values(self) -> tuple[float, ...]:
        return tuple(float(position) for position in range(len(self.categories)))

    def _option_rows(self) -> list[tuple]:
        return [(c.value, c.label, c.help) for c in self.categories]

    @property
    def cell_aliases(self) -> dict:
        aliases = super().cell_aliases
        aliases.update({c.value.lower(): c.value for c in self.categories})
        return aliases

    def cell_in(self, text: str, *, header: str = "") -> dict:
        if not text:
            return {"choice": None}
        return {"choice": self._cell_value(text, header=header or self.name, numeric=False)}

    _numeric_cells = False

    def describe_cell(self) -> str:
        return f"category code: {self.describe_choices()}"


def pairwise_values(count: int) -> list[int]:
    """Signed values for ``count`` labels: 5 -> [-2, -1, 0, 1, 2]; 4 -> [-2, -1, 1, 2]."""
    half = count // 2
    if count % 2:
        return list(range(-half, half + 1))
    return [v for v in range(-half, half + 1) if v != 0]


@dataclass(frozen=True)
class PairwiseDimension(SingleChoice):
    """A preference between the two responses of a test case, rated once per case."""

    key: str
    name: str
    labels: tuple[str, ...]
    kind = "pairwise"
    label = "Pairwise preference"
    scope = "case"
    compares_two = True

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

    def in_key_order(self, choice, *, flipped: bool):
        """Recorded as the rater's screen showed the pair; a flipped screen's sign turns."""
        return -choice if flipped else choice

    def _option_rows(self) -> list[tuple]:
        return [(value, label, "") for value, label in self.options()]

    def expected_in(self, text: str, *, names: dict | None = None) -> dict:
        """Values in key order, or a response's name for "prefers it" (any strength), or tie."""
        by_name = {str(n).strip().lower(): label for label, n in (names or {}).items()}
        values = pairwise_values(len(self.labels))
        choices = []
        for part in (p.strip() for p in str(text or "").split("|")):
            label = by_name.get(part.lower()) or (
                part.upper() if part.upper() in "AB" and part else None
            )
            if label == "A":
                picked = [v for v in values if v < 0]
            elif label == "B":
                picked = [v for v in values if v > 0]
            elif part.lower() == "tie" and 0 in values:
                picked = [0]
            else:
                number = cell_number(part)
                if number not in values:
                    shown = ", ".join(str(n) for n in (names or {}).values())
                    raise RubricValueError(
                        f"{self.name}: {cell_shown(part) or 'an empty answer'} is not a "
                        f"preference; write {shown + ', ' if shown else ''}tie or values "
                        f"{self.describe_choices()} in key order, several separated by |."
                    )
                picked = [number]
            choices.extend(v for v in picked if v not in choices)
        return {"choices": sorted(choices)}

    def expected_text(self, expected: dict, *, names: dict | None = None) -> str:
        values = pairwise_values(len(self.labels))
        choices = sorted(expected["choices"])
        names = names or {}
        for label, side in (
            ("A", [v for v in values if v < 0]),
            ("B", [v for v in values if v > 0]),
        ):
            if choices == side:
                return str(names.get(label, label))
        if choices == [0]:
            return "tie"
        return "|".join(str(c) for c in choices)

    def attention_expected(self) -> dict | None:
        # The instructed text is the same on both sides: a tie, where the scale has one.
        return {"choices": [0]} if 0 in pairwise_values(len(self.labels)) else None

    def describe_expected(self) -> str:
        return "the response preferred (any strength), tie, or values in key order (a|b)"

    def describe_cell(self) -> str:
        return f"preference {self.describe_choices()} (negative prefers key label A)"


KINDS = {
    kind_class.kind: kind_class
    for kind_class in (
        CountedDimension,
        ChecklistDimension,
        ScaleDimension,
        CategoricalDimension,
        PairwiseDimension,
    )
}


def allowed_levels(kind: str) -> tuple[str, ...]:
    """The levels of measurement a kind allows (its ``levels``)."""
    return KINDS[kind].levels


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
        try:
            if answer is not None and not isinstance(answer, dict):
                raise RubricValueError(f"{dimension.name}: the answer could not be read; reload.")
            scored[dimension.key] = dimension.score(answer)
        except RubricValueError as error:
            error.field = error.field or dimension.key
            raise
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
            labelled = RubricValueError(f"Response {label}: {error}")
            labelled.field = f"{label}-{error.field}" if error.field else ""
            raise labelled from error
    try:
        return scored, score_response(per_case, payload.get("case") or {})
    except RubricValueError as error:
        error.field = f"case-{error.field}" if error.field else ""
        raise


def total_points(scored: dict) -> int:
    return sum(entry["points"] for entry in scored.values())


def _format_count(value: Decimal) -> str:
    return f"{value.normalize():f}"
