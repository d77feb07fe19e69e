"""How much raters disagree on one item: the calibration call's ranking (protocol 4.2).

Plain Python over answers in the shape a submitted rating takes, ``{"responses": {label:
{dimension key: answer}}, "case": {key: answer}}``, read by the rubric's kinds, so that the
measure can be tested without a database.

The measure (``MEASURE`` says it in words, for the page):

- a *question* is one response's dimension, or one dimension rated once per case;
- on each question, the raters who answered it form pairs; a pair disagrees when the two
  answers differ as the agreement statistics see them (the kind's ``agreement_value``, in
  key order, so that a preference given on a flipped screen is turned back first);
- the question's disagreement is the share of its pairs that disagree (0 to 1);
- the item's disagreement is the mean over its questions that have at least one pair.
  Items are ranked by it, then by how many questions have any disagreement.
"""

from collections import Counter
from dataclasses import dataclass

from studies.rubric import answer_flag

MEASURE = (
    "For each question (a response's dimension, or a dimension rated once per case), the "
    "share of pairs of raters whose answers differ, as the agreement statistics compare "
    "them; an item's disagreement is the mean of these shares over its questions. Items "
    "are ranked by it, then by the number of questions on which any two raters differ."
)


@dataclass(frozen=True)
class RaterAnswer:
    """One rater's answer to an item, under their pseudonym."""

    rater: str
    answer: dict
    # The rater's screen showed the responses in reverse key order (balanced side design).
    flipped: bool = False


@dataclass(frozen=True)
class Given:
    """A rater's answer to one question, as the page shows it."""

    rater: str
    text: str
    note: str
    odd: bool  # differs from the answer most raters gave (highlighted on the page)


@dataclass(frozen=True)
class Question:
    label: str  # the response's label; "" for a dimension rated once per case
    dimension: str
    name: str
    answers: tuple[Given, ...]
    key: str | None  # the answer key's answer (qualification items), None when there is none
    pairs: int
    disagreeing: int

    @property
    def share(self) -> float:
        return self.disagreeing / self.pairs if self.pairs else 0.0

    @property
    def percent(self) -> int:
        return round(100 * self.share)


@dataclass(frozen=True)
class ItemDisagreement:
    questions: tuple[Question, ...]
    raters: tuple[str, ...]  # pseudonyms, in the order of each question's answers

    @property
    def compared(self) -> tuple[Question, ...]:
        return tuple(q for q in self.questions if q.pairs)

    @property
    def score(self) -> float:
        """The mean share of disagreeing pairs over the questions with a pair (0 to 1)."""
        compared = self.compared
        return sum(q.share for q in compared) / len(compared) if compared else 0.0

    @property
    def percent(self) -> int:
        return round(100 * self.score)

    @property
    def disputed(self) -> int:
        """How many questions have at least one disagreeing pair."""
        return sum(1 for q in self.questions if q.disagreeing)

    @property
    def rank_key(self) -> tuple[float, int]:
        """Sorts the most disagreement first: ``sorted(..., key=lambda d: d.rank_key)``."""
        return (-self.score, -self.disputed)


def pairs_disagreeing(values: list) -> tuple[int, int]:
    """(pairs that differ, pairs) among the answered values (None is unanswered)."""
    answered = [v for v in values if v is not None]
    pairs = len(answered) * (len(answered) - 1) // 2
    agreeing = sum(c * (c - 1) // 2 for c in Counter(answered).values())
    return pairs - agreeing, pairs


def _stored(answer: dict, label: str, key: str):
    answer = answer if isinstance(answer, dict) else {}
    scores = (answer.get("responses") or {}).get(label) if label else answer.get("case")
    return scores.get(key) if isinstance(scores, dict) else None


def item_disagreement(
    *, answers: list[RaterAnswer], dimensions, labels: list[str], key: dict | None = None
) -> ItemDisagreement:
    """Each question's answers side by side and its disagreement; ``dimensions`` are the
    rubric's kinds, ``labels`` the item's response labels in key order."""
    answers = sorted(answers, key=lambda a: a.rater)
    cells = [(label, d) for label in labels for d in dimensions if d.scope == "response"]
    cells += [("", d) for d in dimensions if d.scope == "case"]
    questions = []
    for label, dimension in cells:
        stored = [_stored(a.answer, label, dimension.key) for a in answers]
        values = [
            dimension.agreement_value(value, flipped=a.flipped) if value is not None else None
            for a, value in zip(answers, stored, strict=True)
        ]
        disagreeing, pairs = pairs_disagreeing(values)
        common = Counter(v for v in values if v is not None).most_common(1)
        usual = common[0][0] if common else None
        given = tuple(
            Given(
                rater=a.rater,
                text=dimension.given_text(value, flipped=a.flipped),
                note=answer_flag(value)[1],
                odd=bool(disagreeing) and number is not None and number != usual,
            )
            for a, value, number in zip(answers, stored, values, strict=True)
        )
        key_value = _stored(key, label, dimension.key) if key else None
        questions.append(
            Question(
                label=label,
                dimension=dimension.key,
                name=dimension.name,
                answers=given,
                key=dimension.given_text(key_value) if key_value is not None else None,
                pairs=pairs,
                disagreeing=disagreeing,
            )
        )
    return ItemDisagreement(questions=tuple(questions), raters=tuple(a.rater for a in answers))
