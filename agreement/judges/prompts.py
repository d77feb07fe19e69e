"""Reads for the LLM judges: the judges and the templates, the prompts to export, and the
outputs as imported (each case's prompt order is drawn from its systems, never from the key:
``studies.blinding.judge_prompt_first``). A judge's calibration report: ``calibration``.
"""

import csv
import io
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from django.db.models import Count, Q

from agreement.models import JudgeOutput
from annotation.worksheets.columns import neutralise
from core.user_input import uuid_or_none
from studies.blinding import judge_prompt_first
from studies.models import BlindedLabel, Response, Study, TestCase

from . import verdicts as judges
from .files import prompt_lines


@dataclass(frozen=True)
class _Pair:
    """A sample case's two responses in its judge prompts' order "AB" (first shown first)."""

    first: str
    second: str
    first_system: str
    second_system: str


def _prompt_pairs(study: Study) -> dict[int, _Pair]:
    """Sample cases with exactly two responses, each pair in its prompt order: read from the
    responses and their systems only, never from the key (``blinding.judge_prompt_first``)."""
    responses: dict[int, dict[str, str]] = defaultdict(dict)
    case_ids: dict[int, str] = {}
    rows = Response.objects.filter(
        test_case__study=study, test_case__purpose=TestCase.Purpose.SAMPLE
    ).values_list("test_case_id", "test_case__case_id", "system__name", "text")
    for case_pk, case_id, system, text in rows.iterator(chunk_size=2000):
        responses[case_pk][system] = text
        case_ids[case_pk] = case_id
    pairs = {}
    for case_pk, texts in responses.items():
        if len(texts) != 2:
            continue
        first = judge_prompt_first(
            seed=study.blinding_seed,
            secret=study.blinding_secret,
            case_id=case_ids[case_pk],
            systems=sorted(texts),
        )
        (second,) = (system for system in texts if system != first)
        pairs[case_pk] = _Pair(texts[first], texts[second], first, second)
    return pairs


def _first_is_key_a(study: Study, pairs: dict[int, _Pair]) -> dict[int, bool]:
    """Per case, whether its prompts show key label A first in order "AB": the only read of
    the key here, for the comparison with the raters (whose answers are in key order)."""
    label_a = dict(
        BlindedLabel.objects.filter(test_case__study=study, label="A").values_list(
            "test_case_id", "response__system__name"
        )
    )
    return {pk: label_a.get(pk) == pair.first_system for pk, pair in pairs.items()}


def study_judges_counted(*, study: Study):
    """The study's judges by name, each with its outputs, ties and unparseable outputs
    counted (``n_outputs``, ``n_ties``, ``n_unparseable``)."""
    return study.judges.annotate(
        n_outputs=Count("outputs"),
        n_ties=Count("outputs", filter=Q(outputs__verdict=judges.TIE)),
        n_unparseable=Count("outputs", filter=Q(outputs__verdict="")),
    ).order_by("name")


def judge_template_chosen(*, study: Study, choice: str) -> tuple[str, bool] | None:
    """The text of a template chosen by name ("reference", "reference-tie": built in; ""
    is the reference) or by the uuid of one of the study's, and whether it allows a tie;
    None if there is no such template."""
    if choice in ("", *judges.BUILT_IN):
        return judges.BUILT_IN[choice or "reference"]
    template = study.judge_templates.filter(uuid=uuid_or_none(choice)).first()
    return (template.text, template.allow_tie) if template else None


def judge_prompts_jsonl(*, study: Study, template: str) -> Iterator[str]:
    """The prompt export: one JSONL line per sample case with two responses and per order,
    in each case's prompt order (which does not depend on the blinding key)."""
    pairs = _prompt_pairs(study)
    cases = study.test_cases.in_sample().order_by("position")
    rows = (
        (case_id, prompt, context, pairs[pk].first, pairs[pk].second)
        for pk, case_id, prompt, context in cases.values_list("pk", "case_id", "prompt", "context")
        if pk in pairs
    )
    return prompt_lines(template, rows)


def pairwise_dimension(study: Study):
    """The study's first pairwise preference dimension (a kind that compares two), or None."""
    for dimension in study.rubric.dimensions.all():
        if dimension.scoring().compares_two:
            return dimension
    return None


JUDGE_EXPORT_COLUMNS = [
    "judge", "case_id", "order", "verdict_as_shown", "preferred_key_label", "problem", "output",
]  # fmt: skip


def judge_outputs_csv(*, study: Study) -> Iterator[str]:
    """The judges' outputs, one CSV row each: verdicts as shown and, once the study is
    unblinded, in key order (A/B); before that the key-order column is left empty, since
    with the prompts it would give the key away."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def flush() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    writer.writerow(JUDGE_EXPORT_COLUMNS)
    yield "\ufeff" + flush()
    rows = (
        JudgeOutput.objects.filter(judge__study=study)
        .order_by("judge__name", "test_case__position", "order")
        .values_list(
            "judge__name",
            "test_case_id",
            "test_case__case_id",
            "order",
            "verdict",
            "problem",
            "raw_text",
        )
    )
    # The key is read only once the study is unblinded: before that the column stays empty.
    key_a_first = _first_is_key_a(study, _prompt_pairs(study)) if study.is_unblinded else None
    for judge, case_pk, case_id, order, verdict, problem, text in rows.iterator(chunk_size=2000):
        key = ""
        if verdict and key_a_first is not None and case_pk in key_a_first:
            preference = judges.key_preference(verdict, order, swapped=not key_a_first[case_pk])
            key = {-1: "A", 0: judges.TIE, 1: "B"}[preference]
        # Text a spreadsheet would run as a formula is quoted, as in the raters' exports.
        writer.writerow(
            [neutralise(c) for c in (judge, case_id, order, verdict, key, problem, text)]
        )
        yield flush()
