"""How the systems compare: the estimates a study reports after unblinding (no Django).

The unit of analysis is the test case: each case's label for a system is its raters'
ratings aggregated by the analysis plan's rule for that question (``aggregation``): by
default a score is the mean over its raters, and a preference verdict or a yes/no outcome
the majority of its raters (a tie stated as a tie). A case with fewer valid ratings than
the plan's minimum is excluded from every estimate of that question, and counted.
Intervals are percentile bootstraps over cases (seeded), exact (Clopper-Pearson) for
shares. Before unblinding only ``label_free_summary`` may be shown: it pools every
response and never reads a system.
Formulas and references: docs/statistics.md.
"""

import itertools
import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from agreement.analysis.aggregation import Aggregate, aggregate, preference_majority
from agreement.analysis.agreement import DimensionData
from agreement.analysis.roles import (
    MAJORITY,
    MEAN,
    RULES,
    TOTAL_MEASURE,
    DimensionRole,
    dimension_measure,
    has_score,
    rule_for,
)
from agreement.stats.estimates import (
    binomial_win_rate,
    bootstrap_means,
    exact_share,
    holm,
    linear_fit,
    logistic_fit,
    mcnemar_exact,
    paired_differences,
    percentile_interval,
    percentile_intervals,
)
from agreement.stats.ranking import RANKING_RESAMPLES, bradley_terry, win_matrix

CONFIDENCE_NAMES = {1: "low", 2: "medium", 3: "high"}
MAX_PLOT_POINTS = 2_000


@dataclass(frozen=True)
class ComparisonData:
    """One study's ratings laid out for comparing systems.

    ``case_systems`` (cases x key labels) is the system index of each response, -1 where
    a case has no response under that label; ``totals`` is raters x cases x labels;
    ``dimensions`` are the agreement matrices (preferences already in system order: a
    negative value prefers the pair's system that comes first in ``systems``);
    ``lengths`` is cases x labels (characters), ``confidence`` raters x cases (1-3).
    """

    systems: list[str]
    labels: list[str]
    strata: list[str]
    case_systems: np.ndarray
    totals: np.ndarray
    dimensions: list[DimensionData]
    roles: list[DimensionRole]
    lengths: np.ndarray
    confidence: np.ndarray
    stratum_shares: dict[str, float] = field(default_factory=dict)
    # The measure of the primary question (``TOTAL_MEASURE`` or ``dimension_measure``);
    # "" = the default rule.
    primary_measure: str = ""
    # The analysis plan's aggregation rule per dimension key (missing: the role's default),
    # and the minimum of valid ratings per item (1: every rated item counts).
    rules: dict[str, str] = field(default_factory=dict)
    min_ratings: int = 1
    # Per dimension key, the adjudicated answer of each unit (NaN where none), laid out as
    # the dimension's matrix's columns and in its orientation.
    adjudicated: dict[str, np.ndarray] = field(default_factory=dict)


def _plain(value):
    if value is None or isinstance(value, bool | int | str):
        return value
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else value


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


def _quiet():
    """Silence numpy's "mean of empty slice": an unrated case is NaN on purpose."""
    return warnings.catch_warnings(action="ignore", category=RuntimeWarning)


def _by_system(per_label: np.ndarray, case_systems: np.ndarray, n_systems: int) -> np.ndarray:
    """cases x labels -> cases x systems (NaN where a case has no response of a system)."""
    result = np.full((per_label.shape[0], n_systems), np.nan)
    rows, columns = np.nonzero(case_systems >= 0)
    result[rows, case_systems[rows, columns]] = per_label[rows, columns]
    return result


def _case_weights(strata: list[str], shares: dict[str, float], cases: np.ndarray) -> np.ndarray:
    """Per case: its stratum's share over the stratum's number of cases (in ``cases``)."""
    labels = np.asarray(strata)[cases]
    weights = np.zeros(labels.size)
    for stratum in set(labels):
        mask = labels == stratum
        weights[mask] = shares.get(stratum, 0.0) / mask.sum()
    return weights


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


def rule_of(data: ComparisonData, role: DimensionRole) -> str:
    """The analysis plan's rule for a dimension, or its default when none fits."""
    return rule_for(data.rules, role)


