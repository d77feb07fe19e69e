"""Ordinal scale with anchor texts (e.g. Likert 1-5, correct/partly/incorrect).

Stored ``{"choice": value or None}``; points are the chosen option's value, so a scale
counts in the total. Unanswered is stored as ``None``, with no points (the total is then
missing: ``studies.rubric.totals``). Options named in
``apart`` (values) are analysed apart: the report gives their share per system (protocol
9, "partly correct analysed separately").
"""

import re
from dataclasses import dataclass

from .base import (
    APART_HELP,
    LINE_HELP,
    ConfigField,
    RubricValueError,
    apart_checked,
    apart_from_form,
    clean_text,
    expected_parts,
    lines_text,
    text_lines,
)
from .choice import SingleChoice


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
    apart: tuple[int, ...] = ()  # values of the options analysed apart
    required: bool = True  # False: the rubric marks the dimension optional
    kind = "scale"
    label = "Ordinal scale with anchors"
    builder_help = (
        "An ordered scale: the rater picks one option; its value is the points. Give each "
        "option an anchor text that says when to choose it. Examples: Likert 1-5 (strongly "
        "disagree … strongly agree); correct (2) / partly correct (1) / incorrect (0)."
    )
    config_fields = (
        ConfigField(
            "options",
            rows=5,
            initial=(
                "1 | Strongly disagree\n2 | Disagree\n3 | Neither agree nor disagree\n"
                "4 | Agree\n5 | Strongly agree"
            ),
            help_text=(
                f"{LINE_HELP} The value (whole number, the points), the label, then an "
                "optional anchor text, in rising or falling order, e.g. '2 | Correct | No "
                "unsupported claim'."
            ),
        ),
        ConfigField(
            "analysed_apart",
            label="Options analysed apart",
            rows=2,
            required=False,
            help_text=APART_HELP,
        ),
    )

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
                    label=clean_text(raw.get("label"), what="option", name=name),
                    anchor=clean_text(
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
        apart = apart_checked(config.get("apart") or [], values, name=name)
        return cls(key=key, name=name, options=tuple(options), apart=apart)

    @classmethod
    def config_from_form(cls, texts: dict) -> dict:
        options = []
        for number, parts in enumerate(text_lines(texts["options"]), start=1):
            if len(parts) < 2 or not re.fullmatch(r"\d+", parts[0]):
                raise ValueError(
                    f"Options, line {number}: start with a whole number, then '|' and the "
                    "label, e.g. '5 | Strongly agree'."
                )
            options.append(
                {"value": int(parts[0]), "label": parts[1], "anchor": " | ".join(parts[2:])}
            )
        lookup = {str(o["value"]): o["value"] for o in options}
        lookup |= {str(o["label"]).casefold(): o["value"] for o in options}
        apart = apart_from_form(texts.get("analysed_apart", ""), lookup)
        return {"options": options, **({"apart": apart} if apart else {})}

    @classmethod
    def config_to_form(cls, config: dict) -> dict:
        labels = {o["value"]: o["label"] for o in config["options"]}
        return {
            "options": lines_text(
                (o["value"], o["label"], o.get("anchor", "")) for o in config["options"]
            ),
            "analysed_apart": "\n".join(str(labels.get(v, v)) for v in config.get("apart", [])),
        }

    def analysed_apart(self) -> tuple[tuple[float, str], ...]:
        """The options analysed apart, as (agreement value = the option's value, label)."""
        return tuple((float(o.value), o.label) for o in self.options if o.value in self.apart)

    @property
    def max_points(self) -> int:
        return max(option.value for option in self.options)

    def points(self, value: dict) -> int:
        return value["choice"] if value.get("choice") is not None else 0

    def _option_rows(self) -> list[tuple]:
        return [(o.value, o.label, o.anchor) for o in self.options]

    def answer_text(self, value: dict | None, *, flipped: bool = False, names=None) -> str:
        """A scale's value is its points: a table of answers shows the number."""
        choice = self._choice(value, flipped=flipped)
        return "" if choice is None else str(choice)

    def expected_in(self, text: str, *, names: dict | None = None) -> dict:
        value, tolerance, unit = expected_parts(text, name=self.name)
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

    def expected_from_key(self, value: dict | None, *, tolerance: int) -> dict | None:
        choice = self.key_value(value)
        return None if choice is None else {"choice": choice, "tolerance": tolerance}

    def attention_expected(self) -> dict | None:
        return {"choice": min(o.value for o in self.options), "tolerance": 0}

    def describe_expected(self) -> str:
        return f"an option value ({self.describe_choices()}), optionally within k points: 4 ±1"

    def describe_cell(self) -> str:
        return f"option value (= points): {self.describe_choices()}"
