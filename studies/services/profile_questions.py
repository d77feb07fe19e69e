"""The study's rater profile questions (protocol 4.1): replaced as a whole, until set-up freezes.

Like the rest of what raters see, the questions freeze once the study opens (or raters
have started rating); a change is recorded in the audit trail as ``PROFILE_QUESTIONS_SET``.
"""

from django.contrib.auth.models import User
from django.db import transaction

from studies.events import study_event_record
from studies.models import ProfileQuestion, Study, StudyEvent
from studies.profile_questions import question_as_dict, questions_clean
from studies.selectors import profile_questions_of

from .guards import locked_study, refuse_if_frozen


@transaction.atomic
def profile_questions_set(
    *, study: Study, actor: User | None, questions: list
) -> list[ProfileQuestion]:
    """Replace the study's profile questions with ``questions`` (in their order): [{"key",
    "label", "kind", "choices" | "min", "max"}]. All or nothing; an empty list removes them
    all. Refused once set-up is frozen."""
    cleaned = questions_clean(questions)
    study = locked_study(study)
    refuse_if_frozen(study, "The rater profile questions can no longer change.")
    before = [question_as_dict(q) for q in profile_questions_of(study=study)]
    ProfileQuestion.objects.filter(study=study).delete()
    saved = ProfileQuestion.objects.bulk_create(
        ProfileQuestion(study=study, position=position, **question)
        for position, question in enumerate(cleaned)
    )
    after = [question_as_dict(q) for q in saved]
    if after != before:
        study_event_record(
            study=study, actor=actor, kind=StudyEvent.Kind.PROFILE_QUESTIONS_SET, questions=after
        )
    return saved
