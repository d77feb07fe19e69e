"""A judge's calibration with ties: reading the verdicts and the kappa with its bootstrap,
for an arena-sized judge (999 cases, both orders, about one output in ten a tie). Prints
figures, and the kappa with the ties kept beside the one on decisive verdicts only.

.venv/bin/python benchmarks/judges.py [--repeat 5]
"""

import argparse
import contextlib
import sys
from functools import partial
from pathlib import Path

import numpy as np

# benchmarks/agreement.py would shadow the app when this folder is first on sys.path.
sys.path[0] = str(Path(__file__).resolve().parents[1])

from agreement.analysis.aggregation import preference_majority  # noqa: E402
from agreement.judges.measures import judge_case_preferences, kappa_with_interval  # noqa: E402
from agreement.judges.verdicts import key_preference, parse_verdict  # noqa: E402
from benchmarks.report import add_repeat, reported, spread, timed  # noqa: E402

CASES = 999
TIE_SHARE = 0.107


def simulated(seed: int = 0):
    """Three raters' preferences (key terms) and a judge's outputs in both orders, the judge
    agreeing with the cases' truth most of the time and tying on about TIE_SHARE of them."""
    rng = np.random.default_rng(seed)
    truth = rng.choice([-1.0, 0.0, 1.0], size=CASES, p=[0.45, 0.1, 0.45])
    raters = np.stack(
        [
            np.where(rng.random(CASES) < 0.7, truth, rng.choice([-1.0, 0.0, 1.0], CASES))
            for _ in range(3)
        ]
    )
    outputs = []
    for case in range(CASES):
        for order in ("AB", "BA"):
            if rng.random() < TIE_SHARE:
                token = "C"
            else:
                prefers_a = truth[case] < 0 if rng.random() < 0.75 else rng.random() < 0.5
                shown_first = prefers_a == (order == "AB")
                token = "A" if shown_first else "B"
            outputs.append((case, order, f"Weighing both steps of case {case}.\n[[{token}]]"))
    return raters, outputs


def calibration(raters, outputs, *, allow_tie: bool):
    by_order = np.full((CASES, 2), np.nan)
    for case, order, text in outputs:
        try:
            verdict = parse_verdict(text, allow_tie=allow_tie)
        except ValueError:
            continue
        by_order[case, ("AB", "BA").index(order)] = key_preference(verdict, order)
    judge = judge_case_preferences(by_order)
    return kappa_with_interval(judge, preference_majority(raters), n_resamples=1000, seed=1)


def read_all(outputs, *, allow_tie: bool) -> None:
    for _, _, text in outputs:
        with contextlib.suppress(ValueError):
            parse_verdict(text, allow_tie=allow_tie)


def main(runs: int) -> None:
    raters, outputs = simulated()
    print("| rule | outputs | read | kappa + 1,000 resamples | kappa | cases |")
    print("|---|---|---|---|---|---|")
    for allow_tie in (False, True):
        read = timed(partial(read_all, outputs, allow_tie=allow_tie), runs)
        total = timed(partial(calibration, raters, outputs, allow_tie=allow_tie), runs)
        result = calibration(raters, outputs, allow_tie=allow_tie)
        rule = "ties allowed" if allow_tie else "strict A/B"
        print(
            f"| {rule} | {len(outputs)} | {spread(read, digits=3)} | {spread(total)} "
            f"| {result.kappa:.3f} | {result.n_cases} |"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_repeat(parser)
    args = parser.parse_args()
    with reported("A judge's calibration with ties", runs=args.repeat):
        main(args.repeat)
