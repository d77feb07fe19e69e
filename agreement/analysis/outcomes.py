"""How the systems compare: the estimates a study reports after unblinding (no Django).

The unit of analysis is the test case: each case's label for a system is its raters'
ratings aggregated by the analysis plan's rule for that question (``aggregation``): by
default a score is the mean over its raters, and a preference verdict or a yes/no outcome
the majority of its raters (a tie stated as a tie). A case with fewer valid ratings than
the plan's minimum is excluded from every estimate of that question, and counted.
Intervals are percentile bootstraps over cases (seeded), exact (Clopper-Pearson) for
shares. Before unblinding only ``label_free_summary`` may be shown: it pools every
response and never reads a system.
Each estimate is computed in its own module: the data and shared helpers
(``comparison_data``), the labels by rule (``item_labels``), scores (``score_differences``),
preferences (``preference_rates``), yes/no shares (``yes_no_shares``), length
(``length_bias``) and confidence (``confidence``); this module puts the report together.
Formulas and references: docs/statistics.md.
"""

import itertools

import numpy as np

from agreement.analysis.agreement import DimensionData
from agreement.analysis.comparison_data import ComparisonData, _by_system, _plain
from agreement.analysis.confidence import CONFIDENCE_NAMES, _confidence
from agreement.analysis.item_labels import _aggregation_summary, _labelled, _outcome_labels, rule_of
from agreement.analysis.length_bias import _length
from agreement.analysis.preference_rates import _preference, primary_win_losses
from agreement.analysis.roles import TOTAL_MEASURE, dimension_measure
from agreement.analysis.score_differences import (
    _case_weights,
    _cases_plot,
    _distributions,
    _Draws,
    _group_differences,
    _measures,
    _paired,
    _per_system,
    _strata,
)
from agreement.analysis.yes_no_shares import _apart, _mcnemar
from agreement.stats.estimates import bootstrap_means, holm

# The comparison's public names, wherever they are defined (callers import them from here).
__all__ = [
    "TOTAL_MEASURE",
    "ComparisonData",
    "compare_systems",
    "dimension_measure",
    "label_free_summary",
    "primary_win_losses",
    "rule_of",
]


def label_free_summary(*, dimensions: list[DimensionData], confidence: np.ndarray) -> dict:
    """What may be shown while the study is blinded: counts and pooled distributions.

    Every response of every system is pooled and no per-label figure is given, so nothing
    here tells the systems (or the key's labels) apart.
    """
    rows = []
    for data in dimensions:
        values = np.asarray(data.matrix, dtype=float)
        values = values[~np.isnan(values)]
        rows.append(
            {
                "key": data.key,
                "name": data.name,
                "n_judgments": int(values.size),
                # A preference's sign depends on the key's orientation: only ties are shown.
                "mean": _plain(values.mean()) if values.size and not _signed(data) else None,
                "tie_share": _plain(np.mean(values == 0))
                if values.size and _signed(data)
                else None,
            }
        )
    levels = np.asarray(confidence, dtype=float)
    return {
        "dimensions": rows,
        "confidence": {
            name: int(np.count_nonzero(levels == level)) for level, name in CONFIDENCE_NAMES.items()
        },
    }


def _signed(data: DimensionData) -> bool:
    return bool(data.categories) and min(data.categories) < 0 < max(data.categories)


