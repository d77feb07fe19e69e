"""The scores compared: per system means, paired differences overall and per stratum (one
set of bootstrap draws for every column), the cases' differences and the values given
(no Django)."""

from dataclasses import dataclass

import numpy as np

from agreement.analysis.comparison_data import MAX_PLOT_POINTS, ComparisonData, _plain
from agreement.analysis.roles import TOTAL_MEASURE, dimension_measure, has_score
from agreement.stats.estimates import bootstrap_means, paired_differences, percentile_intervals


def _case_weights(strata: list[str], shares: dict[str, float], cases: np.ndarray) -> np.ndarray:
    """Per case: its stratum's share over the stratum's number of cases (in ``cases``)."""
    labels = np.asarray(strata)[cases]
    weights = np.zeros(labels.size)
    for stratum in set(labels):
        mask = labels == stratum
        weights[mask] = shares.get(stratum, 0.0) / mask.sum()
    return weights


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
