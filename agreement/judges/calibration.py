"""Reads for the LLM judges: the prompts to export and a judge's calibration report.

The human side is the study's pairwise preference as the agreement statistics read it
(``selectors.study_ratings``: sample cases, the current phase, excluded raters left out,
each screen's side undone). Judges are never raters: nothing here feeds the agreement
statistics. Before unblinding, nothing here reads the key or sets the judge beside the
raters (see ``judge_calibration``); system names appear only once the study is unblinded.
"""

import csv
import io
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from django.db.models import Count, Max, Q

from agreement.analysis.aggregation import preference_majority
from agreement.analysis.jobs import Analysis
from agreement.models import Judge, JudgeOutput
from agreement.selectors import study_ratings
from agreement.stats.ranking import win_matrix
from annotation.worksheets.columns import neutralise
from core.user_input import uuid_or_none
from studies.blinding import judge_prompt_first
from studies.models import BlindedLabel, Response, Study, TestCase

from . import verdicts as judges
from .files import prompt_lines

MAX_DISAGREEMENTS_SHOWN = 200


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


def _number(value: float) -> float | None:
    return None if value is None or np.isnan(value) else float(value)


def judge_calibration_analysis(*, study: Study, judge: Judge) -> Analysis:
    """``judge_calibration`` as a page's analysis, kept for the same humans' data and judge
    outputs (its bootstrap takes seconds at tens of thousands of cases)."""
    outputs = JudgeOutput.objects.filter(judge=judge).aggregate(
        count=Count("pk"), last=Max("imported_at"), last_id=Max("pk")
    )
    return Analysis(
        study=study,
        name=f"judge-calibration:{judge.pk}",
        extra=outputs,
        compute=lambda: judge_calibration(study=study, judge=judge),
    )


@dataclass
class _Verdicts:
    """A judge's outputs on the sample: preferences in prompt terms (-1 prefers the response
    shown first in order "AB", +1 the second), per order and per case."""

    by_order: np.ndarray
    case: np.ndarray
    shown: list[str]
    raw: dict
    unparseable: list[dict]


def _judge_verdicts(judge: Judge, cases: list[tuple]) -> _Verdicts:
    index = {pk: i for i, (pk, *_) in enumerate(cases)}
    by_order = np.full((len(cases), 2), np.nan)
    shown, raw, unparseable = [], defaultdict(dict), []
    outputs = JudgeOutput.objects.filter(judge=judge).values_list(
        "test_case_id", "test_case__case_id", "order", "verdict", "problem", "raw_text"
    )
    for case_pk, case_id, order, verdict, problem, text in outputs.order_by(
        "test_case__position", "order"
    ):
        raw[case_pk][order] = {"verdict": verdict, "problem": problem, "text": text}
        if not verdict:
            unparseable.append({"case_id": case_id, "order": order, "problem": problem})
            continue
        if case_pk in index:
            by_order[index[case_pk], judges.ORDERS.index(order)] = judges.key_preference(
                verdict, order
            )
            shown.append(verdict)
    return _Verdicts(by_order, judges.judge_case_preferences(by_order), shown, raw, unparseable)


def _lengths(cases: list[tuple], pairs: dict[int, _Pair]) -> np.ndarray:
    """Cases x 2: the lengths of the responses shown first and second in order "AB"."""
    rows = [
        [len(pairs[pk].first), len(pairs[pk].second)] if pk in pairs else [0, 0] for pk, *_ in cases
    ]
    return np.array(rows, dtype=float).reshape(len(cases), 2)


def judge_calibration(*, study: Study, judge: Judge, n_resamples: int = 1000) -> dict:
    """The judge on its own (parse problems, position, length, coverage) and, once the
    study is unblinded, against the humans.

    Before unblinding nothing compares the judge with the raters: the coordinator knows
    which system wrote each text and reads the raters' answers per case in key terms, so
    any such statistic (two judges that differ on one case, and their kappas) tells the
    raters' verdict on that case per system, and with it the key."""
    dimension = pairwise_dimension(study)
    cases = list(
        study.test_cases.in_sample()
        .order_by("position")
        .values_list("pk", "case_id", "prompt", "context")
    )
    pairs = _prompt_pairs(study)
    verdicts = _judge_verdicts(judge, cases)
    report = _judge_diagnostics(cases, pairs, verdicts)
    report["allow_tie"] = judge.allow_tie
    report["dimension"] = dimension.name if dimension is not None else None
    report["unblinded"] = study.is_unblinded
    report["humans"] = (
        _human_comparison(study, dimension, cases, pairs, verdicts, n_resamples)
        if report["unblinded"]
        else None
    )
    return report


