"""Speed and memory of the statistics core against the krippendorff package.

Run: .venv/bin/python benchmarks/agreement.py [--repeat 5] [--no-pipeline]
(--no-pipeline skips the real-worker section)

Each row times both implementations in this one run, on the same data (median and spread of
--repeat runs; the krippendorff loop of a bootstrap row once, scaled), then measures peak
traced memory in a separate, untimed call (tracemalloc sees numpy's allocations). Add a
section by writing a function that returns rows and calling it from main()."""

import argparse
import os
import platform
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

# This file is named agreement.py, so its folder, first on sys.path when run as a script,
# would shadow the agreement package: look in the repository root instead.
sys.path[0] = str(Path(__file__).resolve().parents[1])

import krippendorff  # noqa: E402
import numpy as np  # noqa: E402

from agreement.stats import alpha_bootstrap, krippendorff_alpha  # noqa: E402
from benchmarks.report import RUNS, add_repeat, reported, spread, timed  # noqa: E402


@dataclass
class Row:
    case: str
    ours_seconds: list[float]
    ours_peak_mb: float
    theirs_seconds: list[float]
    theirs_peak_mb: float = float("nan")
    note: str = ""


def peak_mb(function: Callable[[], object]) -> float:
    """Peak memory traced during one call, in MB."""
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def likert(rng, raters: int, units: int, missing: float, low: int, high: int) -> np.ndarray:
    """Raters x units ratings near a per-unit truth on low..high, with a share missing."""
    truth = rng.integers(low, high + 1, size=units)
    ratings = np.clip(truth + rng.integers(-1, 2, size=(raters, units)), low, high).astype(float)
    ratings[rng.random(ratings.shape) < missing] = np.nan
    return ratings


def alpha_row(case: str, data: np.ndarray, level: str, repeat: int = RUNS) -> Row:
    """Our krippendorff_alpha against krippendorff.alpha on the same data."""

    def ours():
        return krippendorff_alpha(data, level)

    def theirs():
        return krippendorff.alpha(reliability_data=data, level_of_measurement=level)

    difference = abs(ours() - theirs())
    return Row(
        case=case,
        ours_seconds=timed(ours, repeat),
        ours_peak_mb=peak_mb(ours),
        theirs_seconds=timed(theirs, repeat),
        theirs_peak_mb=peak_mb(theirs),
        note=f"|difference| {difference:.1e}",
    )


def bootstrap_row(
    case: str, data: np.ndarray, level: str, method: str, loop_calls: int, repeat: int = RUNS
) -> Row:
    """10,000 resamples of ours, against krippendorff.alpha called once per resample in a loop
    (timed on `loop_calls` resamples and scaled to 10,000)."""
    n_resamples = 10_000

    def ours():
        return alpha_bootstrap(data, level, n_resamples=n_resamples, method=method)

    rng = np.random.default_rng(0)
    drawn = rng.integers(0, data.shape[1], size=(loop_calls, data.shape[1]))

    def theirs():
        for row in drawn:
            krippendorff.alpha(reliability_data=data[:, row], level_of_measurement=level)

    result = ours()
    return Row(
        case=case,
        ours_seconds=timed(ours, repeat),
        ours_peak_mb=peak_mb(ours),
        theirs_seconds=[t * n_resamples / loop_calls for t in timed(theirs, 1)],
        note=(
            f"alpha {result.alpha:.3f} [{result.low:.3f}, {result.high:.3f}]; "
            f"ours CPU {spread(timed(ours, repeat, clock=time.process_time), digits=3)}; "
            "theirs: loop, one run, est."
        ),
    )


def alpha_rows(repeat: int) -> list[Row]:
    rng = np.random.default_rng(2024)
    wide = likert(rng, 50, 20_000, 0.30, 1, 7)
    categories = np.where(np.isnan(wide), np.nan, rng.integers(0, 6, size=wide.shape))
    long = likert(rng, 5, 1_000_000, 0.30, 1, 5)
    return [
        alpha_row("(a) alpha, 50 raters x 20,000 units, interval", wide, "interval", repeat),
        alpha_row(
            "(b) alpha, 50 raters x 20,000 units, nominal 0..5", categories, "nominal", repeat
        ),
        alpha_row("(c) alpha, 5 raters x 1,000,000 units, interval", long, "interval", repeat),
    ]


def bootstrap_rows(repeat: int) -> list[Row]:
    rng = np.random.default_rng(36)
    reference = likert(rng, 5, 36, 0.10, 1, 5)
    large = likert(rng, 5, 10_000, 0.10, 1, 5)
    # A per-response dimension of the 100,000-rating recompute: 3 raters, 0..5, few patterns.
    study = likert(rng, 3, 33_000, 0.0, 0, 5)
    # Scores in steps of 0.1: about one pattern per unit, so units are drawn (no multinomial).
    continuous = np.round(rng.normal(size=(3, 2_000)) + rng.normal(size=2_000), 1)
    cases = [
        ("(d) bootstrap 10k, 5 x 36 units, ordinal", reference, "ordinal", "percentile", 500),
        ("(d) same, BCa", reference, "ordinal", "bca", 500),
        ("(e) bootstrap 10k, 5 x 10,000 units, interval", large, "interval", "percentile", 20),
        ("(f) bootstrap 10k, 3 x 33,000 units, ordinal 0..5", study, "ordinal", "percentile", 5),
        ("(f) same, BCa", study, "ordinal", "bca", 5),
        ("(g) bootstrap 10k, 3 x 2,000 units, 0.1 steps, interval", continuous, "interval",
         "percentile", 20),
    ]  # fmt: skip
    return [bootstrap_row(*case, repeat=repeat) for case in cases]


def print_table(rows: list[Row]) -> None:
    header = (
        f"{'case':50} {'ours s, median (min-max, runs)':>32} {'theirs s':>30} "
        f"{'ours/theirs':>11} {'ours MB':>8} {'theirs MB':>9}  note"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        ratio = np.median(row.ours_seconds) / np.median(row.theirs_seconds)
        theirs_mb = "-" if np.isnan(row.theirs_peak_mb) else f"{row.theirs_peak_mb:.1f}"
        ours, theirs = (spread(t, digits=4) for t in (row.ours_seconds, row.theirs_seconds))
        print(
            f"{row.case:50} {ours:>32} {theirs:>30} {ratio:11.3f} "
            f"{row.ours_peak_mb:8.1f} {theirs_mb:>9}  {row.note}"
        )


def main(repeat: int, pipeline: bool) -> None:
    print(
        f"Python {platform.python_version()}, numpy {np.__version__}, "
        f"krippendorff {version('krippendorff')}, {os.cpu_count()} CPUs, "
        f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}"
    )
    print("Times: median and spread of the runs; memory: peak traced by tracemalloc in one run.")
    print_table(alpha_rows(repeat) + bootstrap_rows(repeat))
    if not pipeline:
        return
    from benchmarks.pipeline import pipeline_section

    try:
        pipeline_section()
    except Exception as error:  # the section needs PostgreSQL and Redis
        print(f"\nSubmission-to-result section skipped: {error!r}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_repeat(parser)
    parser.add_argument("--no-pipeline", action="store_true", help="skip the real-worker section")
    args = parser.parse_args()
    with reported("The statistics core against the krippendorff package", runs=args.repeat):
        main(args.repeat, pipeline=not args.no_pipeline)
