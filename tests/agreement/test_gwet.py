"""Gwet's AC1 and AC2 against irrCAC (an independent implementation, test-only) and Gwet's
published worked example.

irrCAC rounds its output to `digits` (5 by default): every call here asks for 15 digits,
so the comparisons hold to 1e-9. With pandas 3, irrCAC counts NaN as a category when it
reads the categories from the data (`DataFrame.stack` keeps missing values), which inflates
q and so its chance agreement: every call here names the categories, as irrCAC's own
documentation advises for weighted coefficients.
"""

import numpy as np
import pandas as pd
import pytest
from irrCAC.raw import CAC

from agreement.stats import cohen_kappa, fleiss_kappa, gwet_ac, percent_agreement

NAN = np.nan

# Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed., p. 120: 4 raters, 12 units, 5
# categories, none of the raters rated every unit (irrCAC's `cac.raw4raters`; the R
# package's overview vignette and the Python port's docstring print AC1 0.77544 with
# p_a 0.81818 and p_e 0.19032). Units x raters as printed.
RAW_4RATERS = [
    [1, 1, NAN, 1],
    [2, 2, 3, 2],
    [3, 3, 3, 3],
    [3, 3, 3, 3],
    [2, 2, 2, 2],
    [1, 2, 3, 4],
    [4, 4, 4, 4],
    [1, 1, 2, 1],
    [2, 2, 2, 2],
    [NAN, 5, 5, 5],
    [NAN, NAN, 1, 1],
    [NAN, NAN, 3, NAN],
]
CATEGORIES = [1.0, 2.0, 3.0, 4.0, 5.0]


def irrcac(data, weights=None, categories=None):
    """irrCAC's AC1/AC2 of `data` (raters x units) to 15 digits."""
    frame = pd.DataFrame(np.asarray(data, dtype=float).T)
    scale = [float(c) for c in (categories if categories is not None else np.unique(frame))]
    scale = [c for c in scale if not np.isnan(c)]
    cac = CAC(frame, weights=weights or "identity", categories=scale, digits=15)
    return float(cac.gwet()["est"]["coefficient_value"])


def test_published_example_ac1():
    data = np.array(RAW_4RATERS).T
    ac1 = gwet_ac(data)
    assert ac1 == pytest.approx(0.77544, abs=5e-6)  # the printed digits
    # p_a and p_e as printed: 9/11 from the 11 units with two ratings or more.
    p_a, p_e = 0.81818, 0.19032
    assert ac1 == pytest.approx((p_a - p_e) / (1 - p_e), abs=2e-5)
    assert ac1 == pytest.approx(irrcac(data, categories=CATEGORIES), abs=1e-9)


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_published_example_ac2(weights):
    data = np.array(RAW_4RATERS).T
    expected = irrcac(data, weights=weights, categories=CATEGORIES)
    assert gwet_ac(data, weights=weights, categories=CATEGORIES) == pytest.approx(
        expected, abs=1e-9
    )


def test_a_unit_rated_once_enters_the_chance_term_only():
    data = np.array(RAW_4RATERS).T
    without = data[:, :11]  # unit 12 has one rating: category 3
    assert gwet_ac(data) != pytest.approx(gwet_ac(without, categories=CATEGORIES))
    assert gwet_ac(without, categories=CATEGORIES) == pytest.approx(
        irrcac(without, categories=CATEGORIES), abs=1e-9
    )


def random_ratings(seed, *, raters, units, q, missing):
    rng = np.random.default_rng(seed)
    # Raters mostly agree on a unit's latent category, so the coefficients spread widely.
    truth = rng.integers(1, q + 1, size=units)
    noise = rng.integers(1, q + 1, size=(raters, units))
    keep = rng.random((raters, units)) < rng.uniform(0.3, 0.9)
    data = np.where(keep, truth, noise).astype(float)
    data[rng.random((raters, units)) < missing] = NAN
    # irrCAC needs at least one unit with two ratings.
    data[:, 0] = truth[0]
    return data


SHAPES = [(2, 10, 2, 0.0), (3, 25, 3, 0.2), (4, 40, 5, 0.3), (6, 15, 4, 0.5), (5, 80, 7, 0.1)]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_against_irrcac_on_random_data(seed, shape, weights):
    raters, units, q, missing = shape
    data = random_ratings(seed * 100 + q, raters=raters, units=units, q=q, missing=missing)
    categories = list(range(1, q + 1))
    ours = gwet_ac(data, weights=weights, categories=categories)
    assert ours == pytest.approx(irrcac(data, weights, categories), abs=1e-9)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_weights_use_the_values_over_the_whole_scale(seed, weights):
    # Band points 0, 2, 4, 5 with an unused point 3: the weights read the values.
    rng = np.random.default_rng(seed)
    scale = [0.0, 2.0, 3.0, 4.0, 5.0]
    data = rng.choice([0.0, 2.0, 4.0, 5.0], size=(3, 30))
    data[rng.random((3, 30)) < 0.2] = NAN
    data[:, 0] = 4.0
    ours = gwet_ac(data, weights=weights, categories=scale)
    assert ours == pytest.approx(irrcac(data, weights, scale), abs=1e-9)
    assert ours != pytest.approx(gwet_ac(data, weights=weights))  # the unused point counts


def test_perfect_agreement_is_one():
    data = [[1, 2, 3, 1, NAN], [1, 2, 3, 1, 2], [1, 2, 3, NAN, 2]]
    assert gwet_ac(data) == pytest.approx(1.0)
    assert gwet_ac(data, weights="quadratic") == pytest.approx(1.0)


def test_kappa_paradox():
    """Feinstein & Cicchetti (1990): with one category dominant, kappa collapses though the
    raters agree on 94% of cases; AC1 stays near the agreement (Gwet 2008)."""
    # Two raters, 125 cases: 118 both "no" (0), 5 only the first says "yes" (1), 2 only the
    # second.
    first = [0] * 118 + [1] * 5 + [0] * 2
    second = [0] * 118 + [0] * 5 + [1] * 2
    data = np.array([first, second], dtype=float)
    kappa = cohen_kappa(first, second)
    assert percent_agreement(data) == pytest.approx(118 / 125)
    assert kappa < 0.0 and fleiss_kappa(data) < 0.0
    ac1 = gwet_ac(data, categories=[0, 1])
    assert ac1 > 0.9
    assert ac1 == pytest.approx(irrcac(data, categories=[0, 1]), abs=1e-9)


def test_one_category_only():
    """Every rating the same category of a yes/no scale: kappa is undefined (chance agreement
    1), AC1 is 1."""
    data = np.zeros((3, 20))
    assert np.isnan(fleiss_kappa(data))
    assert np.isnan(cohen_kappa(data[0], data[1], categories=[0, 1]))
    assert gwet_ac(data, categories=[0, 1]) == pytest.approx(1.0)
    assert gwet_ac(data, categories=[0, 1]) == pytest.approx(
        irrcac(data, categories=[0, 1]), abs=1e-9
    )


def test_undefined_cases_are_nan():
    assert np.isnan(gwet_ac([[1, NAN], [NAN, 2]]))  # no unit with two ratings
    assert np.isnan(gwet_ac([[1, 1], [1, 1]]))  # a single category: no chance term
    assert np.isnan(gwet_ac(np.full((2, 3), NAN)))


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="weights"):
        gwet_ac([[1, 2], [1, 2]], weights="cubic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="one of the categories"):
        gwet_ac([[1, 2], [1, 7]], categories=[1, 2, 3])
    with pytest.raises(ValueError, match="distinct"):
        gwet_ac([[1, 2], [1, 2]], categories=[1, 1, 2])
