"""The one export that carries rater profiles: only of the raters who agreed to exactly that.

A rater's profile goes into this file, beside their pseudonym (never a name), only when they
gave it under its own consent and ticked "my profile may be exported beside my pseudonym".
No other export joins a profile; the report shows suppressed counts only
(``annotation.selectors.profile``).
"""

from collections.abc import Iterator

from studies.models import Membership, Study
from studies.selectors import profile_questions_of

from .models import RaterProfile

WITHHELD = "prefer not to say"


def profile_rows(*, study: Study) -> Iterator[list]:
    """A header (Rater, then each question's key), then one row per sharing rater, ordered
    by pseudonym; an answer withheld reads "prefer not to say"."""
    keys = [question.key for question in profile_questions_of(study=study)]
    yield ["Rater", *keys]
    profiles = (
        RaterProfile.objects.filter(
            rater__study=study,
            rater__role=Membership.Role.RATER,
            consented=True,
            share_with_pseudonym=True,
        )
        .order_by("rater__pseudonym")
        .values_list("rater__pseudonym", "answers")
    )
    for pseudonym, answers in profiles.iterator():
        answers = answers if isinstance(answers, dict) else {}
        yield [pseudonym, *(_cell(answers.get(key)) for key in keys)]


def _cell(value) -> str | int | float:
    return WITHHELD if value is None else value
