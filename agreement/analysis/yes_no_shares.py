"""The yes/no outcomes and the values analysed apart compared: each system's share with
its exact interval, and McNemar's exact test for every pair (no Django)."""

import numpy as np

from agreement.analysis.aggregation import aggregate
from agreement.analysis.comparison_data import _by_system, _plain
from agreement.analysis.item_labels import _Labels
from agreement.analysis.roles import MAJORITY, DimensionRole
from agreement.stats.estimates import exact_share, mcnemar_exact


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
    # A case under the minimum is left out of the question whole: a tie in one of its
    # responses counts for nothing (its other response may be the one short of ratings).
    if how.excluded_cases.size:
        ties &= ~how.excluded_cases.reshape(n_cases, -1)
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
