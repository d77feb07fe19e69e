"""Agreement for a whole study, from plain rating matrices (no Django here).

For each dimension: Krippendorff's alpha with a bootstrap interval over units, the numbers
of units, raters and pairable ratings, Fleiss' kappa where every unit has the same number
of ratings, Cohen's kappa for every pair of raters, alpha per stratum, and for each rater
alpha with that rater left out and their mean agreement with the others. The result is a
JSON-ready dict: undefined numbers are None.
"""

import math
from dataclasses import dataclass, field

import numpy as np

from agreement.stats import (
    alpha_bootstrap,
    alpha_without_each_rater,
    fleiss_kappa,
    gwet_ac,
    icc,
    krippendorff_alpha,
    pairwise_cohen_kappa,
    percent_agreement,
)
from agreement.stats.krippendorff import ALPHA_THRESHOLDS


@dataclass(frozen=True)
class DimensionData:
    """One dimension's ratings: ``matrix`` is raters x units, NaN where not rated."""

    key: str
    name: str
    level: str
    matrix: np.ndarray
    unit_strata: list[str] = field(default_factory=list)
    # Every value the dimension can take, in order (weighted kappa counts unused ones too).
    categories: tuple[float, ...] = ()
    # "response" (units are cases x key labels, case-major) or "case" (units are cases).
    scope: str = "response"
    # "key" (blinded labels A/B) or "system" (a preference turned to the systems' order,
    # after unblinding); with "system", ``key_order_matrix`` holds the blinded orientation.
    orientation: str = "key"
    key_order_matrix: np.ndarray | None = None

    @property
    def key_matrix(self) -> np.ndarray:
        """The ratings in the blinded key's orientation (A and B as in each case's labels),
        whatever orientation ``matrix`` has."""
        return self.matrix if self.key_order_matrix is None else self.key_order_matrix


def _number(value) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else round(value, 6)


def _kappa_weights(level: str) -> tuple[str | None, str]:
    """Cohen's kappa weighting that matches the level of measurement (Cohen 1968):
    unweighted for categories, linear on the categories' positions for ranks, quadratic on
    the values themselves for interval and ratio scales (band points 0, 2, 4, 5 are not
    evenly spaced)."""
    if level == "nominal":
        return None, "position"
    if level == "ordinal":
        return "linear", "position"
    return "quadratic", "value"


def _fleiss(matrix: np.ndarray) -> tuple[float | None, str]:
    counts = np.count_nonzero(~np.isnan(matrix), axis=0)
    rated = counts[counts >= 2]
    if rated.size < 2:
        return None, "fewer than two units with two or more ratings"
    if np.unique(rated).size != 1:
        return None, "units have different numbers of ratings"
    columns = matrix[:, counts >= 2]
    try:
        return _number(fleiss_kappa(columns)), ""
    except ValueError as error:
        return None, str(error)


# Gwet's coefficients keep a units x categories table: past this many scale points (free
# numbers rather than a rubric's scale) they are not computed, so memory stays bounded.
GWET_MAX_CATEGORIES = 64
# Rater sets tried for the intraclass correlation's fully crossed block: the most common
# sets of raters that rated the same units.
ICC_CANDIDATE_SETS = 32


def _gwet(data: DimensionData, matrix: np.ndarray, categories: np.ndarray | None) -> dict:
    """Gwet's AC1 (nominal) or AC2, weighted as the page's Cohen's kappa: linear on the
    scale's positions for ordinal, quadratic on its values for interval and ratio."""
    weights, distance = _kappa_weights(data.level)
    present = ~np.isnan(matrix)
    scale = categories if categories is not None else np.unique(matrix[present])
    result = {
        "value": None,
        "coefficient": "AC2" if weights else "AC1",
        "weights": weights or "none",
        "distance": distance if weights else "",
        "note": "",
    }
    if scale.size > GWET_MAX_CATEGORIES:
        result["note"] = f"not computed: more than {GWET_MAX_CATEGORIES} scale points"
        return result
    if distance == "position":
        # The positions on the scale stand for the values (ordinal: ranks, not distances).
        codes = np.full(matrix.shape, np.nan)
        codes[present] = np.searchsorted(scale, matrix[present])
        matrix, scale = codes, np.arange(scale.size, dtype=float)
    result["value"] = _number(gwet_ac(matrix, weights=weights, categories=scale))  # type: ignore[arg-type]
    if result["value"] is None:
        result["note"] = "undefined: no unit with two ratings, or a single scale point"
    return result


