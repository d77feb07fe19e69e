"""What every rating write asks of an answer: the limits, the errors, and the cleaning and
scoring that decide whether a submit would be recorded (``submission_check``)."""

from annotation.models import Assignment
from studies.errors import ApplicationError
from studies.models import Study
from studies.rubric import RubricValueError, answers_missing, missing_text, score_form

MAX_NOTES_LENGTH = 5000


class StaleVersionError(ApplicationError):
    """The save was based on an older version than the one stored."""


class RatingClosedError(ApplicationError):
    """The study does not accept ratings now."""


class RatingInvalidError(ApplicationError):
    """The submitted form does not fit the rubric; the message says what to fix, and
    ``field`` which part of the rating form it concerns ("" for the form as a whole)."""

    def __init__(self, message: str = "", *, field: str = ""):
        super().__init__(message)
        self.field = field


def _clean_case_fields(payload: dict) -> tuple[str, str]:
    confidence = str(payload.get("confidence") or "")
    if confidence and confidence not in Assignment.Confidence.values:
        raise RatingInvalidError("Confidence must be Low, Medium or High.", field="confidence")
    notes = str(payload.get("notes") or "").strip()
    if len(notes) > MAX_NOTES_LENGTH:
        raise RatingInvalidError(
            f"Notes are limited to {MAX_NOTES_LENGTH} characters.", field="notes"
        )
    return confidence, notes


def _score_labels(*, study: Study, labels: list[str], payload: dict) -> tuple[dict, dict]:
    dimensions = study.rubric.scoring_dimensions()
    try:
        return score_form(dimensions, payload, labels=labels)
    except RubricValueError as error:
        raise RatingInvalidError(str(error), field=error.field) from error


# One study holds ratings made in Concord or ratings imported by system name, never both
# (``annotation.selectors.imported``): the imported ones would tell the key.
IMPORTED_HELD_MESSAGE = (
    "This study holds ratings imported from elsewhere by system name, so it takes no "
    "ratings made in Concord: beside the imported ones, its statistics by response label "
    "would show which system each label stands for, and the blinding would be lost."
)
CONCORD_HELD_MESSAGE = (
    "This study holds ratings made in Concord, so ratings cannot be imported into it by "
    "system name: what the file says of a system would show, in the statistics by response "
    "label, which system each label stands for, and the raters' blinding would be lost. "
    "Import them into a study of their own."
)

STALE_MESSAGE = (
    "This case was saved from another tab or device after you opened it. "
    "Reload to see the newer version; your unsaved answers are kept in this tab."
)


def submission_check(
    *, study: Study, labels: list[str], payload: dict, confidence_required: bool = True
) -> dict:
    """What a submit of ``payload`` for a case with these labels would record, cleaned and
    scored; raises ``RatingInvalidError`` as a submit would. Writes nothing: the rubric
    preview asks it too, so it refuses exactly what the rating screen refuses.

    Ratings imported from elsewhere may leave the confidence blank when the study allows it
    (``Study.imported_optional``); it is then stored blank, never as a default. Every
    required dimension must be answered (``studies.rubric.answers_missing``), whatever the
    source; a draft need not be (``drafts``).
    """
    confidence, notes = _clean_case_fields(payload)
    if not confidence and confidence_required:
        raise RatingInvalidError(
            "Choose your confidence (Low, Medium or High) before submitting.", field="confidence"
        )
    scored, case_scored = _score_labels(study=study, labels=labels, payload=payload)
    missing = answers_missing(study.rubric.scoring_dimensions(), scored, case_scored)
    if missing:
        # The page keeps the draft and moves to the first missing answer (``field``).
        raise RatingInvalidError(
            f"Answer every required question before submitting; missing: {missing_text(missing)}.",
            field=missing[0].field,
        )
    if study.explanation_first and not notes:
        _refuse_verdict_without_explanation(study=study, case_scored=case_scored)
    return {"responses": scored, "case": case_scored, "confidence": confidence, "notes": notes}


EXPLANATION_FIRST_MESSAGE = (
    "This study asks for your reasoning first: write it in the box above the preference, "
    "then choose."
)


def _refuse_verdict_without_explanation(*, study: Study, case_scored: dict) -> None:
    """A preference between the two responses needs the rater's written reasoning."""
    for dimension in study.rubric.scoring_dimensions():
        if dimension.compares_two and dimension.answered(case_scored.get(dimension.key)):
            raise RatingInvalidError(EXPLANATION_FIRST_MESSAGE, field="notes")
