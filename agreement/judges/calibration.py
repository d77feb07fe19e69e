"""A judge's calibration report: the judge on its own and, once the study is unblinded,
against the human raters. The prompts, the templates and the outputs: ``prompts``.

The human side is the study's pairwise preference as the agreement statistics read it
(``selectors.ratings.study_ratings``: sample cases, the current phase, excluded raters left
out, each screen's side undone). Judges are never raters: nothing here feeds the agreement
statistics. Before unblinding, nothing here reads the key or sets the judge beside the
raters (see ``judge_calibration``); system names appear only once the study is unblinded.
"""

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from agreement.analysis.aggregation import preference_majority
from agreement.models import Judge, JudgeOutput
from agreement.selectors.ratings import study_ratings
from agreement.stats.ranking import win_matrix
from studies.models import Study
from studies.rendering import reasoning_steps

from . import measures
from . import verdicts as judges
from .prompts import _first_is_key_a, _Pair, _prompt_pairs, pairwise_dimension

MAX_DISAGREEMENTS_SHOWN = 200


def _number(value: float) -> float | None:
    return None if value is None or np.isnan(value) else float(value)


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
    return _Verdicts(by_order, measures.judge_case_preferences(by_order), shown, raw, unparseable)


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
    consistency, n_both = measures.position_consistency(verdicts.by_order)
    first_rate, n_decisive = measures.first_position_rate(verdicts.shown)
    ties, n_shown = measures.tie_rate(verdicts.shown)
    longer, decisive = measures.longer_preferred_rate(verdicts.case, _lengths(cases, pairs))
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
    with_majority = measures.kappa_with_interval(
        judge_key, majority, n_resamples=n_resamples, seed=study.blinding_seed
    )
    per_rater = [
        {"rater": name, **_kappa(measures.kappa_with_interval(judge_key, human[i], n_resamples=0))}
        for i, name in enumerate(raters)
    ]
    # The raters' majority in prompt terms, beside the texts in the prompts' order.
    majority_shown = sign * majority
    longer, decisive = measures.longer_preferred_rate(majority_shown, _lengths(cases, pairs))
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
        "steps": judges.numbered_steps(reasoning_steps(context)).splitlines(),
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


def _kappa(result: measures.KappaInterval) -> dict:
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
