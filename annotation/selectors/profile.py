"""Reads of rater profiles for coordinators and the report: aggregate counts only.

A profile is personal data kept apart from identity and ratings. Nothing here returns a
profile with its rater: counts per answer, with every count under the study's minimum cell
size suppressed, and a second cell suppressed where one suppressed cell could be recovered
by subtraction from the total (complementary suppression).
"""

from statistics import median

from annotation.models import RaterProfile
from studies.models import Membership, ProfileQuestion, Study, WelfareSettings

PREFER_NOT = "Prefer not to say"


def _suppressed(rows: list[dict], *, min_cell: int) -> list[dict]:
    """Rows of {"answer", "count"} with small counts replaced by None.

    A count from 1 to ``min_cell - 1`` is suppressed. When exactly one cell is suppressed,
    the smallest other cell is too, a zero included: the total is published, so one hidden
    cell alone could be recovered by subtraction. When the total itself is under
    ``min_cell``, every cell is suppressed: a handful of raters would be recognisable
    from any breakdown of their answers.
    """
    total = sum(row["count"] for row in rows)
    if 0 < total < min_cell:
        hidden = set(range(len(rows)))
    else:
        hidden = {i for i, row in enumerate(rows) if 0 < row["count"] < min_cell}
    if len(hidden) == 1:
        others = [(row["count"], i) for i, row in enumerate(rows) if i not in hidden]
        if others:
            hidden.add(min(others)[1])
    return [
        {"answer": row["answer"], "count": None if i in hidden else row["count"]}
        for i, row in enumerate(rows)
    ]


def _fits(question: ProfileQuestion, value) -> bool:
    if value is None:
        return False
    if question.kind == ProfileQuestion.Kind.CHOICE:
        return value in (question.config.get("choices") or [])
    if question.kind == ProfileQuestion.Kind.NUMBER:
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, str)


def profile_min_cell(*, study: Study) -> int:
    """The smallest count the report shows (the study's setting, or its default)."""
    welfare = WelfareSettings.objects.filter(study=study).first()
    if welfare is not None:
        return welfare.profile_min_cell
    return WelfareSettings._meta.get_field("profile_min_cell").get_default()


def profile_summary(*, study: Study) -> dict:
    """The study's profile answers as suppressed counts, per question, for the report.

    Returns ``{"raters", "consented", "declined", "min_cell", "questions"}``; each question
    has ``key``, ``label``, ``kind`` and ``rows`` (answer and count, None where suppressed).
    A number question adds ``median`` when at least ``min_cell`` raters answered it; a text
    question gives only how many answered, never the texts.
    """
    min_cell = profile_min_cell(study=study)
    raters = Membership.objects.filter(study=study, role=Membership.Role.RATER)
    profiles = list(
        RaterProfile.objects.filter(rater__in=raters).values_list("consented", "answers")
    )
    given = [answers for consented, answers in profiles if consented]
    questions = []
    for question in ProfileQuestion.objects.filter(study=study).order_by("position", "pk"):
        values = [answers.get(question.key) for answers in given if isinstance(answers, dict)]
        # An answer the question no longer takes (it changed during a pilot) counts as not
        # given, so that the rows always add up to the raters who gave a profile.
        answered = [value for value in values if _fits(question, value)]
        withheld = len(given) - len(answered)
        entry: dict = {"key": question.key, "label": question.label, "kind": question.kind}
        if question.kind == ProfileQuestion.Kind.CHOICE:
            choices = list(question.config.get("choices") or [])
            rows = [{"answer": choice, "count": answered.count(choice)} for choice in choices]
        else:
            rows = [{"answer": "Answered", "count": len(answered)}]
        rows.append({"answer": PREFER_NOT, "count": withheld})
        entry["rows"] = _suppressed(rows, min_cell=min_cell)
        if question.kind == ProfileQuestion.Kind.NUMBER:
            numbers = [value for value in answered if isinstance(value, int | float)]
            entry["median"] = median(numbers) if len(numbers) >= min_cell else None
        questions.append(entry)
    return {
        "raters": raters.count(),
        "consented": len(given),
        "declined": len(profiles) - len(given),
        "min_cell": min_cell,
        "questions": questions,
    }
