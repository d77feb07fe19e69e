"""Time of the comparison of systems the worker computes after unblinding.

.venv/bin/python benchmarks/comparison.py
"""

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agreement.analysis.outcomes import compare_systems
from tests.agreement.simulation import simulated_study

if __name__ == "__main__":
    print(f"load average {os.getloadavg()[0]:.1f}")
    for cases in (300, 2_000, 10_000):
        data = simulated_study(n_cases=cases, effect=0.2, seed=1)
        started = time.perf_counter()
        compare_systems(data, n_resamples=10_000, seed=1)
        elapsed = time.perf_counter() - started
        print(
            f"{cases:>6} cases x 3 raters, 2 systems, 2 strata, 10,000 resamples: {elapsed:.2f} s"
        )
