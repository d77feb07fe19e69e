"""The demo study's rater welfare: pay, recruitment and retention set as a lead would, a
short rater profile answered by the two demo raters who have rated, and a calibration call,
so the report's "Rater number, recruitment, expertise, training and pay" item is filled."""

from datetime import timedelta

from django.utils import timezone

from annotation.services.calibration_call import calibration_call_record
from annotation.services.profile import profile_save
from studies.models import ProfileQuestion, Study
from studies.services.profile_questions import profile_questions_set
from studies.services.welfare import welfare_settings_update

RECRUITMENT = (
    "Three external raters with graduate training in public policy, invited from the study "
    "team's professional network; none worked on either system (demo)."
)
# Pay per case, checked against the demo raters' active times (10 to 25 minutes a case):
# at least 14.40 EUR an hour, above the minimum.
WELFARE = {
    "pay_basis": "case",
    "pay_amount": "6.00",
    "pay_currency": "EUR",
    "minimum_hourly": "12.82",
    "recruitment": RECRUITMENT,
    "retention_days": "180",
}
QUESTIONS = [
    {
        "key": "language",
        "label": "First language",
        "kind": ProfileQuestion.Kind.CHOICE,
        "choices": ["English", "German", "Another language"],
    },
    {
        "key": "policy_years",
        "label": "Years of policy analysis experience",
        "kind": ProfileQuestion.Kind.NUMBER,
        "min": 0,
        "max": 60,
    },
]
ANSWERS = {"R-02": {"language": "English", "policy_years": 6}, "R-03": {"language": None}}


def demo_welfare_settings(*, study: Study, actor) -> None:
    """The settings and the profile questions, set before the study opens."""
    welfare_settings_update(study=study, actor=actor, values=WELFARE)
    profile_questions_set(study=study, actor=actor, questions=QUESTIONS)


def demo_welfare_raters(*, study: Study, raters: list, actor) -> None:
    """The raters who have rated answer the profile (one answer withheld) and attended a
    calibration call."""
    now = timezone.now()
    for rater in raters:
        answers = ANSWERS.get(rater.pseudonym, {})
        profile_save(rater=rater, consented=True, answers=answers, share_with_pseudonym=False)
    calibration_call_record(
        study=study,
        actor=actor,
        held_at=now - timedelta(hours=2),
        attended=raters,
        note="Discussed how to count distinct factors under Depth of Analysis.",
    )
