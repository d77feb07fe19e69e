"""Gold items and attention checks: which cases they are, their expected answers, the rules.

A gold item or attention check is a test case whose ``purpose`` says so, with an
``ExpectedAnswer``. Expected answers are written the way the coordinator knows the
responses, by system name (never by the blinded label, which would tell them the key), and
stored by key label; each dimension's kind reads and checks them (``studies.rubric``). All
of it is part of the protocol: it can change only before the study opens.
"""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from studies.errors import CaseImportError, StudySetupError
from studies.events import study_event_record
from studies.importing.tabular import read_table
from studies.locks import study_lock
from studies.models import (
    BlindedLabel,
    ExpectedAnswer,
    QualitySettings,
    Study,
    StudyEvent,
    TestCase,
)
from studies.rubric import RubricValueError
from studies.selectors import quality_settings_for
from studies.signals import analysis_inputs_announce

MAX_EXPLANATION = 2000
# A field of the browser form: longer text is cut before it is read (then refused as too long).
MAX_EXPECTED_FIELD = 300
MAX_GOLD_ROWS = 5000
GOLD_COLUMNS = ("case_id", "response", "dimension", "expected", "explanation")
QUALITY_PURPOSES = (TestCase.Purpose.GOLD, TestCase.Purpose.ATTENTION)

ATTENTION_TEXT = (
    "This response is intentionally empty of content. To show that you are reading "
    "carefully, give it the lowest score on every dimension."
)

# Bounds of the per-study rules, as the form and the service both enforce them.
SETTING_BOUNDS = {
    "gold_percent": (0, 50),
    "gold_pass_percent": (1, 100),
    "gold_minimum": (1, 100),
    "attention_every": (5, 1000),
    "attention_misses": (1, 20),
    "min_median_seconds": (0, 600),
    "position_share_percent": (51, 100),
    "straight_line_items": (3, 1000),
}


def _unfrozen(study: Study) -> Study:
    locked = study_lock(study.pk, exclusive=True)
    if locked.is_frozen:
        raise StudySetupError(
            "The study is open: gold items, attention checks and the quality rules are part "
            "of its frozen protocol."
        )
    return locked


@transaction.atomic
def quality_settings_update(*, study: Study, values: dict, actor) -> QualitySettings:
    """Save the study's quality-control rules; refused once the protocol is frozen."""
    study = _unfrozen(study)
    settings = quality_settings_for(study=study)
    changed: dict[str, Any] = {}
    for name, (low, high) in SETTING_BOUNDS.items():
        if name not in values:
            continue
        value = values[name]
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise StudySetupError(f"{name.replace('_', ' ')}: give a whole number {low}-{high}.")
        if getattr(settings, name) != value:
            changed[name] = value
            setattr(settings, name, value)
    if "gold_feedback" in values and bool(values["gold_feedback"]) != settings.gold_feedback:
        settings.gold_feedback = bool(values["gold_feedback"])
        changed["gold_feedback"] = settings.gold_feedback
    if "position_alpha" in values:
        alpha = values["position_alpha"]
        if not 0 < alpha < 1:
            raise StudySetupError("The significance level must be between 0 and 1.")
        if settings.position_alpha != alpha:
            settings.position_alpha = alpha
            changed["position_alpha"] = str(alpha)
    settings.save()
    if changed:
        study_event_record(
            study=study, actor=actor, kind=StudyEvent.Kind.QUALITY_SETTINGS_CHANGED, **changed
        )
    return settings


def _names(test_case: TestCase) -> dict[str, str]:
    """Key label -> system name for one case (coordinators know the systems, not the key)."""
    return dict(
        BlindedLabel.objects.filter(test_case=test_case).values_list(
            "label", "response__system__name"
        )
    )


@dataclass(frozen=True)
class ExpectedCell:
    """One expected answer as written: the response's system name ("" for the case)."""

    response: str
    dimension: str
    text: str


