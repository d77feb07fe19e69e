"""Pairwise preference between the two responses of a test case, rated once per case.

Stored ``{"choice": v or None}`` with v a signed integer: negative prefers the response
shown first on the rater's screen ("Response A"), positive the second, 0 is a tie; with
five labels v runs -2..2. Like categories it is not part of any response total. On a
flipped screen the first response shown is the key's label B, so every reader turns the
sign back to key order (``in_key_order``).
"""

import re
from dataclasses import dataclass

from core.user_input import quoted

from .base import ConfigField, RubricValueError, cell_number, clean_text
from .choice import SingleChoice


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
    required: bool = True  # False: the rubric marks the dimension optional
    kind = "pairwise"
    label = "Pairwise preference"
    scope = "case"
    compares_two = True
    builder_help = (
        "A preference between the two responses, rated once per test case (not per "
        "response) and not part of the totals. Needs a study with exactly two systems. "
        "Stored as a signed value: negative prefers Response A, 0 is a tie, positive B."
    )
    config_fields = (
        ConfigField(
            "labels",
            rows=5,
            initial="A much better\nA slightly better\nTie\nB slightly better\nB much better",
            help_text=(
                "One label per line, from the strongest preference for A to the strongest "
                "for B (2 to 9 labels; with an odd number the middle one is the tie)."
            ),
        ),
    )

    @classmethod
    def from_config(cls, *, key: str, name: str, config: dict) -> "PairwiseDimension":
        labels = tuple(
            clean_text(label, what="label", name=name) for label in config.get("labels") or []
        )
        if not 2 <= len(labels) <= 9:
            raise RubricValueError(
                f"{name}: a preference scale needs 2 to 9 labels, from 'A much better' to "
                "'B much better'."
            )
        return cls(key=key, name=name, labels=labels)

    @classmethod
    def config_from_form(cls, texts: dict) -> dict:
        return {"labels": [line.strip() for line in texts["labels"].splitlines() if line.strip()]}

    @classmethod
    def config_to_form(cls, config: dict) -> dict:
        return {"labels": "\n".join(config.get("labels", []))}

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

    def choice_words(self, choice, *, names=None) -> str:
        """A preference in the words of the rater's form ("A much better"), the labels
        read in the order of the value given. With ``names`` (what to call the key labels,
        e.g. a gold item's systems), the side is named: "beta much better", or the label
        with the name after it where the label does not say "A" or "B"."""
        label = dict(self.options()).get(choice)
        if label is None:
            return str(choice)
        side = "A" if choice < 0 else "B" if choice > 0 else ""
        name = str((names or {}).get(side, side)) if side else ""
        if not name or name == side:
            return label
        named, found = re.subn(rf"\b{side}\b", lambda _: name, label, count=1)
        return named if found else f"{label} ({name})"

    def given_text(self, value: dict | None, *, flipped: bool = False, names=None) -> str:
        return self.answer_text(value, flipped=flipped, names=names) or "no answer"

    # A preference disagrees unless every rater chose the same option, in key order.
    adjudication_spread = False

    def disagree(self, answers: list[tuple[dict | None, bool]], *, tolerance: int = 0) -> bool:
        return not self._unanimous(answers)

    def expected_in(self, text: str, *, names: dict | None = None) -> dict:
        """Values in key order, or a response's name for "prefers it" (any strength), or tie."""
        by_name = {str(n).strip().lower(): label for label, n in (names or {}).items()}
        values = pairwise_values(len(self.labels))
        # A preference in words, as ``expected_text`` writes one: the form's label, or the
        # label with its side named.
        by_words = {label.lower(): value for value, label in self.options()}
        by_words |= {self.choice_words(v, names=names).lower(): v for v in values}
        choices: list[int] = []
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
            elif part.lower() in by_words:
                picked = [by_words[part.lower()]]
            else:
                number = cell_number(part)
                if number not in values:
                    shown = ", ".join(str(n) for n in (names or {}).values())
                    raise RubricValueError(
                        f"{self.name}: {quoted(part) or 'an empty answer'} is not a "
                        f"preference; write {shown + ', ' if shown else ''}tie, a label of "
                        f"the scale or values {self.describe_choices()} in key order, several "
                        "separated by |."
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
        return "|".join(self.choice_words(c, names=names) for c in choices)

    def read_named_cell(self, text: str, *, names: dict, header: str = "") -> dict:
        """The system preferred, by name ("name", or "name:2" for the second strength from
        the mildest where the scale has several per side), or "tie"; in key order."""
        header = header or self.name
        text = text.strip()
        values = pairwise_values(len(self.labels))
        strengths = [v for v in values if v > 0]
        systems = ", ".join(str(n) for n in names.values())
        if not text:
            return self.score({"choice": None})
        if text.lower() == "tie":
            if 0 not in values:
                raise RubricValueError(f"{header} has no tie; name the system preferred.")
            return self.score({"choice": 0})
        by_name = {str(n).strip().lower(): label for label, n in names.items()}
        name, strength = text, ""
        if text.lower() not in by_name and ":" in text:
            name, _, strength = text.rpartition(":")
        label = by_name.get(name.strip().lower())
        if label not in ("A", "B"):
            raise RubricValueError(
                f"{quoted(text)} names no system of this case; {header} takes {systems} or tie."
            )
        if not strength and len(strengths) > 1:
            raise RubricValueError(
                f"{header} has {len(strengths)} strengths per side: write "
                f"{quoted(name.strip())}:1 (the mildest) to :{len(strengths)}."
            )
        step = cell_number(strength) if strength else 1
        if step is None or not 1 <= step <= len(strengths):
            raise RubricValueError(
                f"{quoted(text)}: the strength runs from 1 (the mildest) to {len(strengths)}."
            )
        chosen = strengths[step - 1]
        return self.score({"choice": -chosen if label == "A" else chosen})

    def expected_from_key(self, value: dict | None, *, tolerance: int) -> dict | None:
        """The preferences within ``tolerance`` steps of the key's."""
        choice = self.key_value(value)
        # A preference is stored as a signed whole number (``clean``); anything else, or
        # nothing, gives no expectation.
        if not isinstance(choice, int):
            return None
        values = pairwise_values(len(self.labels))
        return {"choices": [v for v in values if abs(v - choice) <= tolerance]}

    def attention_expected(self) -> dict | None:
        # The instructed text is the same on both sides: a tie, where the scale has one.
        return {"choices": [0]} if 0 in pairwise_values(len(self.labels)) else None

    def describe_expected(self) -> str:
        return (
            "the response preferred (any strength), tie, or a label of the scale (values in "
            "key order also do), several separated by |"
        )

    def describe_cell(self) -> str:
        return f"preference {self.describe_choices()} (negative prefers key label A)"
