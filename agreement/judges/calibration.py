"""Reads for the LLM judges: the prompts to export and a judge's calibration report.

The human side is the study's pairwise preference as the agreement statistics read it
(``selectors.study_ratings``: sample cases, the current phase, excluded raters left out,
each screen's side undone). Judges are never raters: nothing here feeds the agreement
statistics. System names appear only once the study is unblinded.
"""

import csv
import io
from collections import defaultdict
from collections.abc import Iterator

import numpy as np
from django.db.models import Count, Max

from agreement.models import Judge, JudgeOutput
from agreement.selectors import computed_for_inputs, study_ratings
from agreement.stats.ranking import win_matrix
from annotation.exports import is_unblinded
from annotation.worksheets.columns import neutralise
from studies.blinding import judge_prompt_swapped
from studies.models import BlindedLabel, Study, TestCase

from . import verdicts as judges
from .files import prompt_lines

MAX_DISAGREEMENTS_SHOWN = 200


def _pair_texts(study: Study) -> dict[int, dict]:
    """Sample cases with exactly two responses: {case pk: {"A": (text, system), "B": ...}}."""
    texts: dict[int, dict] = defaultdict(dict)
    rows = BlindedLabel.objects.filter(
        test_case__study=study, test_case__purpose=TestCase.Purpose.SAMPLE
    ).values_list("test_case_id", "label", "response__text", "response__system__name")
    for case_pk, label, text, system in rows.iterator(chunk_size=2000):
        texts[case_pk][label] = (text, system)
    return {pk: labels for pk, labels in texts.items() if set(labels) == {"A", "B"}}


def _swapped(study: Study, case_id: str) -> bool:
    return judge_prompt_swapped(
        seed=study.blinding_seed, secret=study.blinding_secret, case_id=case_id
    )


def _in_prompt_order(study: Study, case_id: str, labels: dict) -> tuple:
    """The case's two responses as its prompts show them in order "AB"."""
    first, second = labels["A"], labels["B"]
    return (second, first) if _swapped(study, case_id) else (first, second)


def judge_prompts_jsonl(*, study: Study, template: str) -> Iterator[str]:
    """The prompt export: one JSONL line per sample case with two responses and per order,
    in each case's prompt order (which says nothing about the blinding key)."""
    texts = _pair_texts(study)
    cases = study.test_cases.in_sample().order_by("position")
    rows = (
        (
            case_id,
            prompt,
            context,
            *(text for text, _ in _in_prompt_order(study, case_id, texts[pk])),
        )
        for pk, case_id, prompt, context in cases.values_list("pk", "case_id", "prompt", "context")
        if pk in texts
    )
    return prompt_lines(template, rows)


def pairwise_dimension(study: Study):
    """The study's first pairwise preference dimension (a kind that compares two), or None."""
    for dimension in study.rubric.dimensions.all():
        if dimension.scoring().compares_two:
            return dimension
    return None


def _number(value: float) -> float | None:
    return None if value is None or np.isnan(value) else float(value)


def judge_calibration_report(*, study: Study, judge: Judge) -> dict:
    """``judge_calibration``, computed once for the same humans' data and judge outputs
    (its bootstrap takes seconds at tens of thousands of cases)."""
    outputs = JudgeOutput.objects.filter(judge=judge).aggregate(
        count=Count("pk"), last=Max("imported_at"), last_id=Max("pk")
    )
    return computed_for_inputs(
        study=study,
        name=f"judge-calibration:{judge.pk}",
        extra=outputs,
        compute=lambda: judge_calibration(study=study, judge=judge),
    )