def _expected_clean(*, test_case: TestCase, cells: Sequence[ExpectedCell]) -> dict:
    """The stored answers for written cells; raises RubricValueError naming the cell."""
    names = _names(test_case)
    by_system = {name.lower(): label for label, name in names.items()}
    dimensions = {}
    for dimension in test_case.study.rubric.dimensions.all():
        scoring = dimension.scoring()
        dimensions[dimension.key.lower()] = scoring
        dimensions[dimension.name.lower()] = scoring
    answers: dict = {"responses": {}, "case": {}}
    for cell in cells:
        if not cell.text.strip():
            continue
        scoring = dimensions.get(cell.dimension.strip().lower())
        if scoring is None:
            raise RubricValueError(f"{cell.dimension[:50]!r} is not a dimension of the rubric.")
        expected = scoring.expected_in(cell.text, names=names)
        if scoring.scope == "case":
            if cell.response.strip():
                raise RubricValueError(
                    f"{scoring.name} is rated once per case: leave the response empty."
                )
            answers["case"][scoring.key] = expected
            continue
        label = by_system.get(cell.response.strip().lower())
        if label is None:
            raise RubricValueError(
                f"{scoring.name}: name the response by its system "
                f"({', '.join(sorted(names.values()))})."
            )
        answers["responses"].setdefault(label, {})[scoring.key] = expected
    if not answers["responses"] and not answers["case"]:
        raise RubricValueError("Give at least one expected answer.")
    return answers


def _explanation(text: str) -> str:
    text = (text or "").strip()
    if len(text) > MAX_EXPLANATION:
        raise RubricValueError(f"Keep the explanation under {MAX_EXPLANATION} characters.")
    return text.replace("\x00", "")


def _mark(test_case: TestCase, *, purpose: str, answers: dict, explanation: str, actor) -> None:
    """Make the case a quality item. Its expected answers are entered and read per system
    and stored by label, so its key is shown from now on: recorded once, for good (it is
    never a sample case again, ``TestCase.key_shown_at``), with an event in the history."""
    changes: dict[str, Any] = {}
    if test_case.purpose != purpose:
        changes["purpose"] = purpose
    if test_case.key_shown_at is None:
        changes["key_shown_at"] = timezone.now()
    if changes:
        TestCase.objects.filter(pk=test_case.pk).update(**changes)
        for name, value in changes.items():
            setattr(test_case, name, value)
    if "key_shown_at" in changes:
        study_event_record(
            study_id=test_case.study_id,
            actor=actor,
            kind=StudyEvent.Kind.CASE_KEY_SHOWN,
            case=test_case.case_id,
            purpose=purpose,
        )
    ExpectedAnswer.objects.update_or_create(
        test_case=test_case, defaults={"answers": answers, "explanation": explanation}
    )


@transaction.atomic
def expected_answers_set(
    *,
    test_case: TestCase,
    purpose: str,
    cells: Sequence[ExpectedCell],
    explanation: str,
    actor,
) -> ExpectedAnswer | None:
    """Make a case a gold item or attention check with these expected answers (or, with
    purpose "sample", take it off the quality items); all or nothing.

    A quality item taken off does not return to the sample: its key has been shown by
    system, so it is left out of the sample for good (``Purpose.LEFT_OUT``), and the
    history and the report say so (issue 38)."""
    study = _unfrozen(test_case.study)
    # Read again under the study's lock: whether its key was shown decides below.
    test_case.refresh_from_db(fields=["purpose", "key_shown_at"])
    if purpose == TestCase.Purpose.SAMPLE:
        if test_case.key_shown_at is None:
            return None  # a sample case already
        purpose = TestCase.Purpose.LEFT_OUT
        TestCase.objects.filter(pk=test_case.pk).update(purpose=purpose)
        ExpectedAnswer.objects.filter(test_case=test_case).delete()
        study_event_record(
            study=study,
            actor=actor,
            kind=StudyEvent.Kind.EXPECTED_ANSWERS_SET,
            case=test_case.case_id,
            purpose=purpose,
        )
        analysis_inputs_announce(study_id=study.pk, reason="cases")
        return None
    if purpose not in QUALITY_PURPOSES:
        raise StudySetupError("Choose gold item, attention check or sample.")
    try:
        answers = _expected_clean(test_case=test_case, cells=cells)
        text = _explanation(explanation)
    except RubricValueError as error:
        raise StudySetupError(str(error)) from error
    _mark(test_case, purpose=purpose, answers=answers, explanation=text, actor=actor)
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.EXPECTED_ANSWERS_SET,
        case=test_case.case_id,
        purpose=purpose,
    )
    analysis_inputs_announce(study_id=study.pk, reason="cases")
    return ExpectedAnswer.objects.get(test_case=test_case)


