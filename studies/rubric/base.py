"""The kind protocol: what every kind of dimension answers, and the helpers they share.

Every kind has the class attributes ``kind``, ``label`` (its name in the rubric builder),
``scope`` ("response" or "case"), ``default_level``, ``levels`` (the levels of measurement
it allows), ``lists_items`` (the self-check sets what was listed side by side) and
``compares_two`` (it needs exactly two responses per case), and these methods:

- configuration: ``from_config(key=, name=, config=)`` checks the stored configuration
  (raising ``RubricValueError``); ``builder_help`` and ``config_fields`` declare the kind's
  settings in the rubric builder, once: the builder's form is made from them,
  ``config_from_form(texts)`` turns what was typed into configuration and
  ``config_to_form(config)`` turns it back; ``rating_help()`` is what the rating form and
  its help show of the configuration.
- writing: ``clean(raw) -> value`` (the stored shape, raising ``RubricValueError``) and
  ``points(value) -> int`` (they feed the response total); ``score(raw)`` is both, giving
  the stored answer ``{...value, "points": p}``, ``p`` None when no answer is given.
  ``required`` (a field of every kind, True unless the rubric marks the dimension
  optional) says a submitted rating must answer it.
- reading back, from a stored value (``None`` when nothing was recorded):
  ``given(value)``: whether it answers the dimension at all (a choice made, items listed
  or none, criteria ticked or none, points written): what a required dimension needs and
  what a total's part needs (``studies.rubric.totals``);
  ``answered(value)``: whether it gives anything (a choice, a point, an item, a tick);
  ``recorded_points(value)``: the points stored with it, None when it is not given;
  ``listed_items(value)``: what was listed, as (text, half); the function
  ``answer_flag(value)``: the rater's flag and note, stored alike by every kind;
  ``same_answer(value, other)``: whether two answers give the same score.
  ``agreement_value(value, *, flipped) -> float | None``: the number Krippendorff's alpha
  sees, in key order; None when unanswered. ``agreement_values``: every number it can
  give, in order (the full scale for weighted kappa, used or not).
  ``analysed_apart()``: the values the analysis reports apart from the main comparison
  (protocol 9, "partly correct analysed separately"), as (agreement value, label); only
  nominal categories can name some, every other kind gives ().
  ``cell_out(value, *, flipped)``: what a worksheet cell shows ("" when nothing), and
  ``cell_in(text, *, header) -> raw answer`` for ``clean`` (``read_cell`` does both steps);
  ``cell_choices``/``cell_aliases``/``describe_choices()``/``describe_cell()`` say what a
  cell may hold.
  ``long_text(value, *, flipped) -> (items, value)``: the long table's text columns.
  ``display(value) -> dict``: the self-check and review pages (``shape`` picks the
  template's part; ``text`` is a choice in words, ``scored`` whether points are shown);
  ``answer_text(value, *, flipped, names)``: the answer in one short cell of a table, in
  words where the rater chose words (a preference's label, a category's); ``display_options()``:
  the options shown on the rating form.
- expected answers (gold items, attention checks and the qualification key):
  ``expected_in(text, *, names)`` reads what a coordinator wrote (a gold file's cell or
  the browser form) into the stored shape, ``expected_text(expected, *, names)`` writes it
  back, ``expected_met(expected, value, *, flipped) -> bool`` says whether a rater's stored
  answer meets it, with the tolerance that fits the kind, ``given_text(value, *, flipped,
  names)`` shows the rater's answer beside it, and ``attention_expected()`` is what an
  instructed "give it the lowest score" response expects (None: no expectation).
  ``expected_from_key(value, *, tolerance)`` is what a qualification key's answer expects
  of a rater, within ``tolerance`` points, and ``key_value(value)`` is an answer in one
  value (the choice, or the points) for the qualification's record.
  ``names`` maps key labels to what the coordinator calls the responses (system names),
  for the one kind that compares two.

``flipped`` says the rater's screen showed the responses in reverse key order (balanced
side design); only a pairwise preference depends on it.
"""

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal
from typing import ClassVar, TypeGuard