def compare_systems(data: ComparisonData, *, n_resamples: int = 10_000, seed: int = 0) -> dict:
    """Every estimate of the report: per system, paired, preferences, McNemar with exact
    shares, the values analysed apart, questions with Holm's correction, length and
    confidence, and how each question's items were labelled. JSON-ready."""
    n_cases, n_labels = data.case_systems.shape
    pairs = list(itertools.combinations(range(len(data.systems)), 2))
    shares = {k: v for k, v in (data.stratum_shares or {}).items() if v > 0}
    strata = sorted(set(data.strata)) if len(set(data.strata)) > 1 else []
    labelled = _labelled(data)
    measures = _measures(data, labelled)
    scores = [
        _by_system(per_label, data.case_systems, len(data.systems)) for *_, per_label in measures
    ]
    means = (
        bootstrap_means(np.hstack(scores), n_resamples=n_resamples, seed=seed)
        if n_cases and scores
        else None
    )
    boot = _Draws(n_resamples=n_resamples, seed=seed, means=means)
    groups = [("overall", np.arange(n_cases))] + [
        (stratum, np.flatnonzero(np.asarray(data.strata) == stratum)) for stratum in strata
    ]
    weighted = bool(shares and strata)
    # Only the overall estimate is weighted by the strata's real shares.
    overall_weights = _case_weights(data.strata, shares, groups[0][1]) if weighted else None
    differences = {
        group: _group_differences(
            scores, pairs, cases, boot, weights=overall_weights if group == "overall" else None
        )
        for group, cases in groups
    }
    per_system, paired, cases_plot = [], [], []
    for m, (key, name, _) in enumerate(measures):
        per_system.append({"key": key, "name": name, "systems": _per_system(data, scores, m, boot)})
        paired += _paired(data, (m, key, name), scores, pairs, differences, boot)
        if key == "total":
            cases_plot += _cases_plot(data, scores[m], pairs)
    verdicts = {
        role.key: labelled[dimension_measure(role.key)][0] for role in data.roles if role.preference
    }
    preferences = [
        _preference(data, dim, role, pairs, verdicts[role.key], n_resamples=n_resamples, seed=seed)
        for role, dim in zip(data.roles, data.dimensions, strict=True)
        if role.preference
    ]
    outcomes = {
        role.key: _outcome_labels(data, dim, role)
        for role, dim in zip(data.roles, data.dimensions, strict=True)
        if role.binary or role.apart
    }
    mcnemar = [
        _mcnemar(data, dim, role, pairs, outcomes[role.key])
        for role, dim in zip(data.roles, data.dimensions, strict=True)
        if role.binary
    ]
    return {
        "systems": data.systems,
        "n_cases": int(n_cases),
        "strata": _strata(data, strata, shares),
        "weighted_by_shares": weighted,
        "aggregation": _aggregation_summary(data, labelled, outcomes),
        "per_system": per_system,
        "paired": paired,
        "cases_plot": cases_plot,
        "preferences": preferences,
        "mcnemar": mcnemar,
        "apart": [_apart(data, role, outcomes[role.key]) for role in data.roles if role.apart],
        "questions": _questions(preferences, paired, mcnemar, primary=data.primary_measure),
        "length": _length(data, measures[0][2] if measures else None, verdicts, n_cases),
        "confidence": _confidence(data),
        "distributions": _distributions(data, n_cases, n_labels),
        "bootstrap": {"n_resamples": n_resamples, "seed": seed, "method": "percentile"},
    }


def _questions(preferences, paired, mcnemar, *, primary: str = "") -> list[dict]:
    """The study's questions: the primary one uncorrected, every other one corrected with
    Holm's method. The primary question is the first pair's question on the measure the
    analysis plan names (``primary``). With none named (or one no longer asked) there is
    no primary question: every question is corrected, none is reported uncorrected (a
    default chosen by the software would be a primary question nobody planned). Each
    question names its ``measure``."""
    questions = []
    for preference in preferences:
        for pair in preference["pairs"]:
            questions.append(
                {
                    "question": f"{preference['name']}: win rate of {pair['second']} over "
                    f"{pair['first']} (exact binomial test)",
                    "measure": dimension_measure(preference["key"]),
                    "p": pair["items"]["p_value"],
                }
            )
    for row in paired:
        if row["stratum"] == "overall":
            questions.append(
                {
                    "question": f"{row['name']}: {row['second']} minus {row['first']} "
                    "(Wilcoxon signed-rank test)",
                    "measure": row["measure"],
                    "p": row["wilcoxon_p"],
                }
            )
    for outcome in mcnemar:
        for pair in outcome["pairs"]:
            questions.append(
                {
                    "question": f"{outcome['name']}: {pair['second']} against {pair['first']} "
                    "(McNemar's exact test)",
                    "measure": dimension_measure(outcome["key"]),
                    "p": pair["p"],
                }
            )
    if not questions:
        return []
    chosen = [
        i for i, question in enumerate(questions) if primary and question["measure"] == primary
    ]
    if chosen:
        questions.insert(0, questions.pop(chosen[0]))
        questions[0].update(primary=True, p_holm=questions[0]["p"])
    corrected = questions[1:] if chosen else questions
    adjusted = holm([np.nan if q["p"] is None else q["p"] for q in corrected])
    for question, p_holm in zip(corrected, adjusted, strict=True):
        question.update(primary=False, p_holm=_plain(p_holm))
    return questions
