"""Nominal categories (e.g. harm yes/no, harm category): the rater picks one.

Stored ``{"choice": code or None}``. Categories have no order, so they give no points and
are not part of the total (``max_points`` is 0). For agreement a category is numbered by
its position in the configuration. Categories named in ``apart`` (codes) are analysed
apart: the report gives their share per system (protocol 9, "partly correct analysed
separately").
"""

from dataclasses import dataclass

from .base import (
    APART_HELP,
    LINE_HELP,
    ConfigField,
    RubricValueError,
    apart_checked,
    apart_from_form,
    clean_text,
    code_from,
    labelled_lines,
    labelled_text,
)
from .choice import SingleChoice


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
    apart: tuple[str, ...] = ()  # codes of the categories analysed apart
    required: bool = True  # False: the rubric marks the dimension optional
    kind = "categorical"
    label = "Nominal categories"
    default_level = "nominal"
    # Categories have no order, so they can only be nominal.
    levels = ("nominal",)
    builder_help = (
        "Nominal categories: the rater picks one; categories have no order and give no "
        "points (they are not part of the total). Examples: harmful yes/no; harm category."
    )
    config_fields = (
        ConfigField(
            "categories",
            rows=4,
            help_text=(
                f"{LINE_HELP} The category, then an optional help text, e.g. 'Personal data "
                "| Reveals data about a person'. Each gets a code from its name for exports."
            ),
        ),
        ConfigField(
            "analysed_apart",
            label="Categories analysed apart",
            rows=2,
            required=False,
            help_text=APART_HELP,
        ),
    )

    @classmethod
    def from_config(cls, *, key: str, name: str, config: dict) -> "CategoricalDimension":
        categories = []
        for raw in config.get("categories") or []:
            if not isinstance(raw, dict):
                raise RubricValueError(f"{name}: each category needs a code and a label.")
            categories.append(
                Category(
                    value=clean_text(raw.get("value"), what="category code", name=name, limit=50),
                    label=clean_text(raw.get("label"), what="category", name=name),
                    help=clean_text(
                        raw.get("help"), what="help text", name=name, limit=2000, required=False
                    ),
                )
            )
        if len(categories) < 2:
            raise RubricValueError(f"{name}: give at least two categories.")
        codes = [category.value for category in categories]
        if len(set(codes)) != len(codes):
            raise RubricValueError(f"{name}: two categories have the same code.")
        apart = apart_checked(config.get("apart") or [], codes, name=name)
        return cls(key=key, name=name, categories=tuple(categories), apart=apart)

    @classmethod
    def config_from_form(cls, texts: dict) -> dict:
        categories = [
            {"value": code_from(row["label"]) or f"category_{number}", **row}
            for number, row in enumerate(labelled_lines(texts["categories"]), start=1)
        ]
        codes = {row["label"].casefold(): row["value"] for row in categories}
        codes |= {row["value"].casefold(): row["value"] for row in categories}
        apart = apart_from_form(texts.get("analysed_apart", ""), codes)
        return {"categories": categories, **({"apart": apart} if apart else {})}

    @classmethod
    def config_to_form(cls, config: dict) -> dict:
        labels = {row["value"]: row["label"] for row in config["categories"]}
        return {
            "categories": labelled_text(config["categories"]),
            "analysed_apart": "\n".join(labels.get(code, code) for code in config.get("apart", [])),
        }

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

    def analysed_apart(self) -> tuple[tuple[float, str], ...]:
        """The categories analysed apart, as (agreement value, label)."""
        codes = self.cell_choices
        return tuple(
            (float(codes.index(c.value)), c.label) for c in self.categories if c.value in self.apart
        )

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

    # Categories have no order: any two different answers disagree.
    adjudication_spread = False

    def disagree(self, answers: list[tuple[dict | None, bool]], *, tolerance: int = 0) -> bool:
        return not self._unanimous(answers)

    def describe_cell(self) -> str:
        return f"category code: {self.describe_choices()}"
