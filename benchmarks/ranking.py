"""Bradley-Terry ranking with its bootstrap: time for arena-sized inputs. Prints figures.

.venv/bin/python benchmarks/ranking.py [--repeat 5]
"""

import argparse
import sys
from functools import partial
from pathlib import Path

import numpy as np

# benchmarks/agreement.py would shadow the app when this folder is first on sys.path.
sys.path[0] = str(Path(__file__).resolve().parents[1])

from agreement.stats.ranking import bradley_terry, win_matrix  # noqa: E402
from benchmarks.report import add_repeat, reported, spread, timed  # noqa: E402


def arena(systems: int, comparisons: int, items: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    strength = np.linspace(1.5, -1.5, systems)
    first = rng.integers(0, systems, comparisons)
    second = (first + rng.integers(1, systems, comparisons)) % systems
    p = 1 / (1 + np.exp(strength[second] - strength[first]))
    outcome = (rng.random(comparisons) < p).astype(float)
    outcome[rng.random(comparisons) < 0.1] = 0.5
    return first, second, outcome, rng.integers(0, items, comparisons)


def main(runs: int) -> None:
    print("| systems | comparisons | items | resamples | win matrix | ranking + bootstrap |")
    print("|---|---|---|---|---|---|")
    for systems, comparisons, items, resamples in (
        (5, 3_000, 1_000, 1_000),
        (10, 20_000, 5_000, 1_000),
        (30, 100_000, 20_000, 1_000),
    ):
        first, second, outcome, item = arena(systems, comparisons, items)
        matrix = timed(partial(win_matrix, first, second, outcome, systems), runs)
        ranking = timed(
            partial(
                bradley_terry, first, second, outcome, systems, items=item, n_resamples=resamples
            ),
            runs,
        )
        print(
            f"| {systems} | {comparisons:,} | {items:,} | {resamples:,} | "
            f"{spread(matrix, digits=3)} | {spread(ranking)} |"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_repeat(parser)
    args = parser.parse_args()
    with reported("Bradley-Terry ranking with its bootstrap", runs=args.repeat):
        main(args.repeat)
