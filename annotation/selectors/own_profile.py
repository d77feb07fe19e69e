"""A rater's own profile, read for that rater only (their profile page and study home).

Coordinators' reads of profiles are ``annotation.selectors.profile``: aggregate counts
only. Nothing else reads a profile with its rater, but the export of profiles the raters
agreed to share beside their pseudonym (``annotation.export_profiles``).
"""

from annotation.models import RaterProfile
from studies.models import Membership, ProfileQuestion
from studies.selectors import profile_questions_of


def own_profile(*, rater: Membership) -> RaterProfile | None:
    return RaterProfile.objects.filter(rater=rater).first()


def profile_asked(*, rater: Membership) -> bool:
    """The study asks for a profile and the rater has not answered (given or declined)."""
    return (
        ProfileQuestion.objects.filter(study_id=rater.study_id).exists()
        and not RaterProfile.objects.filter(rater=rater).exists()
    )


def own_profile_step(*, rater: Membership) -> dict | None:
    """The study page's profile step: None when the study asks for no profile, else
    {"profile"} (None: not answered yet)."""
    if not ProfileQuestion.objects.filter(study_id=rater.study_id).exists():
        return None
    return {"profile": own_profile(rater=rater)}


def own_profile_rows(*, rater: Membership, answers: dict | None = None) -> list[dict]:
    """The study's questions with the rater's answers (None: prefer not to say), for their
    form: [{"question", "answer", "withheld"}]. ``answers`` replaces the stored ones (a form
    sent back with an error)."""
    if answers is None:
        profile = own_profile(rater=rater)
        answers = profile.answers if profile is not None and profile.consented else {}
    return [
        {
            "question": question,
            "answer": answers.get(question.key),
            "withheld": answers.get(question.key) in (None, ""),
        }
        for question in profile_questions_of(study=rater.study)
    ]
