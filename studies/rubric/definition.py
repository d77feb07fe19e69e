"""A rubric as a plain document: what ``set_rubric``, ``export_rubric`` and the API exchange.

The shape (documented in docs/rubric-format.md)::

    {"name": "...", "description": "...",
     "dimensions": [{"key": "depth", "name": "Depth of Analysis", "kind": "counted",
                     "level": "ordinal", "required": true, "config": {...}}]}

Each dimension's ``config`` is the kind's own configuration, checked by the kind's class
(``studies.rubric.KINDS``); ``level`` may be left out for the kind's default, ``required``
for true (a submitted rating must answer the dimension; false marks it optional). The presets
are written in this shape too, so any preset can be exported, edited and set again.
"""

import json
import re

from core.user_input import UserInputError, json_read

from ..errors import StudySetupError
from ..presets import PRESETS
from .base import RubricValueError
from .registry import KINDS, allowed_levels, dimension_from_config

MAX_DIMENSIONS = 30
MAX_NAME_CHARS = 200
MAX_DESCRIPTION_CHARS = 5000
MAX_DEFINITION_CHARS = 200_000
MAX_DEPTH = 8
KEY = re.compile(r"[a-z0-9][a-z0-9_-]{0,49}")
FIELDS = {"name", "description", "dimensions"}
DIMENSION_FIELDS = {"key", "name", "kind", "level", "required", "config"}


class RubricDefinitionError(StudySetupError):
    """The definition has problems; ``problems`` lists each, with the dimension it is in."""

    def __init__(self, problems: list[str]):
        count = len(problems)
        super().__init__(
            f"The rubric definition has {count} problem{'s' if count != 1 else ''}; "
            "nothing was changed.",
            problems=problems,
        )


def definition_of(rubric) -> dict:
    """A rubric (model) as a definition, dimensions in their order."""
    return {
        "name": rubric.name,
        "description": rubric.description,
        "dimensions": [
            {
                "key": d.key,
                "name": d.name,
                "kind": d.kind,
                "level": d.level,
                "required": d.required,
                "config": d.config,
            }
            for d in rubric.dimensions.order_by("position")
        ],
    }


def preset_definition(name: str) -> dict:
    spec = PRESETS[name]
    return {
        "name": spec["name"],
        "description": spec.get("description", ""),
        "dimensions": [
            {
                "key": d["key"],
                "name": d["name"],
                "kind": d["kind"],
                "level": KINDS[d["kind"]].default_level,
                "required": d.get("required", True),
                "config": d["config"],
            }
            for d in spec["dimensions"]
        ],
    }


def definition_clean(data) -> dict:
    """The definition with every dimension checked by its kind, or RubricDefinitionError."""
    try:
        # The same bounds as any JSON a user sends: size, depth, NUL, NaN and huge numbers.
        data = json_read(json.dumps(data), max_chars=MAX_DEFINITION_CHARS, max_depth=MAX_DEPTH)
    except UserInputError as error:
        raise RubricDefinitionError([f"The definition: {error.reason}."]) from None
    except (TypeError, ValueError):
        raise RubricDefinitionError(
            ["The definition holds values JSON cannot represent."]
        ) from None
    if not isinstance(data, dict):
        raise RubricDefinitionError(["The definition must be an object with name and dimensions."])
    problems: list[str] = []
    unknown = sorted(set(data) - FIELDS)
    if unknown:
        problems.append(f"Unknown field {', '.join(unknown)}; use {', '.join(sorted(FIELDS))}.")
    name = _text(data.get("name"), "name", MAX_NAME_CHARS, problems, where="The rubric")
    description = _text(
        data.get("description", ""), "description", MAX_DESCRIPTION_CHARS, problems,
        where="The rubric", required=False,
    )  # fmt: skip
    dimensions = data.get("dimensions")
    if not isinstance(dimensions, list) or not dimensions:
        problems.append("The rubric needs a list of at least one dimension.")
        dimensions = []
    elif len(dimensions) > MAX_DIMENSIONS:
        problems.append(
            f"The rubric has {len(dimensions)} dimensions; the limit is {MAX_DIMENSIONS}."
        )
        dimensions = []
    cleaned, keys = [], set()
    for number, raw in enumerate(dimensions, 1):
        dimension = _dimension_clean(number, raw, problems)
        if dimension is None:
            continue
        if dimension["key"] in keys:
            problems.append(f"Dimension {number}: the key '{dimension['key']}' is used twice.")
        keys.add(dimension["key"])
        cleaned.append(dimension)
    if problems:
        raise RubricDefinitionError(problems)
    return {"name": name, "description": description, "dimensions": cleaned}


def _text(value, field: str, limit: int, problems, *, where: str, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        problems.append(f"{where}: {field} must be {'a non-empty' if required else 'a'} text.")
        return ""
    if len(value) > limit:
        problems.append(f"{where}: {field} is longer than {limit:,} characters.")
    return value.strip()


def _dimension_clean(number: int, raw, problems: list[str]) -> dict | None:
    where = f"Dimension {number}"
    if not isinstance(raw, dict):
        problems.append(f"{where}: must be an object with key, name, kind and config.")
        return None
    unknown = sorted(set(raw) - DIMENSION_FIELDS)
    if unknown:
        problems.append(f"{where}: unknown field {', '.join(unknown)}.")
    key = raw.get("key")
    if not isinstance(key, str) or not KEY.fullmatch(key):
        problems.append(
            f"{where}: key must be 1 to 50 lower-case letters, digits, - or _, "
            "starting with a letter or digit."
        )
        return None
    where = f"Dimension {number} ({key})"
    name = _text(raw.get("name"), "name", MAX_NAME_CHARS, problems, where=where)
    kind = raw.get("kind")
    # An object or a list cannot be looked up among the kinds (TypeError): checked as text.
    if not isinstance(kind, str) or kind not in KINDS:
        problems.append(f"{where}: kind must be one of {', '.join(KINDS)}.")
        return None
    config = raw.get("config", {})
    if not isinstance(config, dict):
        problems.append(f"{where}: config must be an object.")
        return None
    try:
        scoring = dimension_from_config(key=key, name=name or key, kind=kind, config=config)
    except RubricValueError as error:
        problems.append(f"{where}: {error}")
        return None
    except (ArithmeticError, AttributeError, KeyError, TypeError, ValueError):
        # A config of the wrong shape (text where a number belongs, a missing list).
        problems.append(f"{where}: config does not fit a {kind} dimension; see the format.")
        return None
    level = raw.get("level") or scoring.default_level
    if not isinstance(level, str) or level not in allowed_levels(kind):
        problems.append(
            f"{where}: level must be one of {', '.join(allowed_levels(kind))} for {kind}."
        )
    required = raw.get("required", True)
    if not isinstance(required, bool):
        problems.append(f"{where}: required must be true or false.")
    return {
        "key": key, "name": name, "kind": kind, "level": level, "required": required is not False,
        "config": config,
    }  # fmt: skip