from core.user_input import quoted, whole_number_text

MAX_NOTE_LENGTH = 2000

LEVELS = ("nominal", "ordinal", "interval", "ratio")

# A worksheet cell with a whole number in it ("4", "4.0", "-2"). Only these are converted,
# so a cell such as "1E+1000000", "sNaN" or ten thousand digits costs nothing to refuse.
WHOLE_NUMBER = re.compile(r"([+-]?\d{1,9})(?:\.0{0,9})?")
# How much of a refused cell a message repeats.


class RubricValueError(ValueError):
    """A recorded value does not fit its dimension; ``field`` names where, when known
    ("{label}-{key}" for a response's dimension, "case-{key}" for a per-case one)."""

    field = ""


# A dimension is rated for each response ("response"), or once per test case ("case"),
# as a pairwise preference is.
SCOPES = ("response", "case")


# The field of every stored answer that holds the rater's note on the flag (read in SQL by
# the comments digest, which cannot call ``answer_flag`` on each row).
FLAG_NOTE = "flag_note"


def clean_flag(raw: dict) -> dict:
    """The rater's flag and note of a raw answer, as every kind stores them."""
    note = str(raw.get(FLAG_NOTE) or "").strip()
    if len(note) > MAX_NOTE_LENGTH:
        raise RubricValueError(f"The note is longer than {MAX_NOTE_LENGTH} characters.")
    return {"flagged": bool(raw.get("flagged")), FLAG_NOTE: note}


def answer_flag(value) -> tuple[bool, str]:
    """A stored answer's flag and note, whatever its kind: (flagged, note)."""
    if not isinstance(value, dict):
        return False, ""
    return bool(value.get("flagged")), value.get(FLAG_NOTE, "")


def whole_number(value) -> int:
    """An int, or its decimal text; anything else (2.5, True, "two") is refused."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    number = whole_number_text(value) if isinstance(value, str) else None
    if number is None:
        raise ValueError(value)
    return number


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


def expected_parts(text: str, *, name: str) -> tuple[str, int, str]:
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
        raise RubricValueError(f"{name}: {quoted(text)} cannot be read.")
    unit = (match.group("unit") or "").rstrip("s")
    return match.group("value").strip(), int(match.group("k") or 0), unit.replace("pt", "point")


def clean_text(value, *, what: str, name: str, limit: int = 500, required: bool = True) -> str:
    """A configuration text (a label, an anchor), stripped and within ``limit``."""
    text = str(value if value is not None else "").strip()
    if required and not text:
        raise RubricValueError(f"{name}: every {what} needs a text.")
    if len(text) > limit:
        raise RubricValueError(f"{name}: a {what} is longer than {limit} characters.")
    return text


def format_count(value: Decimal) -> str:
    """A count as text without trailing zeros: 1.5, 2."""
    return f"{value.normalize():f}"


# --- the rubric builder: each kind's settings, declared once ------------------------------

LINE_HELP = "One per line; separate the parts with a vertical bar |."


@dataclass(frozen=True)
class ConfigField:
    """One setting of a kind as the rubric builder asks for it: a text, one line or several.

    The builder's form field is made from this; the kind's ``config_from_form`` reads the
    text into configuration and ``config_to_form`` writes it back.
    """

    name: str
    label: str = ""  # "" for the name, capitalised
    help_text: str = ""
    initial: str = ""
    rows: int = 0  # a text area of this many rows; 0 for one line
    max_length: int | None = None
    required: bool = True


def text_lines(text: str) -> list[list[str]]:
    """A text area's non-empty lines, each split at "|" into stripped parts."""
    return [
        [part.strip() for part in line.split("|")] for line in text.splitlines() if line.strip()
    ]


def lines_text(rows) -> str:
    """Rows written back as ``text_lines`` reads them; empty parts are left out."""
    return "\n".join(" | ".join(str(part) for part in row if part != "") for row in rows)


def labelled_lines(text: str) -> list[dict]:
    """A text area of "label | optional help" lines: [{"label", "help"}]."""
    return [{"label": parts[0], "help": " | ".join(parts[1:])} for parts in text_lines(text)]


