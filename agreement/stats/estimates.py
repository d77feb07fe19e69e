"""Estimates and tests for comparing systems: win rates, paired differences, McNemar, Holm.

Pure numpy/scipy, no Django; formulas and references in docs/statistics.md. Intervals are
percentile bootstraps over items (test cases) with a seeded generator, so a run is
reproducible.
"""

import math
from dataclasses import asdict, dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

MAX_ITEMS = 1_000_000
# Resamples x items drawn at once, to bound memory (8 bytes each).
BLOCK_CELLS = 4_000_000
# The sample sizes' quantiles (Python's own, Wichura's AS 241: the sample-size pages then
# load no scipy, about 70 MB in the web process that would).
_STANDARD_NORMAL = NormalDist()


@dataclass(frozen=True)
class WinRate:
    """A win rate with ties left out, its exact test against 0.5 and the tie sensitivity."""

    wins: int
    losses: int
    ties: int
    rate: float  # wins / (wins + losses); NaN with no untied comparison
    p_value: float  # two-sided exact binomial test of rate = 0.5
    low: float  # 95% Clopper-Pearson interval of the rate
    high: float
    ties_as_half: float  # (wins + ties / 2) / (wins + losses + ties)
    tie_share: float

    def as_dict(self) -> dict:
        return {key: _plain(value) for key, value in asdict(self).items()}


def binomial_win_rate(wins: int, losses: int, ties: int = 0) -> WinRate:
    """Win rate without ties, exact two-sided p-value against 0.5, a 95% exact interval,
    and the sensitivity figure counting each tie as half a win."""
    from scipy import stats

    wins, losses, ties = (
        _count(v, name) for v, name in ((wins, "wins"), (losses, "losses"), (ties, "ties"))
    )
    untied = wins + losses
    total = untied + ties
    if untied:
        test = stats.binomtest(wins, untied, 0.5, alternative="two-sided")
        interval = test.proportion_ci(confidence_level=0.95, method="exact")
        rate, p_value, low, high = wins / untied, test.pvalue, interval.low, interval.high
    else:
        rate = p_value = low = high = math.nan
    return WinRate(
        wins=wins,
        losses=losses,
        ties=ties,
        rate=rate,
        p_value=float(p_value),
        low=float(low),
        high=float(high),
        ties_as_half=(wins + ties / 2) / total if total else math.nan,
        tie_share=ties / total if total else math.nan,
    )


def win_rate_sample_size(
    p1: float, *, alpha: float = 0.05, power: float = 0.80, tie_share: float = 0.0
) -> int:
    """Items needed for a two-sided test of a win rate against 0.5 (normal approximation).

    n = ((z_{1-alpha/2} * 0.5 + z_{power} * sqrt(p1 (1 - p1))) / (p1 - 0.5))^2, rounded up,
    then divided by 1 - tie_share and rounded up again: with p1 = 0.58, alpha 0.05 and power
    0.80 that is 305 items, 382 if a fifth of the comparisons are expected to be ties.
    """
    _check_open_unit(p1, "p1")
    _check_open_unit(alpha, "alpha")
    _check_open_unit(power, "power")
    if p1 == 0.5:
        raise ValueError("p1 must differ from 0.5: there is no effect to detect")
    if not 0.0 <= tie_share < 1.0:
        raise ValueError("tie_share must be at least 0 and below 1")
    z_alpha = _STANDARD_NORMAL.inv_cdf(1.0 - alpha / 2.0)
    z_power = _STANDARD_NORMAL.inv_cdf(power)
    root = (z_alpha * 0.5 + z_power * math.sqrt(p1 * (1.0 - p1))) / (p1 - 0.5)
    untied = math.ceil(root * root - 1e-9)
    return math.ceil(untied / (1.0 - tie_share) - 1e-9)


