"""Win matrix and Bradley-Terry ranking of systems from pairwise comparisons.

A comparison is one verdict on one item (a test case) between two systems: `first` and
`second` are system indices, `outcome` is 1.0 when `first` won, 0.0 when `second` won and
0.5 for a tie. The Bradley-Terry strengths are fitted by the MM algorithm (Hunter 2004),
with a tie counted as half a win for each side; the interval is a bootstrap over items,
which keeps every comparison of a drawn item together. Pure numpy, no Django. See
docs/statistics.md.
"""

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

MAX_SYSTEMS = 500
MAX_COMPARISONS = 5_000_000
TOLERANCE = 1e-10
MAX_ITERATIONS = 100_000
BLOCK = 2_000_000  # resamples x systems x systems cells evaluated at once in the bootstrap
# The resamples of every ranking interval a study shows: the ranking page, the report and its
# bundle ask this one number, so that one study never shows two intervals for one system.
RANKING_RESAMPLES = 2_000


@dataclass(frozen=True)
class WinMatrix:
    """wins[i, j]: times system i beat system j; ties[i, j] (symmetric): times they tied."""

    wins: np.ndarray
    ties: np.ndarray

    @property
    def comparisons(self) -> np.ndarray:
        """comparisons[i, j]: how often i and j were compared (wins both ways and ties)."""
        return self.wins + self.wins.T + self.ties

    @property
    def win_rates(self) -> np.ndarray:
        """Share of i's comparisons with j that i won, a tie counting half; NaN if never met."""
        total = self.comparisons.astype(np.float64)
        scored = self.wins + 0.5 * self.ties
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total > 0, scored / np.where(total > 0, total, 1.0), np.nan)


@dataclass(frozen=True)
class Ranking:
    """Bradley-Terry scores (log-strengths, mean zero) with bootstrap percentile intervals.

    P(i beats j) = 1 / (1 + exp(scores[j] - scores[i])). `order` lists the systems best
    first; `rank_low`/`rank_high` bound each system's rank (1 = best) over the resamples.
    Resamples in which some system cannot be scored (see `bradley_terry`) are left out of
    the intervals and counted in `n_degenerate`; with none left the bounds are NaN.
    """

    scores: np.ndarray
    low: np.ndarray
    high: np.ndarray
    rank_low: np.ndarray
    rank_high: np.ndarray
    order: np.ndarray
    iterations: int
    n_resamples: int
    n_degenerate: int
    confidence: float
    seed: int

    def probability(self, first: int, second: int) -> float:
        """Fitted probability that system `first` beats system `second`."""
        return float(1.0 / (1.0 + np.exp(self.scores[second] - self.scores[first])))


def win_matrix(
    first: npt.ArrayLike, second: npt.ArrayLike, outcome: npt.ArrayLike, n_systems: int
) -> WinMatrix:
    """Count wins (i over j) and ties between every pair of systems."""
    first_codes, second_codes, outcomes = _comparisons(first, second, outcome, n_systems)
    return _win_matrix(first_codes, second_codes, outcomes, n_systems)