@dataclass(frozen=True)
class _Labels:
    """A question's items labelled by its rule: ``labels`` is cases x labels (a response's
    dimension, the total) or cases (a preference), NaN where an item has no label; a case
    with a response under the minimum of valid ratings has none on any of its responses."""

    labels: np.ndarray
    rule: str
    excluded: int  # cases under the minimum of valid ratings
    ties: int  # cases with a tie (no single majority; a preference's balanced verdict)
    adjudicated: int  # cases labelled by an adjudicated answer
    changed: int  # cases whose adjudicated answer differs from the majority label


def _label(data: ComparisonData, key: str, matrix, *, rule: str, sides: bool = False) -> _Labels:
    n_cases, n_labels = data.case_systems.shape
    result: Aggregate = aggregate(
        matrix, rule=rule, min_ratings=data.min_ratings,
        adjudicated=data.adjudicated.get(key) if key else None, sides=sides,
    )  # fmt: skip
    labels = result.labels.copy()
    if sides:  # one unit per case

        def per_case(flags):
            return flags

    else:
        labels = labels.reshape(n_cases, n_labels)
        present = data.case_systems >= 0

        def per_case(flags):
            return (flags.reshape(n_cases, n_labels) & present).any(axis=1)

    excluded = per_case(result.excluded)
    labels[excluded] = np.nan
    return _Labels(
        labels=labels,
        rule=rule,
        excluded=int(excluded.sum()),
        # A preference's tie is its balanced verdict (0), which the win rates count.
        ties=int((per_case(result.labels == 0 if sides else result.ties) & ~excluded).sum()),
        adjudicated=int((per_case(result.adjudicated) & ~excluded).sum()),
        changed=int((per_case(result.changed) & ~excluded).sum()),
    )


def _labelled(data: ComparisonData) -> dict[str, tuple[np.ndarray, _Labels]]:
    """Measure -> (labels, how) for the total (the mean of the raters' totals) and each
    scored dimension and preference, by its rule."""
    total = _label(data, "", data.totals, rule=MEAN)
    labelled = {TOTAL_MEASURE: (total.labels, total)}
    for role, dim in zip(data.roles, data.dimensions, strict=True):
        if role.scored or role.preference:
            rule = rule_of(data, role)
            how = _label(data, role.key, dim.matrix, rule=rule, sides=role.preference)
            labelled[dimension_measure(role.key)] = (how.labels, how)
    return labelled


def _outcome_labels(data: ComparisonData, dim, role: DimensionRole) -> _Labels:
    """A yes/no outcome's or a category's label per response: the majority (a mean's rule
    reads as the majority: a category has no mean), or the adjudicated answer."""
    rule = rule_of(data, role)
    return _label(data, role.key, dim.matrix, rule=MAJORITY if rule == MEAN else rule)


def _aggregation_summary(data: ComparisonData, labelled: dict, outcomes: dict) -> dict:
    """How each question's items were labelled: its rule, and the cases excluded (under the
    minimum of valid ratings), tied, adjudicated, and changed by adjudication."""
    rows = []
    total = labelled[TOTAL_MEASURE][1]
    entries = [(TOTAL_MEASURE, "Total score", total)] if has_score(data.roles) else []
    for role in data.roles:
        how = labelled.get(dimension_measure(role.key), (None, None))[1]
        if how is None and role.key in outcomes:
            how = outcomes[role.key]
        if how is not None:
            entries.append((dimension_measure(role.key), role.name, how))
    for measure, name, how in entries:
        rows.append(
            {
                "measure": measure,
                "name": name,
                "rule": how.rule,
                "rule_name": RULES[how.rule],
                "excluded_items": how.excluded,
                "tied_items": how.ties,
                "adjudicated_items": how.adjudicated,
                "changed_items": how.changed,
            }
        )
    return {"min_ratings": data.min_ratings, "questions": rows}


@dataclass
class _Draws:
    """The bootstrap's settings, and its draws of the per-system means (one set of draws per
    group of cases serves every column, measures and pairs alike: the same resampled cases
    for each, and a fraction of the cost)."""

    n_resamples: int
    seed: int
    means: np.ndarray | None = None