def mean_difference_sample_size(
    difference: float, sd: float, *, alpha: float = 0.05, power: float = 0.80
) -> int:
    """Items needed to detect a mean paired difference with a two-sided test.

    n = ((z_{1-alpha/2} + z_{power}) * sd / difference)^2, rounded up, with sd the standard
    deviation of the per-item differences (normal approximation to the paired t-test).
    """
    _check_open_unit(alpha, "alpha")
    _check_open_unit(power, "power")
    if not (math.isfinite(difference) and difference != 0):
        raise ValueError("the difference to detect must be a number other than 0")
    if not (math.isfinite(sd) and sd > 0):
        raise ValueError("the standard deviation must be a positive number")
    z = _STANDARD_NORMAL.inv_cdf(1.0 - alpha / 2.0) + _STANDARD_NORMAL.inv_cdf(power)
    return math.ceil((z * sd / abs(difference)) ** 2 - 1e-9)


def mcnemar_exact(first_only: int, second_only: int) -> float:
    """McNemar's exact test: two-sided binomial p-value of the discordant pairs.

    first_only: items where only the first system's outcome was positive; second_only:
    only the second's. 1.0 when there is no discordant pair.
    """
    from scipy import stats

    first_only, second_only = _count(first_only, "first_only"), _count(second_only, "second_only")
    discordant = first_only + second_only
    if discordant == 0:
        return 1.0
    return float(stats.binomtest(first_only, discordant, 0.5).pvalue)


def exact_share(positive: int, n: int, confidence: float = 0.95) -> dict:
    """A share with its exact (Clopper-Pearson 1934) interval: the bounds are the beta
    quantiles B(a/2; k, n-k+1) and B(1-a/2; k+1, n-k), 0 at k = 0 and 1 at k = n.

    ``{"n", "positive", "share", "low", "high"}``; share and bounds None with n = 0.
    """
    from scipy import stats

    positive, n = _count(positive, "positive"), _count(n, "n")
    if positive > n:
        raise ValueError("positive must not exceed n")
    _check_open_unit(confidence, "confidence")
    if n == 0:
        return {"n": 0, "positive": 0, "share": None, "low": None, "high": None}
    alpha = 1.0 - confidence
    low = 0.0 if positive == 0 else stats.beta.ppf(alpha / 2, positive, n - positive + 1)
    high = 1.0 if positive == n else stats.beta.ppf(1 - alpha / 2, positive + 1, n - positive)
    return {
        "n": n,
        "positive": positive,
        "share": positive / n,
        "low": float(low),
        "high": float(high),
    }


def holm(p_values: npt.ArrayLike) -> np.ndarray:
    """Holm's (1979) step-down adjusted p-values, in the order given (NaN stays NaN)."""
    p = np.asarray(p_values, dtype=float)
    adjusted = np.full(p.shape, np.nan)
    present = np.flatnonzero(~np.isnan(p))
    m = present.size
    if not m:
        return adjusted
    order = present[np.argsort(p[present], kind="stable")]
    steps = np.maximum.accumulate((m - np.arange(m)) * p[order])
    adjusted[order] = np.minimum(steps, 1.0)
    return adjusted


