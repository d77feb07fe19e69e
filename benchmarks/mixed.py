"""The mixed-effects robustness check: time of one fit (rater and case random intercepts,
a system effect) by study size. Prints figures through benchmarks/report.py.

.venv/bin/python benchmarks/mixed.py [--repeat 5]
"""

import argparse
import os
import sys
from functools import partial
from pathlib import Path

# As the app sets it (config/__init__.py): a fit's matrices are small, and BLAS threads
# spin on shared cores.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

# benchmarks/agreement.py would shadow the app when this folder is first on sys.path.
sys.path[0] = str(Path(__file__).resolve().parents[1])

from agreement.stats.mixed import system_effect  # noqa: E402
from benchmarks.report import add_repeat, reported, spread, timed  # noqa: E402


def study(cases: int, raters: int, seed: int = 0):
    """Every rater scores both systems' responses of every case."""
    rng = np.random.default_rng(seed)
    case, rater, system = (a.ravel() for a in np.meshgrid(
        np.arange(cases), np.arange(raters), np.arange(2), indexing="ij"
    ))  # fmt: skip
    outcome = (
        10 + 0.5 * system + rng.normal(0, 1.5, cases)[case] + rng.normal(0, 0.7, raters)[rater]
    ) + rng.normal(0, 1.0, len(case))
    return outcome, system, rater, case


def main(runs: int) -> None:
    print("| ratings | cases | raters | fit, median (min-max) | fitted |")
    print("|---|---|---|---|---|")
    for cases, raters in [(50, 4), (150, 6), (300, 6), (500, 6)]:
        outcome, system, rater, case = study(cases, raters)
        fit = partial(system_effect, outcome, system, rater, case, binary=False)
        times = timed(fit, runs)
        print(
            f"| {len(outcome):,} | {cases} | {raters} | {spread(times)} | {fit().get('fitted')} |"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_repeat(parser)
    args = parser.parse_args()
    with reported("Mixed-effects fit (system_effect)", runs=args.repeat):
        main(args.repeat)
