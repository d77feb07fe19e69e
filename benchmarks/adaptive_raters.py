"""Seeded simulation of the adaptive design (k_min to k_max raters per case) against k_max
raters on every case: how often the majority labels name the right response, and the
ratings each design uses, on a mix of easy, medium and hard cases
(``tests/agreement/adaptive_simulation.py``). The figures are seeded (the same every run,
not timings); the time is of one run unless ``--repeat`` asks for more.

    python benchmarks/adaptive_raters.py [studies] [cases] [--repeat 5]
"""

import math
import sys
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.report import positional, repeat_argument, reported, spread, timed
from tests.agreement.adaptive_simulation import MIX, TIE, simulate

DESIGNS = ((2, 5), (2, 3), (3, 5))


def share(hits: int, total: int) -> str:
    """A share with its Monte-Carlo standard error."""
    p = hits / total
    return f"{p:.4f} (± {math.sqrt(p * (1 - p) / total):.4f})"


def run(studies: int, cases: int) -> None:
    mix = ", ".join(f"{name} {s:.0%} (right {lo:.2f}-{hi:.2f})" for name, s, lo, hi in MIX)
    print(f"cases: {mix}; a rater says tie with chance {TIE}")
    for k_min, k_max in DESIGNS:
        outcomes = [
            simulate(n_cases=cases, k_min=k_min, k_max=k_max, seed=seed) for seed in range(studies)
        ]
        total = studies * cases

        def summed(field: str, design: str, outcomes=outcomes) -> int:
            return sum(getattr(o, field)[design] for o in outcomes)

        adaptive, full = summed("correct", "adaptive"), summed("correct", "k_max")
        used, every = summed("ratings", "adaptive"), summed("ratings", "k_max")
        extended = sum(o.extended for o in outcomes)
        # Paired: the same raters' answers under both designs; the difference's error from
        # the studies' spread.
        gaps = [(o.correct["adaptive"] - o.correct["k_max"]) / cases for o in outcomes]
        mean = sum(gaps) / studies
        sd = math.sqrt(sum((g - mean) ** 2 for g in gaps) / max(1, studies - 1))
        print(f"\n{k_min} to {k_max} raters per case ({studies} studies of {cases} cases):")
        print(f"  labels right, adaptive:        {share(adaptive, total)}")
        print(f"  labels right, {k_max} on every case: {share(full, total)}")
        print(f"  labels right, {k_min} on every case: {share(summed('correct', 'k_min'), total)}")
        print(f"  adaptive - {k_max} everywhere: {mean:+.4f} (± {sd / math.sqrt(studies):.4f})")
        print(
            f"  ratings: {used / total:.3f} per case against {k_max} ({used / every:.1%}; "
            f"{1 - used / every:.1%} saved); cases with extra raters {extended / total:.1%}"
        )
        for name, _, _, _ in MIX:
            n = sum(o.by_difficulty[name][0] for o in outcomes)
            right_a = sum(o.by_difficulty[name][1] for o in outcomes)
            right_k = sum(o.by_difficulty[name][2] for o in outcomes)
            ratings = sum(o.by_difficulty[name][3] for o in outcomes)
            print(
                f"    {name}: right {right_a / n:.4f} adaptive, {right_k / n:.4f} with "
                f"{k_max}; {ratings / n:.2f} ratings per case"
            )


def main(studies: int = 20, cases: int = 10_000, repeat: int = 1) -> None:
    with reported(
        "Seeded simulation of adaptive raters per case", runs=repeat, why_fewer="seeded figures"
    ):
        times = timed(partial(run, studies, cases), repeat)
        print(f"\n{studies} studies of {cases} cases per design: {spread(times, digits=1)}")


if __name__ == "__main__":
    main(
        *(int(a) for a in positional(sys.argv[1:])[:2]), repeat=repeat_argument(sys.argv, default=1)
    )
