"""Agreement and comparison statistics: the public API of the pure statistics core.

Every function takes ratings as numbers; `data` is raters x units (one row per rater, one
column per unit) with None or NaN where a rating is missing. Nothing here imports Django.
Formulas and references: docs/statistics.md.
"""

from agreement.stats.bootstrap import AlphaBootstrap, alpha_bootstrap, alpha_interval
from agreement.stats.estimates import (
    WinRate,
    binomial_win_rate,
    holm,
    mcnemar_exact,
    mean_difference_sample_size,
    paired_difference,
    win_rate_sample_size,
)
from agreement.stats.gwet import gwet_ac
from agreement.stats.icc import ICC_FORMS, icc
from agreement.stats.kappa import cohen_kappa, fleiss_kappa, pairwise_cohen_kappa, percent_agreement
from agreement.stats.krippendorff import LEVELS, alpha_without_each_rater, krippendorff_alpha
from agreement.stats.sequential import SequentialWinRate, sequential_win_rate

__all__ = [
    "ICC_FORMS",
    "LEVELS",
    "AlphaBootstrap",
    "SequentialWinRate",
    "WinRate",
    "binomial_win_rate",
    "holm",
    "mcnemar_exact",
    "mean_difference_sample_size",
    "paired_difference",
    "win_rate_sample_size",
    "alpha_bootstrap",
    "alpha_interval",
    "alpha_without_each_rater",
    "cohen_kappa",
    "fleiss_kappa",
    "gwet_ac",
    "icc",
    "krippendorff_alpha",
    "pairwise_cohen_kappa",
    "percent_agreement",
    "sequential_win_rate",
]