def labelled_text(rows) -> str:
    """Rows of ``{"label", "help"}`` written back as ``labelled_lines`` reads them."""
    return lines_text((row["label"], row.get("help", "")) for row in rows)


APART_HELP = (
    "Optional, one per line as named above (e.g. 'Partly correct'): the report gives each "
    "system's share of them with an exact interval, apart from the main comparison. "
    "Frozen with the protocol."
)


def apart_from_form(text: str, lookup: dict) -> list:
    """The values named in a builder's "analysed apart" text, one per line, each by its
    label or value (any case; ``lookup`` maps both, case-folded, to the stored value),
    each once; ValueError names a line that is not one of them."""
    values = []
    for line in (text or "").splitlines():
        if not line.strip():
            continue
        value = lookup.get(line.strip().casefold())
        if value is None:
            raise ValueError(f"Analysed apart: {line.strip()[:50]!r} is not one of the values.")
        if value not in values:
            values.append(value)
    return values


def apart_checked(apart, allowed: list, *, name: str) -> tuple:
    """A stored "analysed apart" list: some of ``allowed``, each once, and not all."""
    if not isinstance(apart, list) or any(value not in allowed for value in apart):
        raise RubricValueError(f"{name}: the values analysed apart must be its own.")
    if len(set(apart)) != len(apart) or len(apart) >= len(allowed):
        raise RubricValueError(f"{name}: analyse apart each value once, and not every value.")
    return tuple(apart)


def code_from(text: str) -> str:
    """A code for exports made from a name: "Unsafe advice" -> "unsafe_advice" ("" if none).

    Django's ``slugify`` with "_" for "-", written here so that the kinds need no Django:
    accents dropped, anything but letters, digits, spaces, "-" and "_" removed.
    """
    text = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text.lower())
    return re.sub(r"[-\s]+", "-", text).strip("-_").replace("-", "_")[:50]


# --- the protocol ---------------------------------------------------------------------------


