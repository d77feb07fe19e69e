"""Checklist: yes/no criteria, one point for each criterion met.

Stored ``{"checked": [bool, ...]}``; ``checked`` is ``None`` when only the points (0 to the
number of criteria) were recorded (a worksheet filled in offline), or, without points,
when no answer was given.
"""

from dataclasses import dataclass, field

from .base import (
    LINE_HELP,
    ConfigField,
    PointsInCell,
    RubricValueError,
    clean_flag,
    labelled_lines,
    labelled_text,
    points_only,
)


@dataclass(frozen=True)
class ChecklistDimension(PointsInCell):
    """Yes/no criteria, one point for each criterion met."""

    key: str
    name: str
    criteria: tuple[str, ...] = field(default_factory=tuple)
    criteria_help: tuple[str, ...] = field(default_factory=tuple)
    required: bool = True  # False: the rubric marks the dimension optional
    kind = "checklist"
    label = "Checklist"
    builder_help = (
        "Yes/no criteria, one point for each criterion met. Example: Evidence Integration "
        "— evidence cited? source credibility assessed? evidence quality evaluated?"
    )
    config_fields = (
        ConfigField(
            "criteria",
            rows=4,
            help_text=(
                f"{LINE_HELP} The question, then an optional help text, e.g. 'Evidence cited? "
                "| Includes references to precedents, research, data, or domain knowledge'."
            ),
        ),
    )

    @classmethod
    def from_config(cls, *, key: str, name: str, config: dict) -> "ChecklistDimension":
        raw = config.get("criteria") or []
        criteria = tuple(str(c["label"]) for c in raw)
        if not criteria:
            raise RubricValueError(f"{name}: a checklist needs at least one criterion.")
        helps = tuple(c.get("help", "") for c in raw)
        return cls(key=key, name=name, criteria=criteria, criteria_help=helps)

    @classmethod
    def config_from_form(cls, texts: dict) -> dict:
        return {"criteria": labelled_lines(texts["criteria"])}

    @classmethod
    def config_to_form(cls, config: dict) -> dict:
        return {"criteria": labelled_text(config["criteria"])}

    def rating_help(self) -> dict:
        criteria = [
            {"label": label, "help": help_text}
            for label, help_text in zip(self.criteria, self.criteria_help, strict=False)
        ]
        return {**super().rating_help(), "criteria": criteria}

    @property
    def max_points(self) -> int:
        return len(self.criteria)

    def clean(self, raw: dict | None) -> dict:
        raw = raw or {}
        checked = raw.get("checked")
        if checked is None and raw.get("points") is not None:
            points = points_only(self, raw, self.cell_choices)
            return {"checked": None, "points": points, **clean_flag(raw)}
        if checked is None:  # no criterion answered, not even "no": no answer
            return {"checked": None, **clean_flag(raw)}
        if not isinstance(checked, list) or len(checked) != len(self.criteria):
            raise RubricValueError(
                f"{self.name}: answer each of the {len(self.criteria)} criteria with yes or no."
            )
        return {"checked": [bool(c) for c in checked], **clean_flag(raw)}

    def points(self, value: dict) -> int:
        checked = value.get("checked")
        if checked is None:
            return int(value.get("points") or 0)
        return sum(1 for c in checked if c)

    listed_field = "checked"

    def answered(self, value: dict | None) -> bool:
        if not isinstance(value, dict):
            return False
        return bool(value.get("points") or any(value.get("checked") or ()))

    def agreement_value(self, value: dict | None, *, flipped: bool = False) -> float | None:
        return float(self.points(value)) if self.given(value) else None

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
        if "points" in expected:
            tolerance = expected["tolerance"]
            return f"{expected['points']} ±{tolerance}" if tolerance else str(expected["points"])
        words = {True: "yes", False: "no", None: "any"}
        return ";".join(words[c] for c in expected["checked"])

    def expected_met(self, expected: dict, value: dict | None, *, flipped: bool = False) -> bool:
        if not isinstance(value, dict) or not self.given(value):
            return False
        if "points" in expected:  # from a qualification key: points within the tolerance
            return abs(self.points(value) - expected["points"]) <= expected["tolerance"]
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