@transaction.atomic
def expected_answers_store(
    *, test_case: TestCase, answers: dict, explanation: str, actor
) -> ExpectedAnswer:
    """Make a case a gold item with expected answers already in their stored shape (each
    made by its kind, e.g. ``expected_from_key`` of an adjudicated answer); the same rules
    as ``expected_answers_set``: only before the study opens."""
    study = _unfrozen(test_case.study)
    try:
        text = _explanation(explanation)
    except RubricValueError as error:
        raise StudySetupError(str(error)) from error
    _mark(test_case, purpose=TestCase.Purpose.GOLD, answers=answers, explanation=text, actor=actor)
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.EXPECTED_ANSWERS_SET,
        case=test_case.case_id,
        purpose=TestCase.Purpose.GOLD,
    )
    analysis_inputs_announce(study_id=study.pk, reason="cases")
    return ExpectedAnswer.objects.get(test_case=test_case)


@transaction.atomic
def expected_answers_import(*, study: Study, filename: str, data: bytes, actor) -> int:
    """Read a gold file and mark its cases gold with their expected answers; all or nothing.

    Columns (a header row, any order): case_id, response (the system's name; empty for a
    dimension rated once per case), dimension (key or name), expected, and optionally
    explanation and purpose (gold, the default, or attention). Returns the cases marked.
    """
    study = _unfrozen(study)
    rows = read_table(filename=filename, data=data, max_rows=MAX_GOLD_ROWS + 1, max_columns=20)
    if not rows:
        raise CaseImportError(["The file is empty."])
    header = [cell.strip().lower() for cell in rows[0].cells]
    missing = [name for name in ("case_id", "dimension", "expected") if name not in header]
    if missing:
        raise CaseImportError([f"Row 1: the header needs the column(s) {', '.join(missing)}."])
    column = {name: header.index(name) for name in header if name}
    cases = {c.case_id: c for c in study.test_cases.select_related("study")}
    grouped, problems = _gold_groups(rows[1:], column=column, cases=cases)
    cleaned = []
    for case_id, group in grouped.items():
        try:
            answers = _expected_clean(test_case=group["case"], cells=group["cells"])
            explanation = _explanation(group["explanation"])
        except RubricValueError as error:
            rows_text = ", ".join(str(n) for n in group["rows"][:5])
            problems.append(f"Rows {rows_text} ({case_id}): {error}")
            continue
        cleaned.append((group["case"], group["purpose"], answers, explanation))
    if problems:
        raise CaseImportError(problems[:200])
    if not cleaned:
        raise CaseImportError(["The file has no expected answers."])
    for test_case, purpose, answers, explanation in cleaned:
        _mark(test_case, purpose=purpose, answers=answers, explanation=explanation, actor=actor)
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.EXPECTED_ANSWERS_IMPORTED,
        file=filename[:200],
        cases=len(cleaned),
    )
    analysis_inputs_announce(study_id=study.pk, reason="cases")
    return len(cleaned)


def _gold_groups(rows, *, column: dict, cases: dict) -> tuple[dict, list[str]]:
    """The gold file's rows grouped by case, and the problems of single rows."""

    def cell(row, name):
        index = column.get(name)
        return row.cells[index] if index is not None and index < len(row.cells) else ""

    grouped: dict[str, dict] = {}
    problems = []
    for row in rows:
        case_id = cell(row, "case_id").strip()
        test_case = cases.get(case_id)
        if test_case is None:
            problems.append(f"Row {row.number}: no test case {case_id[:50]!r} in this study.")
            continue
        purpose = cell(row, "purpose").strip().lower() or "gold"
        if purpose not in QUALITY_PURPOSES:
            problems.append(f"Row {row.number}: purpose must be gold or attention.")
            continue
        group = grouped.setdefault(
            case_id,
            {"case": test_case, "purpose": purpose, "cells": [], "explanation": "", "rows": []},
        )
        if group["purpose"] != purpose:
            problems.append(f"Row {row.number}: {case_id} is given two purposes.")
            continue
        group["cells"].append(
            ExpectedCell(cell(row, "response"), cell(row, "dimension"), cell(row, "expected"))
        )
        group["rows"].append(row.number)
        if cell(row, "explanation").strip():
            group["explanation"] = cell(row, "explanation")
    return grouped, problems


