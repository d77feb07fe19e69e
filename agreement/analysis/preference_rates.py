"""The preferences compared: each pair's win rate over items and over judgments, and the
ranking of more than two systems (no Django)."""

import numpy as np

from agreement.analysis.comparison_data import ComparisonData, _case_pairs, _plain
from agreement.analysis.item_labels import _label, rule_of
from agreement.analysis.roles import dimension_measure
from agreement.stats.estimates import binomial_win_rate, bootstrap_means, percentile_interval
from agreement.stats.ranking import RANKING_RESAMPLES, bradley_terry, win_matrix


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
    # The ranking reads the cases the question counts: those under the minimum of valid
    # ratings have no verdict (``item_labels``) and are left out, as from the win rates.
    result["ranking"] = _ranking(data, matrix, first, second, valid & ~np.isnan(verdicts), seed)
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