def _measures(data: ComparisonData, labelled: dict) -> list[tuple]:
    """(key, name, label per case and key label) of the total and of each scored dimension;
    none for a rubric without points."""
    if not has_score(data.roles):
        return []
    measures = [("total", "Total score", labelled[TOTAL_MEASURE][0])]
    for role in data.roles:
        if role.scored:
            measures.append((role.key, role.name, labelled[dimension_measure(role.key)][0]))
    return measures


def _group_differences(scores, pairs, cases, boot: _Draws, *, weights):
    """A group's cases, its weights (the strata's real shares, overall only) and the draws
    of every pair's mean difference on every measure."""
    columns = np.column_stack(
        [m[cases, b] - m[cases, a] for m in scores for a, b in pairs]
    ) if scores and pairs and cases.size else np.empty((cases.size, 0))  # fmt: skip
    draws = (
        bootstrap_means(columns, n_resamples=boot.n_resamples, seed=boot.seed, weights=weights)
        if columns.size
        else None
    )
    return cases, weights, draws


def _per_system(data: ComparisonData, scores, m: int, boot: _Draws) -> list[dict]:
    n_systems = len(data.systems)
    intervals = (
        percentile_intervals(boot.means[:, m * n_systems : (m + 1) * n_systems])
        if boot.means is not None
        else [(None, None)] * n_systems
    )
    rows = []
    for s, system in enumerate(data.systems):
        column = scores[m][:, s]
        low, high = intervals[s]
        rows.append(
            {
                "system": system,
                "n": int(np.count_nonzero(~np.isnan(column))),
                "mean": _plain(np.nanmean(column)) if (~np.isnan(column)).any() else None,
                "low": _plain(low),
                "high": _plain(high),
            }
        )
    return rows


def _paired(data, measure: tuple, scores, pairs, differences, boot: _Draws) -> list[dict]:
    """Each pair's paired difference on one measure, overall and per stratum (every pair
    of a group at once: ``paired_differences``)."""
    m, key, name = measure
    per_group = {}
    for group, (cases, weights, draws) in differences.items():
        columns = (
            draws[:, m * len(pairs) : (m + 1) * len(pairs)]
            if draws is not None
            else np.full((boot.n_resamples, len(pairs)), np.nan)
        )
        per_group[group] = paired_differences(
            [(scores[m][cases, first], scores[m][cases, second]) for first, second in pairs],
            n_resamples=boot.n_resamples, seed=boot.seed, weights=weights, boots=columns,
        )  # fmt: skip
    rows = []
    for p, (first, second) in enumerate(pairs):
        for group, (_, weights, _) in differences.items():
            rows.append(
                {
                    "key": key,
                    "measure": TOTAL_MEASURE if m == 0 else dimension_measure(key),
                    "name": name,
                    "first": data.systems[first],
                    "second": data.systems[second],
                    "stratum": group,
                    "weighted": weights is not None,
                    **per_group[group][p],
                }
            )
    return rows


def _cases_plot(data: ComparisonData, totals, pairs) -> list[dict]:
    """Each pair's per-case differences of the total (a sample of them, for the histogram)."""
    plots = []
    for first, second in pairs:
        a, b = totals[:, first], totals[:, second]
        both = ~np.isnan(a) & ~np.isnan(b)
        plots.append(
            {
                "first": data.systems[first],
                "second": data.systems[second],
                "differences": [_plain(v) for v in (b - a)[both][:MAX_PLOT_POINTS]],
            }
        )
    return plots


def _strata(data: ComparisonData, strata: list[str], shares: dict) -> list[dict]:
    return [
        {
            "stratum": stratum,
            "n_cases": int(np.count_nonzero(np.asarray(data.strata) == stratum)),
            "share": shares.get(stratum),
        }
        for stratum in (strata or [""])
    ]