def bootstrap_means(
    values: npt.ArrayLike, *, n_resamples: int, seed: int, weights: npt.ArrayLike | None = None
) -> np.ndarray:
    """Means of ``values`` (items x columns, or items) over bootstrap resamples of the items.

    weights: a weight per item (e.g. a stratum's share over its size); the resampled mean is
    then the weighted mean. Returns resamples x columns. NaN values are left out per column.
    """
    data = np.asarray(values, dtype=float)
    single = data.ndim == 1
    data = data[:, None] if single else data
    n = data.shape[0]
    if n > MAX_ITEMS:
        raise ValueError(f"at most {MAX_ITEMS} items")
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    present = ~np.isnan(data)
    filled = np.where(present, data, 0.0)
    rng = np.random.default_rng(seed)
    result = np.empty((n_resamples, data.shape[1]))
    block = max(1, BLOCK_CELLS // max(n, 1))
    for start in range(0, n_resamples, block):
        size = min(block, n_resamples - start)
        draws = rng.integers(0, n, size=(size, n)) if n else np.zeros((size, 0), int)
        offsets = (np.arange(size) * n)[:, None]
        counts = np.bincount((draws + offsets).ravel(), minlength=size * n).reshape(size, n)
        counts = counts * w
        with np.errstate(invalid="ignore", divide="ignore"):
            result[start : start + size] = (counts @ filled) / (counts @ present)
    return result[:, 0] if single else result


def percentile_interval(samples: npt.ArrayLike, confidence: float = 0.95) -> tuple[float, float]:
    """The percentile interval of bootstrap samples, NaN samples left out."""
    samples = np.asarray(samples, dtype=float)
    samples = samples[~np.isnan(samples)]
    if not samples.size:
        return math.nan, math.nan
    low, high = np.quantile(samples, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(low), float(high)


def percentile_intervals(
    samples: npt.ArrayLike, confidence: float = 0.95
) -> list[tuple[float, float]]:
    """``percentile_interval`` of each column of ``samples`` (resamples x columns), the
    same numbers: the columns without a NaN sample in one call, the others one by one."""
    samples = np.asarray(samples, dtype=float)
    if samples.ndim != 2:
        raise ValueError("samples must be resamples x columns")
    intervals: list[tuple[float, float]] = [(math.nan, math.nan)] * samples.shape[1]
    clean = ~np.isnan(samples).any(axis=0)
    if samples.shape[0] and clean.any():
        # Each column as a contiguous row, as one column alone is laid out.
        rows = np.ascontiguousarray(samples[:, clean].T)
        bounds = np.quantile(rows, [(1 - confidence) / 2, (1 + confidence) / 2], axis=1)
        for column, low, high in zip(np.flatnonzero(clean), *bounds, strict=True):
            intervals[column] = (float(low), float(high))
    for column in np.flatnonzero(~clean):
        intervals[column] = percentile_interval(samples[:, column], confidence)
    return intervals


# What ``paired_difference`` gives, in this order.
PAIRED_KEYS = (
    "n", "mean_first", "mean_second", "difference", "low", "high", "relative",
    "sd_difference", "effect_size_dz", "wilcoxon_statistic", "wilcoxon_p", "t_statistic", "t_p",
)  # fmt: skip


def paired_difference(
    first: npt.ArrayLike,
    second: npt.ArrayLike,
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    weights: npt.ArrayLike | None = None,
    boot: npt.ArrayLike | None = None,
) -> dict:
    """Second minus first over items both have: mean difference with a bootstrap interval,
    Wilcoxon's signed-rank test, the paired t-test, Cohen's d_z and the relative difference.

    weights: per item, for a stratum-weighted mean difference (the tests stay unweighted).
    boot: the difference's bootstrap means when already drawn (``bootstrap_means`` of many
    columns at once shares one set of draws), instead of drawing them here.
    """
    boots = None if boot is None else np.asarray(boot, dtype=float).reshape(-1, 1)
    return paired_differences(
        [(first, second)], n_resamples=n_resamples, seed=seed, weights=weights, boots=boots
    )[0]


def paired_differences(
    pairs: list[tuple[npt.ArrayLike, npt.ArrayLike]],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    weights: npt.ArrayLike | None = None,
    boots: npt.ArrayLike | None = None,
) -> list[dict]:
    """``paired_difference`` of each (first, second) in ``pairs``, the same numbers, with
    the tests run for many pairs at once (per test and number of items: scipy's overhead
    per call, not the arithmetic, was most of a many-system comparison's time).

    weights: per item, shared by every pair. boots: resamples x pairs, each pair's
    bootstrap means when already drawn; else each pair draws its own, as
    ``paired_difference`` does.
    """
    w_all = None if weights is None else np.asarray(weights, dtype=float)
    if boots is not None:
        boots = np.asarray(boots, dtype=float)
        if boots.ndim != 2 or boots.shape[1] != len(pairs):
            raise ValueError("boots must be resamples x pairs")
    results, differences = [], []
    for first, second in pairs:
        a, b = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
        if a.shape != b.shape:
            raise ValueError("first and second must hold the same items")
        both = ~np.isnan(a) & ~np.isnan(b)
        a, b = a[both], b[both]
        w = None if w_all is None else w_all[both]
        d = b - a
        n = int(d.size)
        result = {"n": n, "mean_first": _mean(a, w), "mean_second": _mean(b, w)}
        result["difference"] = _mean(d, w)
        mean_first = result["mean_first"]
        result["relative"] = (
            result["difference"] / mean_first if n and mean_first not in (0.0,) else math.nan
        )
        sd = float(np.std(d, ddof=1)) if n >= 2 else math.nan
        result["sd_difference"] = sd
        result["effect_size_dz"] = float(np.mean(d) / sd) if n >= 2 and sd > 0 else math.nan
        results.append(result)
        differences.append((a, b, d, w))
    if boots is None:
        boots = np.column_stack(
            [
                bootstrap_means(d, n_resamples=n_resamples, seed=seed, weights=w)
                if d.size
                else np.full(n_resamples, math.nan)
                for _, _, d, w in differences
            ]
        ) if pairs else np.empty((n_resamples, 0))  # fmt: skip
    for result, (low, high) in zip(results, percentile_intervals(boots), strict=True):
        result["low"], result["high"] = low, high
    _wilcoxon_tests(results, differences)
    _t_tests(results, differences)
    return [{key: _plain(result[key]) for key in PAIRED_KEYS} for result in results]


def _by_size(columns: list[int], differences: list) -> dict[int, list[int]]:
    groups: dict[int, list[int]] = {}
    for k in columns:
        groups.setdefault(differences[k][2].size, []).append(k)
    return groups


def _wilcoxon_method(d: np.ndarray) -> str:
    """The method scipy's ``wilcoxon(method="auto")`` takes for one pair's differences:
    exact up to 50 items with no zero and no tie, a permutation test up to 13 items
    otherwise, else the normal approximation."""
    if d.size > 50:
        return "asymptotic"
    magnitudes = np.abs(d)
    if not (magnitudes == 0).any() and np.unique(magnitudes).size == magnitudes.size:
        return "exact"
    return "permutation" if d.size <= 13 else "asymptotic"


def _wilcoxon_sign_flips(d: np.ndarray) -> tuple[float, float]:
    """Wilcoxon's signed-rank test of up to 13 differences with a zero or a tie: the exact
    null distribution over every sign flip (2^n of them), as scipy's ``wilcoxon`` computes
    it with ``permutation_test`` (the same statistic, count and tolerance), but from one
    matrix of flips instead of a Python call per flip (seconds per pair before). A zero is
    left out of the ranks; its flips repeat every sum, so they scale both counts alike."""
    from scipy import stats

    nonzero = d[d != 0]
    ranks = stats.rankdata(np.abs(nonzero))
    positive, negative = ranks[nonzero > 0].sum(), ranks[nonzero < 0].sum()
    m = nonzero.size
    flips = (np.arange(2**m)[:, None] >> np.arange(m)) & 1
    null = flips @ ranks
    gamma = abs(np.finfo(float).eps * 100 * positive)
    repeats = 2 ** (d.size - m)
    total = 2**d.size
    less = np.count_nonzero(null <= positive + gamma) * repeats / total
    greater = np.count_nonzero(null >= positive - gamma) * repeats / total
    p = min(max(min(less, greater) * 2, 0.0), 1.0)
    return float(min(positive, negative)), float(p)


def _wilcoxon_tests(results: list[dict], differences: list) -> None:
    """Wilcoxon's signed-rank test (second against first) of every pair with two items and
    a difference other than 0, as ``stats.wilcoxon(second, first)`` gives it alone: the
    pairs of one method and size in one call, each pair's differences a row."""
    from scipy import stats

    for result in results:
        result["wilcoxon_statistic"], result["wilcoxon_p"] = math.nan, math.nan
    tested: dict[str, list[int]] = {}
    for k, (_, _, d, _) in enumerate(differences):
        if d.size >= 2 and np.any(d != 0):
            tested.setdefault(_wilcoxon_method(d), []).append(k)
    for method, columns in tested.items():
        if method == "permutation":
            for k in columns:
                statistic, p = _wilcoxon_sign_flips(differences[k][2])
                results[k]["wilcoxon_statistic"], results[k]["wilcoxon_p"] = statistic, p
            continue
        for group in _by_size(columns, differences).values():
            rows = np.stack([differences[k][2] for k in group])
            test = stats.wilcoxon(rows, axis=1, method=method)
            statistics, p_values = np.atleast_1d(test.statistic), np.atleast_1d(test.pvalue)
            for k, statistic, p in zip(group, statistics, p_values, strict=True):
                results[k]["wilcoxon_statistic"], results[k]["wilcoxon_p"] = (
                    float(statistic),
                    float(p),
                )


def _t_tests(results: list[dict], differences: list) -> None:
    """The paired t-test (second against first) of every pair with two items and a spread,
    as ``stats.ttest_rel(second, first)`` gives it alone: the pairs of one size in one call,
    each pair's items a row."""
    from scipy import stats

    for result in results:
        result["t_statistic"], result["t_p"] = math.nan, math.nan
    columns = [
        k for k, result in enumerate(results) if result["n"] >= 2 and result["sd_difference"] > 0
    ]
    for group in _by_size(columns, differences).values():
        seconds = np.stack([differences[k][1] for k in group])
        firsts = np.stack([differences[k][0] for k in group])
        test = stats.ttest_rel(seconds, firsts, axis=1)
        statistics, p_values = np.atleast_1d(test.statistic), np.atleast_1d(test.pvalue)
        for k, statistic, p in zip(group, statistics, p_values, strict=True):
            results[k]["t_statistic"], results[k]["t_p"] = float(statistic), float(p)


def logistic_fit(x: npt.ArrayLike, y: npt.ArrayLike, *, iterations: int = 100) -> dict:
    """Logistic regression of a 0/1 outcome on one covariate, by Newton's method.

    Returns the intercept, the slope, its standard error and Wald p-value; NaN where the
    fit does not exist (one outcome only, no spread in x, or separation).
    """
    from scipy import stats

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = ~np.isnan(x) & ~np.isnan(y)
    x, y = x[keep], y[keep]
    blank = {"n": int(x.size), "intercept": None, "slope": None, "se": None, "p": None}
    if x.size < 3 or np.ptp(x) == 0 or y.min() == y.max():
        return blank
    design = np.column_stack([np.ones_like(x), x])
    beta = np.zeros(2)
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-design @ beta))
        hessian = design.T @ (design * (p * (1 - p))[:, None])
        try:
            step = np.linalg.solve(hessian, design.T @ (y - p))
        except np.linalg.LinAlgError:
            return blank
        beta += step
        if np.max(np.abs(step)) < 1e-10:
            break
    else:
        return blank  # no convergence: (quasi-)separation
    p = 1.0 / (1.0 + np.exp(-design @ beta))
    covariance = np.linalg.inv(design.T @ (design * (p * (1 - p))[:, None]))
    se = math.sqrt(covariance[1, 1])
    if not math.isfinite(se) or se > 1e6:
        return blank
    return {
        "n": int(x.size),
        "intercept": _plain(beta[0]),
        "slope": _plain(beta[1]),
        "se": _plain(se),
        "p": _plain(2 * stats.norm.sf(abs(beta[1] / se))),
    }


