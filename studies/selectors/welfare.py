"""Raters as research participants (protocol 3, 4.1): content warnings, skips, what the
information sheet adds, the welfare settings by stratum and the profile questions."""

from django.db.models import Count, Q

from ..exposure import exposure_limits
from ..models import (
    ProfileQuestion,
    StratumSetting,
    Study,
    TestCase,
    WelfareSettings,
)


def case_content_warnings(*, test_case: TestCase) -> list[str]:
    """The warnings a rater reads before this case's prompt and responses: its stratum's
    (``StratumSetting``), then its own, each once. The one place this rule lives.

    A warning belongs to the case, never to one of its responses: it says nothing about
    which system wrote what.
    """
    stratum_warning = (
        StratumSetting.objects.filter(study_id=test_case.study_id, stratum=test_case.stratum)
        .values_list("content_warning", flat=True)
        .first()
    )
    warnings = [(stratum_warning or "").strip(), test_case.content_warning.strip()]
    return list(dict.fromkeys(w for w in warnings if w))


def skips_handed_on(*, study: Study) -> bool:
    """Whether the study's design gives a skipped case to another rater: the balanced
    design (k raters per test case) does; where every rater rates every test case there is
    no one to give it to, so the case has one rating fewer. The one place this rule lives:
    the skip itself (``annotation.services.skipping``) and every text that tells raters
    and coordinators what a skip does ask it."""
    return bool(study.raters_per_item)


def information_sheet_additions(*, study: Study) -> list[str]:
    """What the information sheet says on the study's behalf about content and welfare
    (protocol 3), as the rater reads it before consenting, and as their consent records it.

    The content warnings of the strata (their texts, never the strata's names), that some
    cases carry a warning of their own, the right to skip any case, and the daily limits.
    """
    additions = []
    warnings = (
        StratumSetting.objects.filter(study=study)
        .exclude(content_warning="")
        .order_by("stratum")
        .values_list("content_warning", flat=True)
    )
    for warning in dict.fromkeys(w.strip() for w in warnings if w.strip()):
        additions.append(f"Some cases come with this content warning, shown before them: {warning}")
    if study.test_cases.exclude(content_warning="").exists():
        additions.append("Some cases carry a content warning of their own, shown before them.")
    handed_on = (
        "a skipped case is offered to another rater"
        if skips_handed_on(study=study)
        else "every rater rates every case in this study, so a skipped case is not given "
        "to anyone else"
    )
    additions.append(
        "You may skip any case, with or without a reason, before or after reading it; "
        f"{handed_on}, and skipping never counts against you."
    )
    limits = exposure_limits(study=study)
    if limits.daily_minutes is not None:
        additions.append(
            f"You rate for at most {_minutes_text([limits.daily_minutes])} of active time a "
            "day in this study; the app tells you when you can go on."
        )
    if limits.strata:
        # Each limit, never the stratum it belongs to (a stratum's name may say too much).
        additions.append(
            "Some kinds of cases have a daily limit of their own: "
            f"{_minutes_text(sorted(set(limits.strata.values())))} of active time a day; once "
            "you reach a limit, the app offers you other cases or tells you when you can go on."
        )
    return additions


def _minutes_text(values: list[int]) -> str:
    """ "45 minutes", "1 minute", "30 or 45 minutes", "15, 30 or 45 minutes"."""
    numbers = [str(value) for value in values]
    listed = numbers[0] if len(numbers) == 1 else f"{', '.join(numbers[:-1])} or {numbers[-1]}"
    return f"{listed} minute{'' if values == [1] else 's'}"


def welfare_settings_for(*, study: Study) -> WelfareSettings:
    """The study's rater-welfare settings; the defaults (nothing set) when none were saved."""
    return WelfareSettings.objects.filter(study=study).first() or WelfareSettings(study=study)


def study_strata(*, study: Study) -> list[str]:
    """The strata of the study's test cases ("" for cases without one), in order."""
    return sorted(set(study.test_cases.values_list("stratum", flat=True).distinct()))


def welfare_strata_table(*, study: Study) -> list[dict]:
    """One row per stratum of the study's cases: its content warning and daily limit, and
    how many test cases it has."""
    # Test cases and quality items counted apart, as every page counts them.
    rows = (
        study.test_cases.order_by()
        .values("stratum")
        .annotate(
            n=Count("pk", filter=Q(purpose=TestCase.Purpose.SAMPLE)),
            quality=Count("pk", filter=~Q(purpose=TestCase.Purpose.SAMPLE)),
        )
        .values_list("stratum", "n", "quality")
    )
    counts = {stratum: (n, quality) for stratum, n, quality in rows}
    saved = {s.stratum: s for s in StratumSetting.objects.filter(study=study)}
    return [
        {
            "stratum": stratum,
            "n_cases": counts[stratum][0],
            "n_quality": counts[stratum][1],
            "content_warning": saved[stratum].content_warning if stratum in saved else "",
            "daily_minutes": saved[stratum].daily_minutes if stratum in saved else None,
        }
        for stratum in sorted(counts)
    ]


def profile_questions_of(*, study: Study) -> list[ProfileQuestion]:
    """The study's rater profile questions, in the order raters see them."""
    return list(ProfileQuestion.objects.filter(study=study).order_by("position", "pk"))