class DimensionKind:
    """What every kind shares; each subclass is a frozen dataclass with its configuration."""

    kind: ClassVar[str]
    label: ClassVar[str]
    scope: ClassVar[str] = "response"
    default_level: ClassVar[str] = "ordinal"
    levels: ClassVar[tuple[str, ...]] = LEVELS
    lists_items: ClassVar[bool] = False
    compares_two: ClassVar[bool] = False
    builder_help: ClassVar[str] = ""
    config_fields: ClassVar[tuple[ConfigField, ...]] = ()

    key: str
    name: str

    # --- configuration -------------------------------------------------------------------

    @classmethod
    def config_from_form(cls, texts: dict) -> dict:
        """The kind's configuration from the builder's texts; ValueError says which line."""
        raise NotImplementedError

    @classmethod
    def config_to_form(cls, config: dict) -> dict:
        """A stored configuration as the builder's texts, so that editing round-trips."""
        raise NotImplementedError

    def rating_help(self) -> dict:
        """What the rating form and the rubric help show of the configuration."""
        return {
            "unit": "items",
            "item": "item",
            "half_weight_hint": "",
            "bands": [],
            "band_labels": [],
            "criteria": [],
        }

    @property
    def max_points(self) -> int:
        """The most points an answer can give (0 for kinds outside the total)."""
        raise NotImplementedError

    @property
    def min_points(self) -> int:
        """The fewest points an answer can give: the range a page states is min to max."""
        return min(self.cell_choices) if self.max_points else 0

    # --- writing -------------------------------------------------------------------------

    def clean(self, raw: dict | None) -> dict:
        """The stored shape of a raw answer; RubricValueError when it does not fit."""
        raise NotImplementedError

    def points(self, value: dict) -> int:
        """The points a cleaned answer feeds into the response total."""
        raise NotImplementedError

    def score(self, raw: dict | None) -> dict:
        """The stored answer for a raw one: cleaned, with its points (None when the raw
        answer gives none: an unanswered dimension has no points, never 0)."""
        value = self.clean(raw)
        return {**value, "points": self.points(value) if self.given(value) else None}

    def in_key_order(self, choice, *, flipped: bool):
        """The recorded choice as the key orders the responses (only pairwise differs).

        The same turn takes a value in key order to another order of the two responses
        (the systems' order after unblinding): ``flipped`` says the two orders differ.
        """
        return choice

    # --- reading a stored answer -----------------------------------------------------------

    def given(self, value: dict | None) -> TypeGuard[dict]:
        """Whether a stored answer answers the dimension: a choice made, a list of items
        (empty: nothing counted, an answer too), criteria ticked or not, points written.
        An answer left out (None, or a single choice without one) is not given."""
        raise NotImplementedError

    def settles(self, value: dict | None) -> bool:
        """Whether a stored answer settles the dimension (an adjudicator's decision): a
        given answer (nothing counted, no criterion met are answers too)."""
        return self.given(value)

    def key_ordered(self, value: dict | None, *, flipped: bool) -> dict | None:
        """A stored answer as it reads in key order (only a preference recorded on a
        flipped screen changes): what a screen showing the responses in key order shows."""
        return value

    def answered(self, value: dict | None) -> bool:
        """Whether a stored answer gives anything: a choice, a point, an item, a tick."""
        raise NotImplementedError

    def recorded_points(self, value: dict | None) -> int | None:
        """The points stored with an answer; None when it is not given (an unanswered
        choice stored before issue 39 holds 0 points: they are not read)."""
        return value.get("points") if self.given(value) else None

    def listed_items(self, value: dict | None) -> list[tuple[str, bool]]:
        """What the rater listed, as (text, half-weight); kinds that list nothing give []."""
        return []

    def same_answer(self, value: dict | None, other: dict | None) -> bool:
        """Whether two stored answers give the same score: points, and the choice if any."""
        mine, theirs = self.display(value), self.display(other)
        return (mine["points"], mine.get("choice")) == (theirs["points"], theirs.get("choice"))

    def key_value(self, value: dict | None) -> int | str | None:
        """An answer in one value, the points (the choice where there is one); None if none."""
        points = value.get("points") if isinstance(value, dict) else None
        return int(points) if isinstance(points, int | float) else None

    @property
    def agreement_values(self) -> tuple[float, ...]:
        """Every value ``agreement_value`` can give, in order: the scale's possible points."""
        return tuple(sorted(float(v) for v in self.cell_choices))

    def analysed_apart(self) -> tuple[tuple[float, str], ...]:
        """The values analysed apart, as (agreement value, label); none for most kinds."""
        return ()

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
                    f"{quoted(text)} is not a whole number; {header} takes "
                    f"{self.describe_choices()}."
                )
        if value not in self.cell_choices:
            raise RubricValueError(
                f"{quoted(text)} is not allowed; {header} takes {self.describe_choices()}."
            )
        return value

    def cell_out(self, value: dict | None, *, flipped: bool = False):
        """What a worksheet cell shows of a stored answer ("" when nothing)."""
        raise NotImplementedError

    def cell_in(self, text: str, *, header: str = "") -> dict:
        """The raw answer a worksheet cell gives, for ``clean``."""
        raise NotImplementedError

    def read_cell(self, text: str, *, header: str = "") -> dict:
        """The stored answer for a worksheet cell; RubricValueError says what is wrong."""
        return self.score(self.cell_in(text.strip(), header=header or self.name))

    def read_named_cell(self, text: str, *, names: dict, header: str = "") -> dict:
        """The stored answer for a cell of ratings imported by system, where ``names`` maps
        the case's key labels to its systems' names: only a kind that compares two responses
        reads a cell by name; every other reads it as a worksheet's."""
        return self.read_cell(text, header=header)

    # --- expected answers (gold items, attention checks, the qualification key) ----------

    def expected_in(self, text: str, *, names: dict | None = None) -> dict:
        """The stored expected answer for what a coordinator wrote; RubricValueError if bad."""
        raise NotImplementedError

    def expected_text(self, expected: dict, *, names: dict | None = None) -> str:
        """An expected answer written back the way ``expected_in`` reads it."""
        raise NotImplementedError

    def expected_met(self, expected: dict, value: dict | None, *, flipped: bool = False) -> bool:
        """Whether a rater's stored answer meets the expected one (unanswered never does)."""
        raise NotImplementedError

    def expected_from_key(self, value: dict | None, *, tolerance: int) -> dict | None:
        """What a key's answer expects of a rater, within ``tolerance`` points; None when
        the key gives nothing to compare with."""
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
        """A recorded answer shaped for the self-check and review pages; ``scored`` says
        whether its points mean anything (kinds outside the total show none)."""
        scored = self.max_points > 0
        if not isinstance(value, dict):
            return {
                "points": None, "max": self.max_points, "scored": scored, "flagged": False,
                "note": "",
            }  # fmt: skip
        flagged, note = answer_flag(value)
        return {
            "points": value.get("points"),
            "max": self.max_points,
            "scored": scored,
            "flagged": flagged,
            "note": note,
        }

    def answer_text(self, value: dict | None, *, flipped: bool = False, names=None) -> str:
        """An answer in one short table cell: its points ("" when nothing was recorded).
        Kinds whose rater picks words say it in those words."""
        points = self.recorded_points(value)
        return "" if points is None else str(points)

    def display_options(self) -> list[dict]:
        """The options of a single-choice kind: [{"value", "label", "anchor"}]."""
        return []

    # --- adjudication ------------------------------------------------------------------

    # "Any disagreement" is a spread of points over a tolerance (False: not unanimous).
    adjudication_spread: ClassVar[bool] = True

    def agreement_value(self, value: dict | None, *, flipped: bool = False) -> float | None:
        """The number agreement sees, in key order; None when unanswered."""
        raise NotImplementedError

    def adjudication_values(self) -> list[tuple]:
        """The values a "values" rule may name: (stored value, label); [] when the kind's
        answers are points only."""
        return []

    def in_named_values(self, answers: list[tuple[dict | None, bool]], *, values) -> bool:
        """Whether any rater's answer (value, flipped) is one of ``values`` (key order)."""
        return False

    def disagree(self, answers: list[tuple[dict | None, bool]], *, tolerance: int = 0) -> bool:
        """Whether the raters' answers (value, flipped) spread over more than ``tolerance``
        points; unanswered ones take no part."""
        numbers = [
            number
            for value, flipped in answers
            if (number := self.agreement_value(value, flipped=flipped)) is not None
        ]
        return bool(numbers) and max(numbers) - min(numbers) > tolerance


