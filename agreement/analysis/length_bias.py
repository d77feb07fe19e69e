"""Does a response's length sway its rating? The length difference of each case's pair
against the score difference and the preference verdict (no Django)."""

import numpy as np

from agreement.analysis.comparison_data import MAX_PLOT_POINTS, _by_system, _case_pairs, _plain
from agreement.stats.estimates import linear_fit, logistic_fit


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
