"""Intraclass correlations in Shrout and Fleiss's (1979) notation, for complete data.

With n targets (units) rated by the same k judges (raters), the two-way analysis of
variance gives the mean squares between targets (BMS, n - 1 degrees of freedom), between
judges (JMS, k - 1), the residual (EMS, (n - 1)(k - 1)) and within targets (WMS = the
judges' and residual sums of squares over n (k - 1)). Then (Shrout & Fleiss 1979, Psychol
Bull 86:420-428; the k forms are the reliability of the mean of the k ratings):

    ICC(1,1) = (BMS - WMS) / (BMS + (k - 1) WMS)
    ICC(2,1) = (BMS - EMS) / (BMS + (k - 1) EMS + k (JMS - EMS) / n)
    ICC(3,1) = (BMS - EMS) / (BMS + (k - 1) EMS)
    ICC(1,k) = (BMS - WMS) / BMS
    ICC(2,k) = (BMS - EMS) / (BMS + (JMS - EMS) / n)
    ICC(3,k) = (BMS - EMS) / BMS

In McGraw and Wong's (1996) names: ICC(1) one-way random; ICC(2) two-way random, absolute
agreement (ICC(A,1)); ICC(3) two-way mixed, consistency (ICC(C,1)).
"""

import numpy as np

from agreement.stats.ratings import RatingData, rating_matrix

ICC_FORMS: tuple[str, ...] = ("1,1", "2,1", "3,1", "1,k", "2,k", "3,k")


def icc(data: RatingData, *, form: str = "2,1") -> float:
    """The intraclass correlation ``form`` ("1,1", "2,1", "3,1", "1,k", "2,k" or "3,k").

    data: raters x units, complete (every rater rated every unit): ValueError on a missing
    rating, on fewer than two raters or two units, or an unknown form. NaN when undefined
    (no variation at all: every mean square 0).
    """
    if form not in ICC_FORMS:
        choices = ", ".join(repr(name) for name in ICC_FORMS)
        raise ValueError(f"form must be one of {choices}; got {form!r}")
    ratings = rating_matrix(data)
    if np.isnan(ratings).any():
        raise ValueError(
            "the intraclass correlation needs complete data: every rater must rate every unit "
            f"({int(np.isnan(ratings).sum())} ratings are missing); keep the units and raters "
            "of a fully crossed subset, or use Krippendorff's alpha, which allows missing ratings"
        )
    k, n = ratings.shape
    if k < 2 or n < 2:
        raise ValueError(
            f"the intraclass correlation needs at least two raters and two units; got {k} x {n}"
        )
    # Centred first, so that large values with a small spread keep their precision.
    x = ratings - ratings.mean()
    unit_means = x.mean(axis=0)
    rater_means = x.mean(axis=1)
    ss_units = k * float(unit_means @ unit_means)
    ss_raters = n * float(rater_means @ rater_means)
    residual = x - unit_means[None, :] - rater_means[:, None]
    ss_error = float(np.einsum("ij,ij->", residual, residual))
    bms = ss_units / (n - 1)
    jms = ss_raters / (k - 1)
    ems = ss_error / ((n - 1) * (k - 1))
    wms = (ss_raters + ss_error) / (n * (k - 1))
    model, _, size = form.partition(",")
    if model == "1":
        numerator, denominator = bms - wms, bms + (k - 1) * wms
        if size == "k":
            denominator = bms
    elif model == "2":
        numerator = bms - ems
        denominator = bms + (k - 1) * ems + k * (jms - ems) / n
        if size == "k":
            denominator = bms + (jms - ems) / n
    else:
        numerator, denominator = bms - ems, bms + (k - 1) * ems
        if size == "k":
            denominator = bms
    if denominator == 0:
        return float("nan")
    return numerator / denominator