def points_only(dimension, raw: dict, allowed) -> int:
    """Points recorded without the details behind them (a worksheet filled in offline)."""
    try:
        points: int | None = whole_number(raw.get("points"))
    except ValueError:
        points = None
    if points is None or points not in allowed:
        raise RubricValueError(
            f"{dimension.name}: {raw.get('points')} points is not a possible score; "
            f"it takes {dimension.describe_choices()}."
        )
    return points


class PointsInCell(DimensionKind):
    """Kinds whose worksheet cell holds points: what was counted or ticked stays off paper.

    A qualification key's answer expects points within the tolerance.
    """

    def cell_out(self, value: dict | None, *, flipped: bool = False):
        return self.points(value) if self.given(value) else ""

    def cell_in(self, text: str, *, header: str = "") -> dict:
        if not text:  # no answer: refused where the dimension is required
            return {}
        return {"points": self._cell_value(text, header=header or self.name)}

    def given(self, value: dict | None) -> TypeGuard[dict]:
        """Given when what was counted or ticked is listed (nothing is an answer too), or
        points were written (a worksheet)."""
        if not isinstance(value, dict):
            return False
        listed = value.get(self.listed_field)
        points = value.get("points")
        return isinstance(listed, list) or (
            isinstance(points, int) and not isinstance(points, bool)
        )

    # The field of the stored answer that lists what was counted or ticked.
    listed_field: ClassVar[str] = ""

    def expected_from_key(self, value: dict | None, *, tolerance: int) -> dict | None:
        points = self.key_value(value)
        if points is None:
            return None
        return {"points": points, "tolerance": tolerance, "unit": "point"}
