"""Quality control's settings, and the quality items' ids a rater could tell apart."""

import re

from ..models import (
    QualitySettings,
    Study,
    TestCase,
)


def quality_settings_for(*, study: Study) -> QualitySettings:
    """The study's quality rules; the protocol template's defaults when none were saved."""
    return QualitySettings.objects.filter(study=study).first() or QualitySettings(study=study)


# Words in a test case id that would tell a rater the case is a quality item.
QUALITY_ID_WORDS = ("gold", "attention", "check", "control", "quality", "qc", "trap", "catch")


_DIGITS = re.compile(r"\d+")


def quality_ids_standing_out(*, study: Study) -> list[str]:
    """The gold items' and attention checks' ids that a rater could tell from the sample's.

    Raters' pages never show test case ids, but offline worksheets do. An id stands out
    when it holds a word such as "gold" or "check", or when its form (digits aside:
    "TC-017" is "tc-#") is that of no sample case's id.
    """
    quality = list(
        study.test_cases.quality_items().order_by("position").values_list("case_id", flat=True)
    )
    if not quality:
        return []
    sample = study.test_cases.filter(purpose=TestCase.Purpose.SAMPLE).values_list(
        "case_id", flat=True
    )
    forms = {_DIGITS.sub("#", case_id.lower()) for case_id in sample.iterator(chunk_size=5000)}
    return [
        case_id
        for case_id in quality
        if _DIGITS.sub("#", case_id.lower()) not in forms
        or any(word in case_id.lower() for word in QUALITY_ID_WORDS)
    ]
