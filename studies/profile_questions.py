"""Rater profile questions (protocol 4.1): what a question may be, and what answers it takes.

The one owner of both rules: the set-up service checks a question here before it is saved,
and the rater's profile service checks each answer here before it is stored. An answer is
the question's value or None, "prefer not to say"; every answer is optional.

Kinds: ``choice`` (one of a list), ``number`` (a whole number between a minimum and a
maximum), ``text`` (a short text; the report never shows it, only how many answered).
Everything is bounded: the number of questions, of choices, the lengths and the numbers.
"""

import re
from typing import Any

from django.utils.text import slugify

from core.user_input import unstorable, whole_number_text
from studies.errors import StudySetupError
from studies.models import ProfileQuestion

Kind = ProfileQuestion.Kind

MAX_QUESTIONS = 12
MAX_LABEL = 200
MAX_KEY = 50
MAX_CHOICES = 30
MAX_CHOICE_CHARS = 100
MAX_TEXT_ANSWER = 200
# Far beyond any age, count of years or of hours a question could ask for.
NUMBER_LIMIT = 1_000_000
KEY_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]*")

# The protocol's example (4.1): "language, years of support experience, region".
PRESET: list[dict] = [
    {
        "key": "language",
        "label": "First language",
        "kind": Kind.CHOICE,
        "choices": [
            "English",
            "Spanish",
            "French",
            "German",
            "Portuguese",
            "Arabic",
            "Hindi",
            "Chinese",
            "Other",
        ],
    },  # fmt: skip
    {
        "key": "support_years",
        "label": "Years of customer support experience",
        "kind": Kind.NUMBER,
        "min": 0,
        "max": 50,
    },
    {
        "key": "region",
        "label": "Region you live in",
        "kind": Kind.CHOICE,
        "choices": [
            "Africa",
            "Asia",
            "Europe",
            "Latin America and the Caribbean",
            "Middle East",
            "North America",
            "Oceania",
        ],
    },  # fmt: skip
]


class ProfileQuestionError(StudySetupError):
    """A profile question cannot be saved; the message names it and says why."""


class ProfileAnswerError(StudySetupError):
    """An answer does not fit its question; the message names the question."""


def _text(value: Any, *, limit: int, what: str, error: type[StudySetupError]) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise error(f"{what} must be text.")
    text = value.strip()
    if len(text) > limit:
        raise error(f"{what} is limited to {limit} characters.")
    problem = unstorable(text)
    if problem:
        raise error(f"{what} contains {problem}; remove it.")
    return text


def _whole(value: Any, *, what: str, error: type[StudySetupError]) -> int:
    """A whole number from JSON or a form field, within ±NUMBER_LIMIT."""
    if isinstance(value, bool):
        raise error(f"{what} must be a whole number.")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str):
        value = whole_number_text(value, max_chars=8)
        if value is None:
            raise error(f"{what} must be a whole number.")
    if not isinstance(value, int):
        raise error(f"{what} must be a whole number.")
    if abs(value) > NUMBER_LIMIT:
        raise error(f"{what} must be between {-NUMBER_LIMIT:,} and {NUMBER_LIMIT:,}.")
    return value


FIELDS = {"key", "label", "kind", "choices", "min", "max"}


def _blank(value) -> bool:
    return value is None or value == ""


def _choices(raw: dict, where: str) -> list[str]:
    choices = raw.get("choices")
    if not isinstance(choices, list) or not 2 <= len(choices) <= MAX_CHOICES:
        raise ProfileQuestionError(f"{where}: give from 2 to {MAX_CHOICES} choices.")
    what = f"{where}: a choice"
    cleaned = [
        _text(c, limit=MAX_CHOICE_CHARS, what=what, error=ProfileQuestionError) for c in choices
    ]
    if not all(cleaned):
        raise ProfileQuestionError(f"{where}: a choice is empty.")
    if len(set(cleaned)) != len(cleaned):
        raise ProfileQuestionError(f"{where}: each choice must differ from the others.")
    return cleaned


def _range(raw: dict, where: str) -> dict:
    if _blank(raw.get("min")) or _blank(raw.get("max")):
        raise ProfileQuestionError(f"{where}: give the smallest and the largest answer.")
    low = _whole(raw["min"], what=f"{where}: the smallest answer", error=ProfileQuestionError)
    high = _whole(raw["max"], what=f"{where}: the largest answer", error=ProfileQuestionError)
    if low >= high:
        raise ProfileQuestionError(f"{where}: the smallest answer must be below the largest.")
    return {"min": low, "max": high}


