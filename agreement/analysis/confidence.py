"""Does a rater's confidence track agreement with the other raters of the case? (no Django;
scipy imported when it is computed)."""

import numpy as np

from agreement.analysis.aggregation import preference_majority
from agreement.analysis.comparison_data import ComparisonData, _plain, _quiet

CONFIDENCE_NAMES = {1: "low", 2: "medium", 3: "high"}


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
