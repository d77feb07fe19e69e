"""How an LLM judge agrees with itself and with the human raters: its verdicts in both
orders as one preference per case, Cohen's kappa with the raters, and its position and
length biases. Pure Python and numpy, no Django; the verdicts are read by ``verdicts``.
See docs/statistics.md.
"""

from dataclasses import dataclass

import numpy as np

from agreement.stats import cohen_kappa

from .verdicts import TIE


def judge_case_preferences(by_order: np.ndarray) -> np.ndarray:
    """Cases x 2 key-order verdicts (orders AB, BA; NaN = none) -> one preference per case.

    Both orders agreeing (or only one parsed): that preference, a tie in both a tie; the
    two disagreeing: a tie (0), since the judge then preferred whichever side came first or
    second, not a response, or preferred a response in one order only (a tie and a
    preference). NaN if neither order gave a verdict.
    """
    first, second = by_order[:, 0], by_order[:, 1]
    result = np.where(np.isnan(first), second, first)
    both = ~np.isnan(first) & ~np.isnan(second)
    result[both & (first != second)] = 0.0
    return result


@dataclass(frozen=True)
class KappaInterval:
    kappa: float
    low: float
    high: float
    n_cases: int


LABELS = [-1.0, 0.0, 1.0]


def kappa_with_interval(
    judge: np.ndarray, humans: np.ndarray, *, n_resamples: int = 1000, seed: int = 0
) -> KappaInterval:
    """Cohen's kappa (categories A, tie, B) on the cases both have, with a bootstrap
    percentile interval (95%) over those cases; NaN where undefined."""
    shared = ~np.isnan(judge) & ~np.isnan(humans)
    first, second = judge[shared], humans[shared]
    n = int(shared.sum())
    kappa = cohen_kappa(first, second, categories=LABELS) if n else float("nan")
    low = high = float("nan")
    if n >= 2 and n_resamples:
        rng = np.random.default_rng(seed)
        draws = rng.integers(0, n, size=(n_resamples, n))
        values = np.array([cohen_kappa(first[d], second[d], categories=LABELS) for d in draws])
        values = values[~np.isnan(values)]
        if values.size:
            low, high = (float(v) for v in np.quantile(values, [0.025, 0.975]))
    return KappaInterval(kappa=float(kappa), low=low, high=high, n_cases=n)


def position_consistency(by_order: np.ndarray) -> tuple[float, int]:
    """Share of cases with verdicts in both orders that prefer the same response (or are a
    tie in both), and n. A tie in one order and a preference in the other is inconsistent."""
    both = ~np.isnan(by_order).any(axis=1)
    n = int(both.sum())
    if not n:
        return float("nan"), 0
    return float(np.mean(by_order[both, 0] == by_order[both, 1])), n


def first_position_rate(shown_verdicts: list[str]) -> tuple[float, int]:
    """Among decisive verdicts (a tie chose neither position), the share that chose the
    candidate shown first ("A"), and n."""
    decisive = [v for v in shown_verdicts if v in ("A", "B")]
    n = len(decisive)
    if not n:
        return float("nan"), 0
    return sum(v == "A" for v in decisive) / n, n


def tie_rate(shown_verdicts: list[str]) -> tuple[float, int]:
    """Share of parsed verdicts that were a tie, and n (the parsed verdicts)."""
    n = len(shown_verdicts)
    if not n:
        return float("nan"), 0
    return sum(v == TIE for v in shown_verdicts) / n, n


def longer_preferred_rate(preferences: np.ndarray, lengths: np.ndarray) -> tuple[float, int]:
    """Among decisive preferences (-1/+1) between responses of different lengths, the share
    that chose the longer response, and n. lengths: cases x 2, in the preferences' terms."""
    decisive = np.isin(preferences, (-1.0, 1.0)) & (lengths[:, 0] != lengths[:, 1])
    n = int(decisive.sum())
    if not n:
        return float("nan"), 0
    longer_is_b = lengths[decisive, 1] > lengths[decisive, 0]
    chose_b = preferences[decisive] > 0
    return float(np.mean(longer_is_b == chose_b)), n
