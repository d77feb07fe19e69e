"""The registry of kinds, and what reads a rubric through it: a dimension from its stored
configuration, and a rating form scored dimension by dimension."""

import dataclasses

from .base import RubricValueError
from .categorical import CategoricalDimension
from .checklist import ChecklistDimension
from .counted import CountedDimension
from .pairwise import PairwiseDimension
from .scale import ScaleDimension

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


def dimension_from_config(*, key: str, name: str, kind: str, config: dict, required: bool = True):
    try:
        kind_class = KINDS[kind]
    except KeyError:
        raise RubricValueError(f"Unknown dimension kind: {kind!r}.") from None
    dimension = kind_class.from_config(key=key, name=name, config=config)
    return dimension if required else dataclasses.replace(dimension, required=False)


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
    responses = payload.get("responses")
    if not isinstance(responses, dict):
        responses = {}
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
