"""Inter-rater agreement statistics: the public API of the pure statistics core.

Every function takes ratings as numbers; `data` is raters x units (one row per rater, one
column per unit) with None or NaN where a rating is missing. Nothing here imports Django.
Formulas and references: docs/statistics.md.
"""

from agreement.bootstrap import AlphaBootstrap, alpha_bootstrap, alpha_interval
from agreement.kappa import cohen_kappa, fleiss_kappa, pairwise_cohen_kappa, percent_agreement
from agreement.krippendorff import LEVELS, alpha_without_each_rater, krippendorff_alpha

__all__ = [
    "LEVELS",
    "AlphaBootstrap",
    "alpha_bootstrap",
    "alpha_interval",
    "alpha_without_each_rater",
    "cohen_kappa",
    "fleiss_kappa",
    "krippendorff_alpha",
    "pairwise_cohen_kappa",
    "percent_agreement",
]
