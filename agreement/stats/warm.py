"""A tiny run of the statistics a recompute and an analysis use, so that a process pays
their imports and first calls' set-up before any rater's recompute does (the worker runs it
as it starts: ``agreement.tasks``)."""

import numpy as np

from .bootstrap import alpha_bootstrap
from .krippendorff import krippendorff_alpha


def statistics_warm() -> None:
    """Load scipy's parts that the statistics load on first use, and compute alpha and its
    bootstrap interval on three raters' four units."""
    # What the statistics import inside their functions (so that a web process never
    # loads scipy): statistics, special functions, sparse counts, the REML optimiser.
    from scipy import optimize, sparse, special, stats

    data = np.array([[1.0, 2.0, 3.0, 3.0], [1.0, 2.0, 3.0, 4.0], [np.nan, 2.0, 2.0, 4.0]])
    krippendorff_alpha(data, "interval")
    alpha_bootstrap(data, "interval", n_resamples=50)
    stats.t.ppf(0.975, 5)
    special.gammaln(3.0)
    sparse.csr_matrix(data[:2])
    optimize.minimize_scalar(lambda x: (x - 1.0) ** 2, bounds=(0.0, 2.0), method="bounded")
