"""The one rule for a response's total and for the answers a rating lacks.

A response's **total** is the sum of the points of its per-response dimensions that count
in it (``max_points`` above 0). When any of those parts is not given (``given``: the kind
says), the total is **missing** (None), never the sum of the rest: a part left blank is
not worth 0 points. Every derived score (the rating's stored total, the worksheet's Total
column, the long table's ``response_total``, the analysis' totals) asks ``response_total``.

A submitted rating must give every **required** dimension (``required``: the rubric's
field, True unless the dimension is marked optional); ``answers_missing`` lists those it
lacks, in the form's order. A draft may lack any.
"""

from dataclasses import dataclass


def total_parts(dimensions) -> list:
    """The dimensions a response's total adds up: rated per response, with points."""
    return [d for d in dimensions if d.scope == "response" and d.max_points > 0]


def response_total(dimensions, scores: dict | None) -> int | None:
    """One response's total from its stored answers, or None when any part is not given."""
    scores = scores if isinstance(scores, dict) else {}
    total = 0
    for dimension in total_parts(dimensions):
        points = dimension.recorded_points(scores.get(dimension.key))
        if points is None:
            return None
        total += points
    return total


@dataclass(frozen=True)
class MissingAnswer:
    """A required dimension a rating does not answer: for response ``label`` ("" for a
    dimension rated once per case)."""

    label: str
    key: str
    name: str

    @property
    def field(self) -> str:
        """The rating form's field ("{label}-{key}", "case-{key}"), as errors name it."""
        return f"{self.label or 'case'}-{self.key}"


def answers_missing(dimensions, responses: dict, case: dict | None) -> list[MissingAnswer]:
    """The required dimensions not given, per response (labels in order) then per case."""
    missing = []
    for label in sorted(responses):
        scores = responses[label] if isinstance(responses[label], dict) else {}
        missing += [
            MissingAnswer(label, d.key, d.name)
            for d in dimensions
            if d.scope == "response" and d.required and not d.given(scores.get(d.key))
        ]
    case = case if isinstance(case, dict) else {}
    missing += [
        MissingAnswer("", d.key, d.name)
        for d in dimensions
        if d.scope == "case" and d.required and not d.given(case.get(d.key))
    ]
    return missing


def missing_text(missing: list[MissingAnswer]) -> str:
    """The missing answers named for a rater: "Response A: Fluency, Coherence; this test
    case: Preference"."""
    groups: dict[str, list[str]] = {}
    for answer in missing:
        where = f"Response {answer.label}" if answer.label else "this test case"
        groups.setdefault(where, []).append(answer.name)
    return "; ".join(f"{where}: {', '.join(names)}" for where, names in groups.items())