def question_clean(raw: Any, *, number: int) -> dict:
    """One question as saved: {"key", "label", "kind", "config"}; ``number`` (from 1) names
    it in a refusal. The key is made from the label when none is given."""
    where = f"Question {number}"
    if not isinstance(raw, dict):
        raise ProfileQuestionError(f"{where}: give it as an object with a label and a kind.")
    unknown = sorted(str(name)[:MAX_KEY] for name in set(raw) - FIELDS)
    if unknown:
        raise ProfileQuestionError(f"{where}: unknown field {', '.join(unknown)}.")
    what = f"{where}'s label"
    label = _text(raw.get("label"), limit=MAX_LABEL, what=what, error=ProfileQuestionError)
    if not label:
        raise ProfileQuestionError(f"{where}: give it a label (the question raters read).")
    where = f"“{label}”"
    kind = raw.get("kind")
    if kind not in Kind.values:
        raise ProfileQuestionError(f"{where}: the kind is one of {', '.join(Kind.values)}.")
    key = _text(raw.get("key"), limit=MAX_KEY, what=f"{where}'s key", error=ProfileQuestionError)
    key = key or slugify(label)[:MAX_KEY].replace("-", "_")
    if not KEY_PATTERN.fullmatch(key):
        raise ProfileQuestionError(
            f"{where}: the key is lower-case letters, digits, - and _ (e.g. support_years)."
        )
    config: dict = {}
    if kind == Kind.CHOICE:
        config["choices"] = _choices(raw, where)
    elif raw.get("choices"):
        raise ProfileQuestionError(f"{where}: only a question of kind choice has choices.")
    if kind == Kind.NUMBER:
        config.update(_range(raw, where))
    elif not (_blank(raw.get("min")) and _blank(raw.get("max"))):
        raise ProfileQuestionError(
            f"{where}: only a question of kind number has a smallest and a largest answer."
        )
    return {"key": key, "label": label, "kind": kind, "config": config}


def questions_clean(raw: Any) -> list[dict]:
    """The whole list, in its order, each checked, with distinct keys."""
    if not isinstance(raw, list):
        raise ProfileQuestionError("Give the questions as a list.")
    if len(raw) > MAX_QUESTIONS:
        raise ProfileQuestionError(f"A study asks at most {MAX_QUESTIONS} profile questions.")
    questions = [question_clean(item, number=n) for n, item in enumerate(raw, start=1)]
    keys = [q["key"] for q in questions]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        raise ProfileQuestionError(
            f"Two questions have the key {', '.join(repeated)}; keys must differ."
        )
    return questions


def question_as_dict(question: ProfileQuestion) -> dict:
    """A saved question in the shape ``question_clean`` takes (the API's and the page's)."""
    out: dict = {"key": question.key, "label": question.label, "kind": question.kind}
    if question.kind == Kind.CHOICE:
        out["choices"] = list(question.config.get("choices") or [])
    if question.kind == Kind.NUMBER:
        out.update(min=question.config.get("min"), max=question.config.get("max"))
    return out


def answer_clean(question: ProfileQuestion, raw: Any):
    """The answer as stored, or None ("prefer not to say", also for an empty answer)."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    where = f"“{question.label}”"
    if question.kind == Kind.CHOICE:
        if not isinstance(raw, str) or raw not in (question.config.get("choices") or []):
            raise ProfileAnswerError(f"{where}: choose one of the answers listed.")
        return raw
    if question.kind == Kind.NUMBER:
        value = _whole(raw, what=f"{where}: the answer", error=ProfileAnswerError)
        low, high = question.config.get("min"), question.config.get("max")
        if (low is not None and value < low) or (high is not None and value > high):
            raise ProfileAnswerError(f"{where}: give a whole number from {low} to {high}.")
        return value
    return (
        _text(raw, limit=MAX_TEXT_ANSWER, what=f"{where}: the answer", error=ProfileAnswerError)
        or None
    )


def answers_clean(questions: list[ProfileQuestion], raw: Any) -> dict:
    """{key: answer or None} for every question; a key that is no question is refused."""
    if not isinstance(raw, dict):
        raise ProfileAnswerError("Give the answers as an object, one per question.")
    keys = {question.key for question in questions}
    unknown = [key for key in raw if key not in keys]
    if unknown:
        raise ProfileAnswerError("An answer names no question of this study; reload the page.")
    return {question.key: answer_clean(question, raw.get(question.key)) for question in questions}
