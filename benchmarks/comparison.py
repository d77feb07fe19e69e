"""Time of the comparison of systems the worker computes after unblinding.

.venv/bin/python benchmarks/comparison.py [--repeat 5]
"""

import argparse
import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agreement.analysis.outcomes import compare_systems
from benchmarks.report import add_repeat, reported, spread, timed
from tests.agreement.simulation import simulated_study

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_repeat(parser)
    args = parser.parse_args()
    with reported("Comparison of systems (compare_systems)", runs=args.repeat):
        for cases in (300, 2_000, 10_000):
            data = simulated_study(n_cases=cases, effect=0.2, seed=1)
            times = timed(partial(compare_systems, data, n_resamples=10_000, seed=1), args.repeat)
            print(
                f"{cases:>6} cases x 3 raters, 2 systems, 2 strata, 10,000 resamples: "
                f"{spread(times)}"
            )