def bradley_terry(
    first: npt.ArrayLike,
    second: npt.ArrayLike,
    outcome: npt.ArrayLike,
    n_systems: int,
    items: npt.ArrayLike | None = None,
    prior: float = 0.0,
    n_resamples: int = 2_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Ranking:
    """Rank systems by Bradley-Terry strength, with a bootstrap over items; reproducible.

    items: the item (test case) of each comparison, any hashable labels; by default each
    comparison is its own item. prior: pseudo-comparisons added between every pair of
    systems as ties (0 = the plain maximum-likelihood fit). Without a prior the fit exists
    only if every system can be reached from every other through "beat or tied" steps
    (Hunter 2004, Assumption 1); otherwise a ValueError says so.
    """
    first_codes, second_codes, outcomes = _comparisons(first, second, outcome, n_systems)
    item_codes = _item_codes(items, first_codes.size)
    _check_options(prior, n_resamples, confidence)

    matrix = _win_matrix(first_codes, second_codes, outcomes, n_systems)
    scored = (matrix.wins + 0.5 * matrix.ties)[None].astype(np.float64)
    if prior == 0.0 and not _fit_exists(scored)[0]:
        raise ValueError(
            "These comparisons cannot rank every system: some system never met the others, "
            "or never beat (or tied) any system it met, or never lost to one. "
            "Add comparisons, or use a prior."
        )
    strengths, iterations = _mm(scored, prior)
    scores = _centred_log(strengths)[0]

    resampled = _bootstrap_scores(
        first_codes, second_codes, outcomes, item_codes, n_systems, prior, n_resamples, seed
    )
    valid = resampled[~np.isnan(resampled).any(axis=1)]
    n_degenerate = n_resamples - valid.shape[0]
    levels = np.array([(1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0])
    nan = np.full(n_systems, np.nan)
    if valid.shape[0]:
        low, high = np.quantile(valid, levels, axis=0)
        ranks = _ranks(valid)
        rank_low, rank_high = np.quantile(ranks, levels, axis=0, method="nearest")
    else:
        low, high, rank_low, rank_high = nan, nan.copy(), nan.copy(), nan.copy()
    return Ranking(
        scores=scores,
        low=low,
        high=high,
        rank_low=rank_low,
        rank_high=rank_high,
        order=np.argsort(-scores, kind="stable"),
        iterations=iterations,
        n_resamples=n_resamples,
        n_degenerate=int(n_degenerate),
        confidence=confidence,
        seed=seed,
    )


def _comparisons(
    first: npt.ArrayLike, second: npt.ArrayLike, outcome: npt.ArrayLike, n_systems: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if isinstance(n_systems, bool) or not isinstance(n_systems, int | np.integer):
        raise ValueError("n_systems must be a whole number")
    if not 2 <= n_systems <= MAX_SYSTEMS:
        raise ValueError(f"n_systems must be between 2 and {MAX_SYSTEMS}")
    first_codes = _system_codes(first, n_systems, "first")
    second_codes = _system_codes(second, n_systems, "second")
    outcomes = np.asarray(outcome, dtype=np.float64).reshape(-1)
    if not first_codes.size == second_codes.size == outcomes.size:
        raise ValueError("first, second and outcome must have the same length")
    if first_codes.size > MAX_COMPARISONS:
        raise ValueError(f"at most {MAX_COMPARISONS} comparisons")
    if np.any(first_codes == second_codes):
        raise ValueError("a comparison needs two different systems")
    if not np.isin(outcomes, (0.0, 0.5, 1.0)).all():
        raise ValueError("outcome must be 1 (first won), 0 (second won) or 0.5 (tie)")
    return first_codes, second_codes, outcomes


def _system_codes(values: npt.ArrayLike, n_systems: int, name: str) -> np.ndarray:
    array = np.asarray(values).reshape(-1)
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must hold system indices (whole numbers)")
    codes = array.astype(np.int64)
    if codes.size and (codes.min() < 0 or codes.max() >= n_systems):
        raise ValueError(f"{name} holds a system index outside 0..{n_systems - 1}")
    return codes


def _item_codes(items: npt.ArrayLike | None, n: int) -> np.ndarray:
    if items is None:
        return np.arange(n)
    labels = np.asarray(items).reshape(-1)
    if labels.size != n:
        raise ValueError("items must give one item per comparison")
    return np.unique(labels, return_inverse=True)[1].reshape(-1)


def _check_options(prior: float, n_resamples: int, confidence: float) -> None:
    if not np.isfinite(prior) or prior < 0:
        raise ValueError("prior must be a number of at least 0")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer):
        raise ValueError("n_resamples must be a whole number")
    if not 0 <= n_resamples <= 100_000:
        raise ValueError("n_resamples must be between 0 and 100000")
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be between 0 and 1, e.g. 0.95")


def _win_matrix(first: np.ndarray, second: np.ndarray, outcome: np.ndarray, n: int) -> WinMatrix:
    cells = n * n
    won = outcome == 1.0
    lost = outcome == 0.0
    tied = outcome == 0.5
    wins = np.bincount(first[won] * n + second[won], minlength=cells)
    wins += np.bincount(second[lost] * n + first[lost], minlength=cells)
    ties = np.bincount(first[tied] * n + second[tied], minlength=cells).reshape(n, n)
    return WinMatrix(wins=wins.reshape(n, n), ties=ties + ties.T)


def _fit_exists(scored: np.ndarray) -> np.ndarray:
    """Per resample: is the "i scored against j" graph strongly connected (Warshall)?"""
    reach = scored > 0
    n = reach.shape[-1]
    reach = reach | np.eye(n, dtype=bool)
    for k in range(n):
        reach = reach | (reach[:, :, k, None] & reach[:, None, k, :])
    return np.asarray(reach.all(axis=(1, 2)))


def _mm(scored: np.ndarray, prior: float) -> tuple[np.ndarray, int]:
    """Hunter's MM update for a stack of score matrices (resamples x systems x systems).

    p_i <- W_i / sum_j n_ij / (p_i + p_j), with W_i the (half-tie) wins of i and n_ij the
    comparisons of i with j; a prior adds `prior` ties to every pair. Strengths are kept at
    geometric mean 1; the loop stops when no log-strength moves by more than TOLERANCE.
    """
    n = scored.shape[-1]
    if prior:
        scored = scored + 0.5 * prior * (1.0 - np.eye(n))
    met = scored + np.swapaxes(scored, 1, 2)
    won = scored.sum(axis=2)
    strengths = np.ones(scored.shape[:2])
    for iteration in range(1, MAX_ITERATIONS + 1):
        pair_sums = strengths[:, :, None] + strengths[:, None, :]
        updated = won / (met / pair_sums).sum(axis=2)
        updated /= np.exp(np.log(updated).mean(axis=1, keepdims=True))
        moved = np.abs(np.log(updated) - np.log(strengths)).max()
        strengths = updated
        if moved < TOLERANCE:
            return strengths, iteration
    return strengths, MAX_ITERATIONS


def _centred_log(strengths: np.ndarray) -> np.ndarray:
    logs = np.log(strengths)
    return logs - logs.mean(axis=1, keepdims=True)


def _bootstrap_scores(
    first: np.ndarray,
    second: np.ndarray,
    outcome: np.ndarray,
    items: np.ndarray,
    n: int,
    prior: float,
    n_resamples: int,
    seed: int,
) -> np.ndarray:
    """Scores for each resample of the items (resamples x systems); NaN rows if unfittable.

    A resample is a row of draw counts per item; each comparison then weighs its item's
    count, and a weighted bincount gives the resample's score matrix.
    """
    if n_resamples == 0:
        return np.empty((0, n))
    n_items = int(items.max()) + 1 if items.size else 0
    cells = n * n
    # Each comparison's half-tie scores: the winner's cell, and for a tie the other cell too.
    winner = np.where(outcome == 0.0, second, first)
    loser = np.where(outcome == 0.0, first, second)
    tied = outcome == 0.5
    cell = np.concatenate([winner * n + loser, second[tied] * n + first[tied]])
    weight = np.concatenate([np.where(tied, 0.5, 1.0), np.full(int(tied.sum()), 0.5)])
    item = np.concatenate([items, items[tied]])

    rng = np.random.default_rng(seed)
    chunk = max(1, BLOCK // cells)
    result = np.empty((n_resamples, n))
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        if n_items:
            drawn = rng.integers(0, n_items, size=(size, n_items))
            matrices = np.empty((size, cells))
            for row, draws in enumerate(drawn):
                counts = np.bincount(draws, minlength=n_items)
                matrices[row] = np.bincount(cell, weights=counts[item] * weight, minlength=cells)
            matrices = matrices.reshape(size, n, n)
        else:
            matrices = np.zeros((size, n, n))
        fits = np.ones(size, dtype=bool) if prior else _fit_exists(matrices)
        block = np.full((size, n), np.nan)
        if fits.any():
            block[fits] = _centred_log(_mm(matrices[fits], prior)[0])
        result[start : start + size] = block
    return result


def _ranks(scores: np.ndarray) -> np.ndarray:
    """Rank of each system in each row (1 = highest score)."""
    order = np.argsort(-scores, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, scores.shape[1] + 1)[None], axis=1)
    return ranks
