"""The raters x units ratings matrix that every agreement statistic takes.

Plain numpy: no Django here, so the statistics can be tested and benchmarked alone.
"""

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

RatingData = npt.ArrayLike | Sequence[npt.ArrayLike]
"""Raters x units: one row per rater, one column per unit; None or NaN where a rating is missing."""


def rating_matrix(data: RatingData) -> np.ndarray:
    """`data` as a 2-D float array, NaN where missing; ValueError if it is not ratings."""
    try:
        matrix = np.asarray(data, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(
            "ratings must be numbers (code categories as numbers), with None or NaN for missing, "
            "in a rectangular raters x units array"
        ) from error
    if matrix.ndim != 2:
        raise ValueError(
            f"ratings must be a 2-D raters x units array, got {matrix.ndim} dimension(s)"
        )
    if np.isinf(matrix).any():
        raise ValueError("ratings must be finite numbers; use None or NaN for a missing rating")
    return matrix