def _icc(data: DimensionData, matrix: np.ndarray, raters: list[str]) -> dict | None:
    """ICC(2,1) and ICC(2,k) on the fully crossed block (units every one of a set of raters
    rated) holding the most ratings; None for nominal and ordinal dimensions."""
    if data.level not in ("interval", "ratio"):
        return None
    present = ~np.isnan(matrix)
    block = _crossed_block(present)
    per_unit = present.sum(axis=0)
    result = {
        "single": None,
        "average": None,
        "k": 0,
        "raters": [],
        "n_units": 0,
        "n_units_left_out": int((per_unit >= 2).sum()),
        "note": "not computed: raters did not all rate the same cases",
    }
    if block is None:
        return result
    rows, columns = block
    cells = matrix[np.ix_(rows, columns)]
    result.update(
        {
            "single": _number(icc(cells, form="2,1")),
            "average": _number(icc(cells, form="2,k")),
            "k": int(rows.size),
            "raters": [raters[i] for i in rows] if len(raters) == len(matrix) else [],
            "n_units": int(columns.size),
            "n_units_left_out": int((per_unit >= 2).sum()) - int(columns.size),
            "note": "",
        }
    )
    if result["single"] is None:
        result["note"] = "undefined: no variation in the ratings"
    return result


def _crossed_block(present: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Rows and columns of the fully crossed block with the most ratings (two raters and two
    units at least; ties: more raters), or None.

    The candidates are the most common exact sets of raters of a unit; each takes every
    unit those raters all rated (a unit rated by more raters belongs to the block too).
    """
    paired = present[:, present.sum(axis=0) >= 2]
    if paired.shape[1] < 2:
        return None
    if len(present) <= 62:
        # Each unit's set of raters as the bits of one integer: sorting integers is far
        # quicker than sorting rows.
        bits = np.left_shift(np.int64(1), np.arange(len(present), dtype=np.int64))
        codes, counts = np.unique(bits @ paired, return_counts=True)
        patterns = (codes[:, None] & bits) != 0
    else:
        patterns, counts = np.unique(paired.T, axis=0, return_counts=True)
    top = np.argsort(-counts, kind="stable")[:ICC_CANDIDATE_SETS]
    candidates = patterns[top]  # sets x raters
    sizes = candidates.sum(axis=1)
    # Units x sets: does the unit have every rater of the set?
    covered = (present.T.astype(np.int32) @ candidates.T.astype(np.int32)) == sizes
    n_units = covered.sum(axis=0)
    usable = (sizes >= 2) & (n_units >= 2)
    if not usable.any():
        return None
    score = np.where(usable, n_units * sizes, -1)
    best = max(range(sizes.size), key=lambda i: (score[i], sizes[i]))
    return np.flatnonzero(candidates[best]), np.flatnonzero(covered[:, best])


def dimension_intervals(data: DimensionData, *, n_resamples: int, seed: int) -> dict:
    """The bootstrap part of a dimension's result: the interval and P(alpha < threshold)."""
    matrix = np.asarray(data.matrix, dtype=float)
    boot = alpha_bootstrap(matrix, level=data.level, n_resamples=n_resamples, seed=seed)
    return {
        "low": _number(boot.low),
        "high": _number(boot.high),
        "below": {f"{t:g}": _number(p) for t, p in boot.below.items()},
        "n_resamples": boot.n_resamples,
        "n_degenerate": boot.n_degenerate,
    }


def dimension_point(data: DimensionData, *, raters: list[str]) -> dict:
    """Everything of a dimension's result but the bootstrap; interval fields are None."""
    return _dimension_point(data, raters=raters)[0]


def _dimension_point(data: DimensionData, *, raters: list[str]) -> tuple[dict, float]:
    """The dimension's result, and its alpha unrounded (for the success criterion)."""
    matrix = np.asarray(data.matrix, dtype=float)
    rated = ~np.isnan(matrix)
    per_unit = rated.sum(axis=0)
    pairable_units = per_unit >= 2
    # The same number as the bootstrap's estimate (both evaluate alpha's terms once).
    alpha = krippendorff_alpha(matrix, level=data.level)
    fleiss, fleiss_note = _fleiss(matrix)
    weights, distance = _kappa_weights(data.level)
    categories = _categories(data, matrix)
    gwet = _gwet(data, matrix, categories)
    intraclass = _icc(data, matrix, raters)
    cohen = (
        pairwise_cohen_kappa(matrix, weights, categories, distance=distance)
        if len(raters) >= 2
        else np.eye(1)
    )
    left_out = alpha_without_each_rater(matrix, level=data.level) if len(raters) >= 3 else []
    per_rater = []
    for index, rater in enumerate(raters):
        others = [cohen[index, j] for j in range(len(raters)) if j != index]
        others = [k for k in others if not math.isnan(k)]
        per_rater.append(
            {
                "rater": rater,
                "n_ratings": int(rated[index].sum()),
                "alpha_without": _number(left_out[index]) if len(left_out) else None,
                "mean_kappa_with_others": _number(np.mean(others)) if others else None,
            }
        )
    strata = {}
    if data.unit_strata and len(set(data.unit_strata)) > 1:
        labels = np.asarray(data.unit_strata)
        for stratum in sorted(set(data.unit_strata)):
            columns = matrix[:, labels == stratum]
            strata[stratum] = {
                "alpha": _number(krippendorff_alpha(columns, level=data.level)),
                "n_units": int((np.count_nonzero(~np.isnan(columns), axis=0) >= 2).sum()),
            }
    return {
        "key": data.key,
        "name": data.name,
        "level": data.level,
        "alpha": _number(alpha),
        "low": None,
        "high": None,
        "below": {f"{t:g}": None for t in ALPHA_THRESHOLDS},
        "n_resamples": 0,
        "n_degenerate": 0,
        "n_units": int(pairable_units.sum()),
        "n_raters": int((rated[:, pairable_units].sum(axis=1) > 0).sum()),
        "n_pairable": int(per_unit[pairable_units].sum()),
        # What was rated: one judgment per unit and rater (a case-level preference counts
        # once per case, not once per response).
        "n_judgments": int(rated.sum()),
        "percent_agreement": _number(percent_agreement(matrix)) if pairable_units.any() else None,
        "fleiss_kappa": fleiss,
        "fleiss_note": fleiss_note,
        "gwet": gwet,
        "icc": intraclass,
        "cohen_weights": weights or "none",
        "cohen_distance": distance if weights else "",
        "orientation": data.orientation,
        "key_order": _key_order(data),
        "cohen": [[_number(v) for v in row] for row in cohen] if len(raters) >= 2 else [],
        "per_rater": per_rater,
        "strata": strata,
    }, float(alpha)


def _categories(data: DimensionData, matrix: np.ndarray) -> np.ndarray | None:
    """The dimension's full scale, widened by any value outside it (a scale edited after
    rating), or None (the values that occur) when the dimension did not say."""
    if not data.categories:
        return None
    observed = matrix[~np.isnan(matrix)]
    listed = np.asarray(data.categories, dtype=float)
    extra = np.setdiff1d(observed, listed)
    return np.union1d(listed, extra) if extra.size else listed


def _key_order(data: DimensionData) -> dict | None:
    """The same dimension in blinded key order, beside the system order it is shown in."""
    if data.key_order_matrix is None:
        return None
    matrix = np.asarray(data.key_order_matrix, dtype=float)
    paired = (np.count_nonzero(~np.isnan(matrix), axis=0) >= 2).any()
    return {
        "alpha": _number(krippendorff_alpha(matrix, level=data.level)),
        "percent_agreement": _number(percent_agreement(matrix)) if paired else None,
    }


def analyse_study_point(
    *,
    dimensions: list[DimensionData],
    raters: list[str],
    success_alpha: float,
    success_min_dimensions: int,
) -> dict:
    """The study's result without the bootstrap, marked ``intervals_pending``.

    The success criterion reads point estimates only, so it is final here.
    """
    points = [_dimension_point(d, raters=raters) for d in dimensions]
    results = [result for result, _ in points]
    # The unrounded alpha decides: 0.6999996 must not pass a criterion of 0.70.
    alphas = [alpha for _, alpha in points]
    passing = [
        r["key"]
        for r, alpha in zip(results, alphas, strict=True)
        if not math.isnan(alpha) and alpha >= success_alpha
    ]
    return {
        "raters": raters,
        "dimensions": results,
        "thresholds": list(ALPHA_THRESHOLDS),
        "success": {
            "alpha": success_alpha,
            "min_dimensions": success_min_dimensions,
            "passing": passing,
            "passed": len(passing) >= success_min_dimensions,
        },
        "intervals_pending": True,
    }


def with_intervals(
    point: dict, *, dimensions: list[DimensionData], n_resamples: int, seed: int
) -> dict:
    """The full result: ``point`` (from the same ``dimensions``) with the bootstrap added."""
    result = {key: value for key, value in point.items() if key != "intervals_pending"}
    result["dimensions"] = [
        {**row, **dimension_intervals(data, n_resamples=n_resamples, seed=seed)}
        for row, data in zip(point["dimensions"], dimensions, strict=True)
    ]
    result["bootstrap"] = {"n_resamples": n_resamples, "seed": seed, "method": "percentile"}
    return result