def judge_calibration(*, study: Study, judge: Judge, n_resamples: int = 1000) -> dict:
    """The judge against the humans: kappa with the majority and each rater, position
    consistency and first-position rate, win rates, length bias, and the disagreements."""
    dimension = pairwise_dimension(study)
    cases = list(
        study.test_cases.in_sample()
        .order_by("position")
        .values_list("pk", "case_id", "prompt", "context")
    )
    index = {pk: i for i, (pk, *_) in enumerate(cases)}
    texts = _pair_texts(study)

    by_order = np.full((len(cases), 2), np.nan)
    shown, raw, unparseable = [], defaultdict(dict), []
    outputs = JudgeOutput.objects.filter(judge=judge).values_list(
        "test_case_id", "test_case__case_id", "order", "verdict", "problem", "raw_text"
    )
    for case_pk, case_id, order, verdict, problem, text in outputs:
        raw[case_pk][order] = {"verdict": verdict, "problem": problem, "text": text}
        if not verdict:
            unparseable.append({"case_id": case_id, "order": order, "problem": problem})
            continue
        if case_pk in index:
            by_order[index[case_pk], judges.ORDERS.index(order)] = judges.key_preference(
                verdict, order, swapped=_swapped(study, case_id)
            )
            shown.append(verdict)
    judge_prefs = judges.judge_case_preferences(by_order)

    raters: list[str] = []
    human = np.full((0, len(cases)), np.nan)
    if dimension is not None:
        data = study_ratings(study=study, pilot=study.current_phase == "pilot")
        found = next((d for d in data.dimensions if d.key == dimension.key), None)
        if found is not None:
            raters, human = data.raters, np.sign(found.key_matrix)
    majority = judges.human_majority(human) if len(raters) else np.full(len(cases), np.nan)
    with_majority = judges.kappa_with_interval(
        judge_prefs, majority, n_resamples=n_resamples, seed=study.blinding_seed
    )
    per_rater = [
        {"rater": name, **_kappa(judges.kappa_with_interval(judge_prefs, human[i], n_resamples=0))}
        for i, name in enumerate(raters)
    ]
    consistency, n_both = judges.position_consistency(by_order)
    first_rate, n_shown = judges.first_position_rate(shown)

    lengths = np.array(
        [
            [len(texts[pk]["A"][0]), len(texts[pk]["B"][0])] if pk in texts else [0, 0]
            for pk, *_ in cases
        ]
    ).reshape(len(cases), 2)
    judge_longer, judge_decisive = judges.longer_preferred_rate(judge_prefs, lengths)
    human_longer, human_decisive = judges.longer_preferred_rate(majority, lengths)

    disagreements = []
    differs = ~np.isnan(judge_prefs) & ~np.isnan(majority) & (judge_prefs != majority)
    for i in np.flatnonzero(differs)[:MAX_DISAGREEMENTS_SHOWN]:
        pk, case_id, prompt, context = cases[i]
        votes = human[:, i] if len(raters) else np.array([])
        # In the prompts' order, as the judge saw them: key order would show the key to a
        # coordinator who knows the texts by system.
        sign = -1 if _swapped(study, case_id) else 1
        first, second = _in_prompt_order(
            study, case_id, texts.get(pk, {"A": ("", ""), "B": ("", "")})
        )
        disagreements.append(
            {
                "case_id": case_id,
                "prompt": prompt,
                "steps": judges.numbered_steps(context).splitlines(),
                "text_first": first[0],
                "text_second": second[0],
                "humans": _preference_label(sign * majority[i]),
                "votes": {
                    "first": int((sign * votes < 0).sum()),
                    "tie": int((votes == 0).sum()),
                    "second": int((sign * votes > 0).sum()),
                },
                "judge": _preference_label(sign * judge_prefs[i]),
                "outputs": [
                    {"order": order, **raw[pk][order]}
                    for order in judges.ORDERS
                    if order in raw[pk]
                ],
            }
        )

    return {
        "dimension": dimension.name if dimension is not None else None,
        "n_cases": len(cases),
        "n_outputs": len(shown) + len(unparseable),
        "n_judged": int((~np.isnan(judge_prefs)).sum()),
        "n_raters": len(raters),
        "majority": _kappa(with_majority),
        "per_rater": per_rater,
        "position_consistency": _number(consistency),
        "n_both_orders": n_both,
        "first_position_rate": _number(first_rate),
        "n_verdicts": n_shown,
        "length": {
            "judge": _number(judge_longer),
            "judge_n": judge_decisive,
            "humans": _number(human_longer),
            "humans_n": human_decisive,
        },
        "win_rates": _win_rates(study, cases, texts, judge_prefs, majority),
        "disagreements": disagreements,
        "n_disagreements": int(differs.sum()),
        "unparseable": unparseable,
    }


def _kappa(result: judges.KappaInterval) -> dict:
    return {
        "kappa": _number(result.kappa),
        "low": _number(result.low),
        "high": _number(result.high),
        "n": result.n_cases,
    }


def _preference_label(value: float) -> str:
    """A preference in the prompts' order: the first or the second response shown."""
    return {-1.0: "first", 0.0: "tie", 1.0: "second"}.get(float(value), "")


def _win_rates(study, cases, texts, judge_prefs, majority) -> list[dict] | None:
    """Per system, the share of its cases it won (a tie half) by the judge and by the humans'
    majority; None before unblinding, since it names the systems."""
    if not is_unblinded(study):
        return None
    systems = sorted({system for labels in texts.values() for _, system in labels.values()})
    if len(systems) < 2:
        return []
    number = {name: i for i, name in enumerate(systems)}
    rows = []
    for prefs in (judge_prefs, majority):
        first, second, outcome = [], [], []
        for (pk, *_), pref in zip(cases, prefs, strict=True):
            if pk not in texts or np.isnan(pref):
                continue
            first.append(number[texts[pk]["A"][1]])
            second.append(number[texts[pk]["B"][1]])
            outcome.append({-1.0: 1.0, 0.0: 0.5, 1.0: 0.0}[float(pref)])
        matrix = win_matrix(
            np.array(first, dtype=int), np.array(second, dtype=int), outcome, len(systems)
        )
        scored = (matrix.wins + 0.5 * matrix.ties).sum(axis=1)
        met = matrix.comparisons.sum(axis=1)
        rows.append(
            [(float(s / m) if m else None, int(m)) for s, m in zip(scored, met, strict=True)]
        )
    return [
        {
            "system": name,
            "judge": rows[0][i][0],
            "judge_n": rows[0][i][1],
            "humans": rows[1][i][0],
            "humans_n": rows[1][i][1],
        }
        for i, name in enumerate(systems)
    ]


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
        .values_list("judge__name", "test_case__case_id", "order", "verdict", "problem", "raw_text")
    )
    unblinded = is_unblinded(study)
    for judge, case_id, order, verdict, problem, text in rows.iterator(chunk_size=2000):
        key = ""
        if verdict and unblinded:
            preference = judges.key_preference(verdict, order, swapped=_swapped(study, case_id))
            key = "A" if preference < 0 else "B"
        # Text a spreadsheet would run as a formula is quoted, as in the raters' exports.
        writer.writerow(
            [neutralise(c) for c in (judge, case_id, order, verdict, key, problem, text)]
        )
        yield flush()