def _sample_case_systems(study: Study) -> list[str]:
    """The systems an added case should have to look like the sample: its most common set
    (every system, or in an arena-style study the commonest pairing)."""
    by_case: dict[int, list[str]] = {}
    rows = (
        study.test_cases.in_sample()
        .order_by("pk", "responses__system__name")
        .values_list("pk", "responses__system__name")
    )
    for case_pk, system in rows.iterator(chunk_size=5000):
        if system is not None:
            by_case.setdefault(case_pk, []).append(system)
    sets = Counter(tuple(systems) for systems in by_case.values())
    if sets:
        return list(sets.most_common(1)[0][0])
    return sorted(study.systems.values_list("name", flat=True))


@transaction.atomic
def attention_check_create(
    *, study: Study, case_id: str, prompt: str, text: str, actor, stratum: str | None = None
) -> TestCase:
    """Add an attention check: each response is the instructed text (as many responses, of
    the same systems, as the sample's commonest case has), and the
    expected answer of every dimension is what that text asks for (its kind says what).

    Raters see a case's stratum, so the check takes one like the sample's (the most common,
    unless one is given): a case without one would stand out in a stratified study.
    """
    from studies.services.cases import test_cases_add  # the case writer

    study = _unfrozen(study)
    case_id, prompt, text = case_id.strip(), prompt.strip(), (text or ATTENTION_TEXT).strip()
    if not case_id or len(case_id) > 50 or "\x00" in case_id:
        raise StudySetupError("Give the check a test case id of up to 50 characters.")
    if study.test_cases.filter(case_id=case_id).exists():
        raise StudySetupError(f"The study already has a test case {case_id}.")
    if not prompt or len(prompt) > 20000 or len(text) > 20000:
        raise StudySetupError("Give a prompt, and keep prompt and text under 20,000 characters.")
    if stratum is None:
        strata = Counter(study.test_cases.in_sample().values_list("stratum", flat=True))
        stratum = strata.most_common(1)[0][0] if strata else ""
    systems = _sample_case_systems(study)
    if not systems:
        raise StudySetupError("Import the test cases first: the check needs the study's systems.")
    test_cases_add(
        study=study,
        systems=systems,
        cases=[
            {
                "id": case_id,
                "prompt": prompt,
                "stratum": stratum[:100],
                "responses": {s: text for s in systems},
            }
        ],
    )
    test_case = study.test_cases.get(case_id=case_id)
    answers: dict = {"responses": {}, "case": {}}
    labels = list(test_case.labels.values_list("label", flat=True))
    for dimension in study.rubric.scoring_dimensions():
        expected = dimension.attention_expected()
        if expected is None:
            continue
        if dimension.scope == "case":
            answers["case"][dimension.key] = expected
        else:
            for label in labels:
                answers["responses"].setdefault(label, {})[dimension.key] = expected
    _mark(
        test_case, purpose=TestCase.Purpose.ATTENTION, answers=answers, explanation="", actor=actor
    )
    study_event_record(
        study=study, actor=actor, kind=StudyEvent.Kind.ATTENTION_CHECK_ADDED, case=case_id
    )
    return test_case


def expected_rows(*, test_case: TestCase) -> list[dict]:
    """The form's rows for one case: response (system), dimension, expected text, help."""
    names = _names(test_case)
    stored = getattr(test_case, "expected", None)
    answers = stored.answers if stored else {}
    rows = []
    dimensions = test_case.study.rubric.scoring_dimensions()
    for dimension in dimensions:
        if dimension.scope == "case":
            value = (answers.get("case") or {}).get(dimension.key)
            rows.append(_row(dimension, "", value, names))
            continue
        for label, system in sorted(names.items(), key=lambda item: item[1]):
            value = ((answers.get("responses") or {}).get(label) or {}).get(dimension.key)
            rows.append(_row(dimension, system, value, names))
    return rows


def _row(dimension, system: str, value, names) -> dict:
    return {
        "response": system,
        "dimension": dimension.key,
        "name": dimension.name,
        "text": dimension.expected_text(value, names=names) if value else "",
        "help": dimension.describe_expected(),
    }
