"""What the single-choice kinds share: ``{"choice": one of the options or None}``.

Unanswered is stored as ``None`` with no points; analysis reads it as missing, not as the
lowest option (an unanswered choice stored before issue 39 holds 0 points, never read).
"""

from typing import ClassVar, TypeGuard

from .base import DimensionKind, RubricValueError, clean_flag, whole_number


class SingleChoice(DimensionKind):
    """Shared by the single-choice kinds: ``{"choice": one of the options or None}``."""

    def _allowed(self) -> tuple:
        return self.cell_choices

    @staticmethod
    def _convert(choice):
        return whole_number(choice)

    def clean(self, raw: dict | None) -> dict:
        raw = raw or {}
        if not isinstance(raw, dict):
            raise RubricValueError(f"{self.name}: choose one of the options.")
        choice = raw.get("choice")
        if choice is None or choice == "":
            return {"choice": None, **clean_flag(raw)}
        try:
            choice = self._convert(choice)
        except (TypeError, ValueError):
            raise RubricValueError(f"{self.name}: choose one of the options.") from None
        if choice not in self._allowed():
            raise RubricValueError(f"{self.name}: choose one of the options.")
        return {"choice": choice, **clean_flag(raw)}

    def points(self, value: dict) -> int:
        return 0

    def _choice(self, value: dict | None, *, flipped: bool):
        choice = value.get("choice") if isinstance(value, dict) else None
        return None if choice is None else self.in_key_order(choice, flipped=flipped)

    def given(self, value: dict | None) -> TypeGuard[dict]:
        return isinstance(value, dict) and value.get("choice") is not None

    def answered(self, value: dict | None) -> bool:
        return self.given(value)

    def key_ordered(self, value: dict | None, *, flipped: bool) -> dict | None:
        if not flipped or not isinstance(value, dict):
            return value
        return {**value, "choice": self._choice(value, flipped=True)}

    def key_value(self, value: dict | None) -> int | str | None:
        choice = value.get("choice") if isinstance(value, dict) else None
        if isinstance(choice, int | float):
            return int(choice)
        return choice if isinstance(choice, str) and choice else None

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

    def expected_from_key(self, value: dict | None, *, tolerance: int) -> dict | None:
        """The key's choice exactly: options without an order have no tolerance."""
        choice = self.key_value(value)
        return None if choice is None else {"choices": [choice]}

    def describe_expected(self) -> str:
        return f"one of {self.describe_choices()}, or several separated by | (either of)"

    def display(self, value: dict | None) -> dict:
        view = super().display(value)
        if not isinstance(value, dict):
            return {**view, "shape": ""}
        choice = value.get("choice")
        text = "" if choice is None else self.choice_words(choice)
        return {**view, "shape": "choice", "choice": choice, "text": text}

    def choice_words(self, choice, *, names=None) -> str:
        """A choice as the rating form labels it (the option's label)."""
        labels = {value: label for value, label, _ in self._option_rows()}
        return labels.get(choice, str(choice))

    def answer_text(self, value: dict | None, *, flipped: bool = False, names=None) -> str:
        choice = self._choice(value, flipped=flipped)
        return "" if choice is None else self.choice_words(choice, names=names)

    def display_options(self) -> list[dict]:
        return [
            {"value": value, "label": label, "anchor": anchor}
            for value, label, anchor in self._option_rows()
        ]

    def _option_rows(self) -> list[tuple]:
        raise NotImplementedError

    def adjudication_values(self) -> list[tuple]:
        return [(value, label) for value, label, _ in self._option_rows()]

    def in_named_values(self, answers: list[tuple[dict | None, bool]], *, values) -> bool:
        named = list(values)
        return any(
            (choice := self._choice(value, flipped=flipped)) is not None and choice in named
            for value, flipped in answers
        )

    def _unanimous(self, answers: list[tuple[dict | None, bool]]) -> bool:
        """Every answered rater chose the same option (in key order)."""
        choices = {self._choice(value, flipped=flipped) for value, flipped in answers}
        choices.discard(None)
        return len(choices) <= 1

    @property
    def cell_aliases(self) -> dict:
        return {label.lower(): value for value, label, _ in self._option_rows()}

    @property
    def cell_choices(self) -> tuple:
        return tuple(value for value, _, _ in self._option_rows())
