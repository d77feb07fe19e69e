"""Seeded simulation of the anytime-valid monitor of the primary question (issue 30, part
3): the false decision rate under the null, monitored after every comparison, and, with the
protocol's effect (p1 = 0.58) and a cap at the fixed design's size (5.2: 305), the power
against the fixed-sample exact test and the comparisons saved. The rates are seeded (the
same every run); they are not timings, so the load does not change them.

    python benchmarks/sequential_simulation.py [studies] [--repeat 1]
"""

import sys
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agreement.stats.estimates import win_rate_sample_size
from agreement.stats.sequential import DEFAULT_EFFECT, mixing_for_effect
from benchmarks.report import positional, repeat_argument, reported, spread, timed
from tests.agreement.sequential_simulation import fixed_sample_power, simulate_monitor

NULL_HORIZON = 5_000  # a long study: Ville's bound holds for every horizon at once


def simulate(studies: int) -> None:
    cap = win_rate_sample_size(0.5 + DEFAULT_EFFECT)
    c = mixing_for_effect(DEFAULT_EFFECT)
    print(f"Beta(c, c) mixture with c = {c:.2f} (prior sd = expected effect {DEFAULT_EFFECT})")
    for horizon, seed in ((NULL_HORIZON, 1), (cap, 2)):
        null = simulate_monitor(studies=studies, horizon=horizon, p=0.5, seed=seed)
        print(
            f"null (p = 0.5), {studies} studies monitored after each of {horizon} comparisons: "
            f"decided in {null.rate:.4f} (MC error {null.mc_error(0.05):.4f} at 0.05); "
            f"fixed-sample test at {horizon}: {null.fixed_rejected / studies:.4f}"
        )
    for p1 in (0.58, 0.65):
        run = simulate_monitor(studies=studies, horizon=cap, p=p1, seed=3)
        saved = cap - run.stopped_at
        decided = run.stopped_at[run.stopped_at < cap]
        print(
            f"p1 = {p1}, cap {cap}: monitored power {run.rate:.4f} (MC error "
            f"{run.mc_error():.4f}); fixed-sample power {fixed_sample_power(n=cap, p=p1):.4f} "
            f"exact ({run.fixed_rejected / studies:.4f} in these studies); comparisons used: "
            f"median {np.median(run.stopped_at):.0f}, mean {run.stopped_at.mean():.1f}; "
            f"saved: median {np.median(saved):.0f}, mean {saved.mean():.1f} of {cap}; "
            f"median stop of the decided studies {np.median(decided) if decided.size else 0:.0f}"
        )
    for horizon in (400, 500, 610):
        run = simulate_monitor(studies=studies, horizon=horizon, p=0.58, seed=3)
        print(
            f"p1 = 0.58, cap {horizon}: monitored power {run.rate:.4f}, comparisons used: "
            f"median {np.median(run.stopped_at):.0f}, mean {run.stopped_at.mean():.1f}"
        )


def main(studies: int = 2_000, repeat: int = 1) -> None:
    with reported(
        "Seeded simulation of the anytime-valid monitor", runs=repeat, why_fewer="seeded rates"
    ):
        times = timed(partial(simulate, studies), repeat)
        print(f"{studies} studies per setting: {spread(times, digits=1)}")


if __name__ == "__main__":
    main(
        *(int(a) for a in positional(sys.argv[1:])[:1]), repeat=repeat_argument(sys.argv, default=1)
    )
