"""The arithmetic of the pay check (protocol 3, "hourly equivalent ... checked against pilot
task times"): percentiles of active times and the hourly pay they imply. Plain Python,
no Django, so it is tested on hand-computed examples alone.
"""

from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def percentile(values: list[int], fraction: float) -> float:
    """The ``fraction`` quantile of ``values`` by linear interpolation between the two
    nearest ranks (Hyndman and Fan's type 7, the default of R and NumPy); the median at
    0.5. ``values`` must not be empty."""
    if not values:
        raise ValueError("No values to take a percentile of.")
    ordered = sorted(values)
    position = (len(ordered) - 1) * fraction
    below = int(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def hourly_per_case(amount: Decimal, seconds: float) -> Decimal | None:
    """What ``amount`` paid per case comes to per hour when a case takes ``seconds``;
    None for no time at all. Rounded to the cent, halves up."""
    if seconds <= 0:
        return None
    hourly = amount * 3600 / Decimal(str(seconds))
    return hourly.quantize(CENT, rounding=ROUND_HALF_UP)
