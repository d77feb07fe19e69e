"""What every benchmark prints with its figures: the commit it measured (and "dirty" when the
tree has changes), the load average before and after, and each figure as the median and
spread (min-max) of its runs, five by default. The one owner of these: a script imports it
and reads neither the load nor the commit itself (tests/test_benchmarks.py holds the rule).

    from benchmarks.report import RUNS, add_repeat, reported, spread, timed

    with reported("Import of 10,000 cases", runs=args.repeat):
        print(f"import: {spread(timed(run_import, args.repeat))}")
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Runs per figure unless a script says why it takes fewer (a run of minutes).
RUNS = 5
# At or above this load average (1 minute) a figure is not an at-rest figure.
AT_REST = 1.0


def load_average() -> float:
    """The 1-minute load average."""
    return os.getloadavg()[0]


def commit() -> str:
    """The checkout's short commit, with " dirty" when tracked or new files have changes."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD")
        changed = git("status", "--porcelain")
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return f"{head} dirty" if changed else head


def add_repeat(parser: argparse.ArgumentParser, default: int = RUNS) -> None:
    """The ``--repeat`` option every benchmark takes: runs per figure."""
    parser.add_argument(
        "--repeat", type=int, default=default, help=f"runs per figure (default {default})"
    )


def repeat_argument(argv: Sequence[str], default: int = RUNS) -> int:
    """``--repeat N`` from a script that reads its other arguments by position."""
    argv = list(argv)
    if "--repeat" in argv:
        return max(1, int(argv[argv.index("--repeat") + 1]))
    return default


def positional(argv: Sequence[str], options: Sequence[str] = ("--repeat",)) -> list[str]:
    """``argv`` without ``--repeat N`` (or the other ``options`` given, each with its value)."""
    argv = list(argv)
    for option in options:
        if option in argv:
            at = argv.index(option)
            del argv[at : at + 2]
    return argv


def runs_apart(script: str, argv: Sequence[str], runs: int) -> list[dict]:
    """``script`` run ``runs`` times, each in a process of its own (``--repeat 1 --json
    FILE``), for a benchmark whose run sets Django up on a database of its own: the figures
    each run wrote. A run that wrote none (interrupted, broken) ends the series."""
    rest = positional(argv, ("--repeat", "--json"))
    found = []
    for run in range(runs):
        print(f"--- run {run + 1} of {runs}", flush=True)
        with tempfile.TemporaryDirectory() as folder:
            figures = Path(folder) / "figures.json"
            command = [sys.executable, script, *rest, "--repeat", "1", "--json", str(figures)]
            subprocess.run(command, check=False)
            if not figures.exists():
                break
            found.append(json.loads(figures.read_text()))
    return found


@contextmanager
def reported(title: str, *, runs: int | None = None, why_fewer: str = "") -> Iterator[None]:
    """Print ``title``, the commit and the load average before the block, the load average
    after it, and whether the figures between were measured at rest (load under 1.0)."""
    before = load_average()
    print(title)
    print(f"commit {commit()}; load average before {before:.2f} ({os.cpu_count()} CPUs)")
    if runs is not None and runs < RUNS:
        reason = f" ({why_fewer})" if why_fewer else ""
        print(f"{runs} run(s) per figure, fewer than {RUNS}{reason}: --repeat {RUNS} for a spread")
    print(flush=True)
    try:
        yield
    finally:
        after = load_average()
        verdict = (
            "at rest (under 1.0 before and after)"
            if max(before, after) < AT_REST
            else f"NOT at rest (load {AT_REST} or more): not an at-rest figure"
        )
        print(f"\nload average after {after:.2f} (before {before:.2f}): {verdict}", flush=True)


def timed(
    function: Callable[[], object], runs: int = RUNS, clock: Callable[[], float] = time.perf_counter
) -> list[float]:
    """Seconds of ``clock`` (wall-clock time by default) of ``runs`` calls of ``function``."""
    times = []
    for _ in range(runs):
        start = clock()
        function()
        times.append(clock() - start)
    return times


def spread(
    values: Sequence[float],
    *,
    unit: str = "s",
    scale: float = 1.0,
    digits: int = 2,
    of: str = "run",
) -> str:
    """``values`` as their median and range: "1.23 s (1.10-1.40, 5 runs)" (``of``: "run")."""
    if not values:
        return "no runs"
    ordered = sorted(v * scale for v in values)
    median = statistics.median(ordered)
    runs = f"{len(ordered)} {of}" + ("s" if len(ordered) != 1 else "")
    low, high = ordered[0], ordered[-1]
    return f"{median:.{digits}f} {unit} ({low:.{digits}f}-{high:.{digits}f}, {runs})".replace(
        "  ", " "
    )
