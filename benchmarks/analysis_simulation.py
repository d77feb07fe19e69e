"""Seeded simulation of the system comparison: false positives on null studies, power and
interval coverage with a built-in effect. Prints figures; asserts nothing. The rates are
seeded (the same every run); the time is of one run unless ``--repeat`` asks for more (one
run is 2 x 500 simulated studies, about a minute).

    python benchmarks/analysis_simulation.py [runs] [cases] [--repeat 5]
"""

import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agreement.analysis.outcomes import compare_systems
from benchmarks.report import positional, repeat_argument, reported, spread, timed
from tests.agreement.simulation import simulated_study


def simulate(runs: int, cases: int) -> None:
    for effect in (0.0, 0.3):
        hits = {"t": 0, "wilcoxon": 0, "binomial": 0}
        covered = signed = 0
        truth = None
        if effect:
            # The mean gap the rounding and clipping leave, from one very large study.
            big = compare_systems(
                simulated_study(n_cases=20_000, effect=effect, seed=10**6), n_resamples=10
            )
            truth = next(r for r in big["paired"] if r["key"] == "total")["difference"]
        for seed in range(runs):
            result = compare_systems(
                simulated_study(n_cases=cases, effect=effect, seed=seed), n_resamples=500, seed=seed
            )
            total = next(
                r for r in result["paired"] if r["key"] == "total" and r["stratum"] == "overall"
            )
            hits["t"] += total["t_p"] < 0.05
            hits["wilcoxon"] += total["wilcoxon_p"] < 0.05
            hits["binomial"] += result["preferences"][0]["pairs"][0]["items"]["p_value"] < 0.05
            if truth is not None:
                covered += total["low"] <= truth <= total["high"]
                signed += total["difference"] > 0
        label = "null study" if not effect else f"effect {effect} (true mean gap {truth:.3f})"
        rates = ", ".join(f"{k} {v / runs:.3f}" for k, v in hits.items())
        print(f"{label}: share of runs with p < 0.05: {rates}")
        if truth is not None:
            print(
                f"  95% bootstrap interval covers the true gap in {covered / runs:.3f} of runs;"
                f" right sign in {signed / runs:.3f}"
            )


def main(runs: int = 500, cases: int = 60, repeat: int = 1) -> None:
    with reported(
        "Seeded simulation of the system comparison", runs=repeat, why_fewer="a minute a run"
    ):
        times = timed(partial(simulate, runs, cases), repeat)
        print(f"{runs} runs of {cases} cases x 3 raters per setting: {spread(times, digits=1)}")


if __name__ == "__main__":
    main(
        *(int(a) for a in positional(sys.argv[1:])[:2]), repeat=repeat_argument(sys.argv, default=1)
    )
