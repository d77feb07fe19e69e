"""Many pairs' paired differences at once give each pair exactly what it gets alone, and
what scipy's one-pair tests give (every method scipy's Wilcoxon test picks: exact,
permutation, normal approximation)."""

import math

import numpy as np
import pytest
from scipy import stats

from agreement.stats import paired_difference
from agreement.stats.estimates import (
    paired_differences,
    percentile_interval,
    percentile_intervals,
)


def _pairs(n: int, rng) -> list[tuple[np.ndarray, np.ndarray]]:
    """Pairs of n items: 1-5 scores (ties and zero differences), continuous scores (neither),
    and continuous with half the differences equal; some items missing on one side."""
    scores = (rng.integers(1, 6, n).astype(float), rng.integers(1, 6, n).astype(float))
    first = rng.normal(3, 1, n)
    continuous = (first, first + rng.normal(0.3, 1, n))
    shifted = first.copy()
    shifted[: n // 2] += 1.0
    gaps = rng.normal(3, 1, n)
    gaps[rng.random(n) < 0.2] = np.nan
    return [scores, continuous, (first, shifted), (gaps, gaps + rng.normal(0, 1, n))]


def _same(x, y) -> bool:
    return x == y or (
        isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y)
    )


# 10 items: scipy's permutation test (2^n sign flips each) is the slowest path; 13 is its
# largest size, in the test against scipy below.
@pytest.mark.parametrize("n", [0, 1, 2, 5, 10, 14, 30, 50, 51, 120])
def test_each_pair_gets_what_it_gets_alone(n):
    rng = np.random.default_rng(n)
    pairs = _pairs(n, rng)
    boots = rng.normal(size=(300, len(pairs)))
    boots[rng.random(boots.shape) < 0.01] = np.nan
    weights = rng.random(n)
    for kwargs in ({}, {"weights": weights}, {"boots": boots}):
        together = paired_differences(pairs, n_resamples=300, seed=4, **kwargs)
        for k, (a, b) in enumerate(pairs):
            alone = paired_difference(
                a, b, n_resamples=300, seed=4, weights=kwargs.get("weights"),
                boot=boots[:, k] if "boots" in kwargs else None,
            )  # fmt: skip
            assert list(together[k]) == list(alone)
            assert all(_same(together[k][key], alone[key]) for key in alone), (k, kwargs)


@pytest.mark.parametrize("n", [2, 5, 12, 13, 14, 30, 50, 51, 120])
def test_the_tests_are_scipys_for_each_pair(n):
    rng = np.random.default_rng(100 + n)
    pairs = _pairs(n, rng)
    results = paired_differences(pairs, n_resamples=100, seed=1)
    for (a, b), result in zip(pairs, results, strict=True):
        both = ~np.isnan(a) & ~np.isnan(b)
        a, b = a[both], b[both]
        if np.any(b != a):
            wilcoxon = stats.wilcoxon(b, a)
            assert result["wilcoxon_statistic"] == float(wilcoxon.statistic)
            assert result["wilcoxon_p"] == float(wilcoxon.pvalue)
        else:
            assert result["wilcoxon_p"] is None
        if np.std(b - a, ddof=1) > 0:
            t = stats.ttest_rel(b, a)
            assert result["t_statistic"] == float(t.statistic)
            assert result["t_p"] == float(t.pvalue)
        assert result["n"] == a.size


def test_percentile_intervals_are_each_columns_interval():
    rng = np.random.default_rng(7)
    samples = rng.normal(size=(1001, 6))
    samples[::50, 2] = np.nan
    samples[:, 4] = np.nan
    intervals = percentile_intervals(samples)
    for column in range(samples.shape[1]):
        alone = percentile_interval(samples[:, column])
        assert all(_same(x, y) for x, y in zip(intervals[column], alone, strict=True))
    assert math.isnan(intervals[4][0]) and not math.isnan(intervals[2][0])