def _case_pairs(data: ComparisonData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per case: the pair's first and second system (in system order), and whether the
    key's label A holds the first (the first two labels of the case)."""
    first = np.min(np.where(data.case_systems[:, :2] >= 0, data.case_systems[:, :2], 10**9), 1)
    second = np.max(data.case_systems[:, :2], axis=1)
    valid = (data.case_systems[:, :2] >= 0).all(axis=1) & (first != second)
    return first, second, valid


def _pair_verdicts(data, verdicts, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """The cases of the pair (a, b) that have a verdict, and those verdicts' signs (the
    side of the second system b: > 0 a win, < 0 a loss, 0 a tie)."""
    first, second, valid = _case_pairs(data)
    cases = ~np.isnan(verdicts) & valid & (first == a) & (second == b)
    return cases, np.nan_to_num(verdicts)[cases]


def _wins_losses_ties(verdict: np.ndarray) -> tuple[int, int, int]:
    return int(np.sum(verdict > 0)), int(np.sum(verdict < 0)), int(np.sum(verdict == 0))


def primary_win_losses(data: ComparisonData) -> tuple[int, int] | None:
    """The primary question's wins and losses (its non-tied comparisons) when it is a win
    rate: the second system's over the first of the first pair, per item, by the plan's
    rule, exactly as the report's win rate counts them. None when the plan names no
    preference as the primary question (or the study has no pair)."""
    for role, dim in zip(data.roles, data.dimensions, strict=True):
        if role.preference and dimension_measure(role.key) == data.primary_measure:
            if len(data.systems) < 2:
                return None
            how = _label(data, role.key, dim.matrix, rule=rule_of(data, role), sides=True)
            wins, losses, _ = _wins_losses_ties(_pair_verdicts(data, how.labels, 0, 1)[1])
            return wins, losses
    return None


def _preference(data, dim, role, pairs, verdicts, *, n_resamples, seed) -> dict:
    """Each pair's win rate over cases, from each case's verdict (``verdicts``: the side its
    label takes, 0 a tie, NaN without one), and over every judgment of those cases."""
    matrix = np.asarray(dim.matrix, dtype=float)  # raters x cases, in system order
    first, second, valid = _case_pairs(data)
    signs = np.sign(matrix)
    result = {"key": role.key, "name": role.name, "pairs": []}
    for a, b in pairs:
        cases, verdict = _pair_verdicts(data, verdicts, a, b)
        wins, losses, ties = _wins_losses_ties(verdict)
        items = binomial_win_rate(wins, losses, ties).as_dict()
        # Win rate of the second system over items, ties left out, resampling items.
        outcomes = np.where(verdict == 0, np.nan, (verdict > 0).astype(float))
        boot = (
            bootstrap_means(outcomes, n_resamples=n_resamples, seed=seed) if outcomes.size else []
        )
        low, high = percentile_interval(boot)
        every = signs[:, cases]
        judgments = binomial_win_rate(
            int(np.sum(every > 0)), int(np.sum(every < 0)), int(np.sum(every == 0))
        ).as_dict()
        result["pairs"].append(
            {
                "first": data.systems[a],
                "second": data.systems[b],
                "items": {**items, "boot_low": _plain(low), "boot_high": _plain(high)},
                "judgments": judgments,
            }
        )
    result["ranking"] = _ranking(data, matrix, first, second, valid, seed)
    return result


def _ranking(data, matrix, first, second, valid, seed) -> dict | None:
    """Win matrix and Bradley-Terry ranking, for more than two systems: each case one item,
    ``RANKING_RESAMPLES`` resamples, as the ranking page computes it."""
    if len(data.systems) <= 2:
        return None
    raters, cases = np.nonzero(~np.isnan(matrix) & valid[None, :])
    values = matrix[raters, cases]
    outcome = np.where(values < 0, 1.0, np.where(values > 0, 0.0, 0.5))  # 1 = first won
    n = len(data.systems)
    wins = win_matrix(first[cases], second[cases], outcome, n)
    result = {
        "wins": wins.wins.astype(int).tolist(),
        "ties": wins.ties.astype(int).tolist(),
        "win_rates": [[_plain(v) for v in row] for row in wins.win_rates],
    }
    try:
        ranking = bradley_terry(
            first[cases], second[cases], outcome, n, items=cases,
            n_resamples=RANKING_RESAMPLES, seed=seed,
        )  # fmt: skip
    except ValueError as error:
        return {**result, "note": str(error), "order": []}
    return {
        **result,
        "n_resamples": RANKING_RESAMPLES,
        "order": [
            {
                "system": data.systems[s],
                "score": _plain(ranking.scores[s]),
                "low": _plain(ranking.low[s]),
                "high": _plain(ranking.high[s]),
                "rank_low": _plain(ranking.rank_low[s]),
                "rank_high": _plain(ranking.rank_high[s]),
            }
            for s in ranking.order
        ],
        "note": "",
    }


def _mcnemar(data, dim, role, pairs, how: _Labels) -> dict:
    """Each case's outcome per system by its rule (the dimension's higher value is
    "positive"; a tie has no outcome and is counted), each system's share of positive
    cases with its exact interval (RQ-003), then McNemar's exact test for every pair."""
    top = max(dim.categories)
    labels = _by_system(how.labels, data.case_systems, len(data.systems))
    outcome = np.where(np.isnan(labels), np.nan, (labels == top) * 1.0)
    tied = _by_system(
        _ties_per_response(data, dim, how), data.case_systems, len(data.systems)
    )  # fmt: skip
    systems = [
        {
            "system": system,
            **exact_share(
                int(np.sum(outcome[:, s] == 1)), int(np.count_nonzero(~np.isnan(outcome[:, s])))
            ),
            "ties": int(np.nansum(tied[:, s])),
        }
        for s, system in enumerate(data.systems)
    ]
    rows = []
    for a, b in pairs:
        both = ~np.isnan(outcome[:, a]) & ~np.isnan(outcome[:, b])
        x, y = outcome[both, a], outcome[both, b]
        first_only, second_only = int(np.sum((x == 1) & (y == 0))), int(np.sum((x == 0) & (y == 1)))
        rows.append(
            {
                "first": data.systems[a],
                "second": data.systems[b],
                "n": int(both.sum()),
                "first_rate": _plain(x.mean()) if x.size else None,
                "second_rate": _plain(y.mean()) if y.size else None,
                "first_only": first_only,
                "second_only": second_only,
                "p": mcnemar_exact(first_only, second_only),
            }
        )
    return {
        "key": role.key,
        "name": role.name,
        "positive": top,
        "rule": how.rule,
        "systems": systems,
        "pairs": rows,
    }


def _ties_per_response(data, dim, how: _Labels) -> np.ndarray:
    """Cases x labels: 1 where a response's majority is a tie (and it is not excluded)."""
    n_cases, n_labels = data.case_systems.shape
    result = aggregate(dim.matrix, rule=MAJORITY, min_ratings=data.min_ratings)
    ties = result.ties.reshape(n_cases, n_labels) & np.isnan(how.labels)
    return ties * 1.0


def _apart(data, role: DimensionRole, how: _Labels) -> dict:
    """The values analysed apart ("partly correct"): per system the share of its labelled
    cases whose label is one of them, with its exact interval."""
    values = [value for value, _ in role.apart]
    labels = _by_system(how.labels, data.case_systems, len(data.systems))
    systems = []
    for s, system in enumerate(data.systems):
        column = labels[:, s]
        labelled = column[~np.isnan(column)]
        systems.append(
            {"system": system, **exact_share(int(np.isin(labelled, values).sum()), labelled.size)}
        )
    return {
        "key": role.key,
        "name": role.name,
        "values": [label for _, label in role.apart],
        "rule": how.rule,
        "systems": systems,
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


def _length(data, totals_per_label, verdicts: dict, n_cases) -> dict:
    """Length difference (second minus first system of each case's pair, in characters)
    against the total score difference (None without a score) and the preference verdict."""
    first, second, valid = _case_pairs(data)
    lengths = _by_system(np.asarray(data.lengths, float), data.case_systems, len(data.systems))
    cases = np.flatnonzero(valid)
    length_gap = lengths[cases, second[cases]] - lengths[cases, first[cases]]
    scored = totals_per_label is not None
    score_gap = length_gap * np.nan
    if scored:
        totals = _by_system(totals_per_label, data.case_systems, len(data.systems))
        score_gap = totals[cases, second[cases]] - totals[cases, first[cases]]
    result = {
        "per_100_characters": True,
        "score": linear_fit(length_gap / 100.0, score_gap) if scored else None,
        "mean_length": [
            {"system": s, "mean": _plain(np.nanmean(lengths[:, i]))}
            for i, s in enumerate(data.systems)
            if (~np.isnan(lengths[:, i])).any()
        ],
        "points": [
            {"length": _plain(x), "score": _plain(y)}
            for x, y in list(zip(length_gap, score_gap, strict=True))[:MAX_PLOT_POINTS]
        ]
        if scored
        else [],
        "preference": None,
    }
    for role in data.roles:
        if role.preference:
            verdict = verdicts[role.key][cases]
            rated = ~np.isnan(verdict) & (verdict != 0)
            outcome = (verdict > 0).astype(float)
            fit = logistic_fit(length_gap[rated] / 100.0, outcome[rated])
            result["preference"] = {
                "key": role.key,
                "name": role.name,
                **fit,
                "points": [
                    {"length": _plain(x), "second_preferred": int(y)}
                    for x, y in list(zip(length_gap[rated], outcome[rated], strict=True))[
                        :MAX_PLOT_POINTS
                    ]
                ],
            }
            break
    return result


def _confidence(data: ComparisonData) -> dict:
    """Does a rater's confidence track agreement with the other raters of the case?

    With a preference: whether the rater's side matches the majority of the others.
    Otherwise: minus the mean absolute gap between the rater's totals and the others' mean.
    """
    from scipy import stats

    confidence = np.asarray(data.confidence, dtype=float)
    preference = next(
        (d for r, d in zip(data.roles, data.dimensions, strict=True) if r.preference), None
    )
    n_raters, n_cases = confidence.shape
    measure = np.full((n_raters, n_cases), np.nan)
    if preference is not None:
        signs = np.sign(np.asarray(preference.matrix, dtype=float))
        counted = (~np.isnan(signs)).sum(axis=0)
        for r in range(n_raters):
            others = preference_majority(np.delete(signs, r, axis=0))
            ok = ~np.isnan(signs[r]) & (counted >= 2)
            measure[r, ok] = (signs[r, ok] == others[ok]) * 1.0
        kind = "agrees with the majority of the other raters"
    else:
        n_labels = len(data.labels)
        cube = np.asarray(data.totals, dtype=float).reshape(n_raters, n_cases, n_labels)
        present = ~np.isnan(cube)
        sums, counts = np.nansum(cube, axis=0), present.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            others = (sums[None] - np.nan_to_num(cube)) / (counts[None] - present)
            gaps = np.abs(cube - others)
        with _quiet():
            measure = -np.nanmean(np.where(present & (counts[None] >= 2), gaps, np.nan), axis=2)
        kind = "minus the mean gap between the rater's totals and the others' mean"
    keep = ~np.isnan(confidence) & ~np.isnan(measure)
    levels = []
    for level, name in CONFIDENCE_NAMES.items():
        values = measure[keep & (confidence == level)]
        levels.append(
            {
                "level": name,
                "n": int(values.size),
                "mean": _plain(values.mean()) if values.size else None,
            }
        )
    x, y = confidence[keep], measure[keep]
    rho = p = None
    if x.size >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0:
        test = stats.spearmanr(x, y)
        rho, p = _plain(test.statistic), _plain(test.pvalue)
    return {"measure": kind, "levels": levels, "spearman": rho, "p": p, "gold": None}


def _distributions(data, n_cases, n_labels) -> list[dict]:
    """Per scored dimension and system: how often each value was given."""
    result = []
    for role, dim in zip(data.roles, data.dimensions, strict=True):
        if not role.scored:
            continue
        cube = np.asarray(dim.matrix, dtype=float).reshape(-1, n_cases, n_labels)
        values = sorted(dim.categories) if dim.categories else []
        systems = []
        for s, system in enumerate(data.systems):
            mask = data.case_systems == s
            given = cube[:, mask]
            given = given[~np.isnan(given)]
            systems.append({"system": system, "counts": [int(np.sum(given == v)) for v in values]})
        result.append({"key": role.key, "name": role.name, "values": values, "systems": systems})
    return result
