"""Rubric dimensions: each kind cleans, scores and reads back its own answers.

Each kind of dimension is a small class, one module here, registered in ``KINDS``
(``registry.py``); nothing else reads an answer's fields or a kind's configuration, or
branches on a kind's name. A new kind is one module here (its class, with the settings the
rubric builder asks for), its entry in ``KINDS``, a template under
``templates/annotation/dimensions/`` and an entry in ``static/js/dimension-kinds.js``.
``base.py`` describes the protocol every kind answers. Nothing here touches the database
or imports Django.

One stored shape for an answer, whatever recorded it (the rating screen, a worksheet, the
demo): the kind's own fields plus ``flagged``, ``flag_note`` and ``points``. Each kind's
module says its fields: ``counted`` (``items``), ``checklist`` (``checked``), and the
single choices ``scale``, ``categorical`` and ``pairwise`` (``choice``).

``totals.py`` is the one rule for a response's total and for the answers a submitted
rating lacks. ``definition.py`` is a whole rubric as a plain document, ``files.py`` that
document as a file.
"""

from .base import (
    FLAG_NOTE,
    LEVELS,
    ConfigField,
    RubricValueError,
    answer_flag,
    cell_number,
    code_from,
)
from .pairwise import pairwise_values
from .registry import (
    KINDS,
    allowed_levels,
    dimension_from_config,
    score_form,
    score_response,
)
from .totals import MissingAnswer, answers_missing, missing_text, response_total, total_parts

__all__ = [
    "FLAG_NOTE",
    "KINDS",
    "LEVELS",
    "ConfigField",
    "RubricValueError",
    "allowed_levels",
    "answer_flag",
    "cell_number",
    "code_from",
    "dimension_from_config",
    "pairwise_values",
    "score_form",
    "score_response",
    "MissingAnswer",
    "answers_missing",
    "missing_text",
    "response_total",
    "total_parts",
]