def _judge_diagnostics(cases: list[tuple], pairs: dict[int, _Pair], verdicts: _Verdicts) -> dict:
    """What the judge did, read from its outputs and the texts only (no rater, no key)."""
    consistency, n_both = judges.position_consistency(verdicts.by_order)
    first_rate, n_decisive = judges.first_position_rate(verdicts.shown)
    ties, n_shown = judges.tie_rate(verdicts.shown)
    longer, decisive = judges.longer_preferred_rate(verdicts.case, _lengths(cases, pairs))
    return {
        "n_cases": len(cases),
        "n_pairs": sum(pk in pairs for pk, *_ in cases),
        "n_outputs": len(verdicts.shown) + len(verdicts.unparseable),
        "n_judged": int((~np.isnan(verdicts.case)).sum()),
        "position_consistency": _number(consistency),
        "n_both_orders": n_both,
        "first_position_rate": _number(first_rate),
        "n_verdicts": n_shown,
        "n_decisive": n_decisive,
        "tie_rate": _number(ties),
        "n_ties": sum(v == judges.TIE for v in verdicts.shown),
        "n_case_ties": int((verdicts.case == 0).sum()),
        "judge_longer": _number(longer),
        "judge_longer_n": decisive,
        "unparseable": verdicts.unparseable,
    }


def _human_preferences(study: Study, dimension) -> tuple[list[str], np.ndarray | None]:
    """The raters and their pairwise answers (raters x sample cases, key order, signs)."""
    if dimension is None:
        return [], None
    data = study_ratings(study=study, pilot=study.current_phase == "pilot")
    found = next((d for d in data.dimensions if d.key == dimension.key), None)
    if found is None or not len(data.raters):
        return [], None
    return data.raters, np.sign(found.key_matrix)


def _human_comparison(study, dimension, cases, pairs, verdicts, n_resamples) -> dict:
    """The judge against the raters, in key order (the raters' answers are): kappa with the
    majority and each rater, the humans' length preference, win rates, disagreements."""
    raters, human = _human_preferences(study, dimension)
    if human is None:
        human = np.full((0, len(cases)), np.nan)
    # The raters' majority by the report's rule: the judge is calibrated against the labels
    # the comparison of systems uses.
    majority = preference_majority(human) if len(raters) else np.full(len(cases), np.nan)
    key_a_first = _first_is_key_a(study, pairs)
    # Prompt terms to key terms: a case whose prompts show key label B first flips sign.
    sign = np.array([1.0 if key_a_first.get(pk, True) else -1.0 for pk, *_ in cases])
    judge_key = sign * verdicts.case
    with_majority = judges.kappa_with_interval(
        judge_key, majority, n_resamples=n_resamples, seed=study.blinding_seed
    )
    per_rater = [
        {"rater": name, **_kappa(judges.kappa_with_interval(judge_key, human[i], n_resamples=0))}
        for i, name in enumerate(raters)
    ]
    # The raters' majority in prompt terms, beside the texts in the prompts' order.
    majority_shown = sign * majority
    longer, decisive = judges.longer_preferred_rate(majority_shown, _lengths(cases, pairs))
    differs = ~np.isnan(judge_key) & ~np.isnan(majority) & (judge_key != majority)
    return {
        "n_raters": len(raters),
        "majority": _kappa(with_majority),
        "per_rater": per_rater,
        "longer": _number(longer),
        "longer_n": decisive,
        "win_rates": _win_rates(cases, pairs, verdicts.case, majority_shown),
        "disagreements": [
            _disagreement(
                cases[i],
                pairs,
                verdicts.raw,
                votes=sign[i] * human[:, i],
                humans=majority_shown[i],
                judge=verdicts.case[i],
            )
            for i in np.flatnonzero(differs)[:MAX_DISAGREEMENTS_SHOWN]
        ],
        "n_disagreements": int(differs.sum()),
    }


def _disagreement(case: tuple, pairs, raw: dict, *, votes, humans: float, judge: float) -> dict:
    """One case where the judge and the raters' majority differ, in the prompts' order."""
    pk, case_id, prompt, context = case
    pair = pairs.get(pk) or _Pair("", "", "", "")
    return {
        "case_id": case_id,
        "prompt": prompt,
        "steps": judges.numbered_steps(context).splitlines(),
        "text_first": pair.first,
        "text_second": pair.second,
        "system_first": pair.first_system,
        "system_second": pair.second_system,
        "humans": _preference_label(humans),
        "votes": {
            "first": int((votes < 0).sum()),
            "tie": int((votes == 0).sum()),
            "second": int((votes > 0).sum()),
        },
        "judge": _preference_label(judge),
        "outputs": [
            {"order": order, **raw[pk][order]} for order in judges.ORDERS if order in raw[pk]
        ],
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


def _win_rates(cases, pairs, judge_prefs, majority) -> list[dict]:
    """Per system, the share of its cases it won (a tie half) by the judge and by the
    humans' majority (both in prompt terms); only after unblinding, as it names systems."""
    systems = sorted(
        {s for pair in pairs.values() for s in (pair.first_system, pair.second_system)}
    )
    if len(systems) < 2:
        return []
    number = {name: i for i, name in enumerate(systems)}
    rows = []
    for prefs in (judge_prefs, majority):
        first, second, outcome = [], [], []
        for (pk, *_), pref in zip(cases, prefs, strict=True):
            if pk not in pairs or np.isnan(pref):
                continue
            first.append(number[pairs[pk].first_system])
            second.append(number[pairs[pk].second_system])
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