def linear_fit(x: npt.ArrayLike, y: npt.ArrayLike) -> dict:
    """Least-squares line of y on x with the slope's two-sided p-value and r."""
    from scipy import stats

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = ~np.isnan(x) & ~np.isnan(y)
    x, y = x[keep], y[keep]
    if x.size < 3 or np.ptp(x) == 0:
        return {"n": int(x.size), "intercept": None, "slope": None, "r": None, "p": None}
    fit = stats.linregress(x, y)
    return {
        "n": int(x.size),
        "intercept": _plain(fit.intercept),
        "slope": _plain(fit.slope),
        "r": _plain(fit.rvalue),
        "p": _plain(fit.pvalue),
    }


def _mean(values: np.ndarray, weights: np.ndarray | None) -> float:
    if not values.size:
        return math.nan
    return float(np.average(values, weights=weights))


def _count(value, name: str) -> int:
    if isinstance(value, bool) or int(value) != value or value < 0:
        raise ValueError(f"{name} must be a whole number of 0 or more")
    return int(value)


def _check_open_unit(value: float, name: str) -> None:
    if not (isinstance(value, int | float) and 0.0 < value < 1.0):
        raise ValueError(f"{name} must lie strictly between 0 and 1")


def _plain(value):
    """A JSON-ready number: None where undefined."""
    if isinstance(value, bool | int | str) or value is None:
        return value
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else value
