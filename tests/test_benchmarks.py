"""Every benchmark prints its figures through benchmarks/report.py: the commit, the load
average before and after, the median and spread of its runs. A script that reads the load or
the commit itself, or does not report through the module, fails here (nothing is measured)."""

import ast
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
# The shared module itself, and what the process benchmarks share (no figures of its own).
NOT_SCRIPTS = {"report.py", "processes.py", "http_settings.py"}
# What reads the load average or the commit: report.py's alone.
OWNED = {"getloadavg", "rev-parse"}


def problems(source: str) -> list[str]:
    """Why a benchmark's source breaks the rule, if it does."""
    tree = ast.parse(source)
    found = []
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module in ("benchmarks.report", "report")
        for alias in node.names
    }
    if "reported" not in imported:
        found.append("does not print through report.reported")
    if not imported & {"spread", "timed"}:
        found.append("summarises no runs with report.spread or report.timed")
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Attribute):
            name = node.attr
        elif isinstance(node, ast.Name):
            name = node.id
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            name = node.value
        if name in OWNED:
            found.append(f"reads {name} itself, line {node.lineno}")
    if "--repeat" not in source and "add_repeat" not in imported:
        found.append("takes no --repeat")
    return found


SCRIPTS = [
    pytest.param(p, id=p.name) for p in sorted(BENCHMARKS.glob("*.py")) if p.name not in NOT_SCRIPTS
]


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_benchmark_reports_through_the_shared_module(script):
    assert problems(script.read_text()) == []


PLANTED = """
import os, time
start = time.perf_counter()
print(f"load average {os.getloadavg()[0]:.1f}: {time.perf_counter() - start:.2f} s")
"""


def test_a_planted_script_with_its_own_load_and_one_run_fails():
    assert problems(PLANTED) == [
        "does not print through report.reported",
        "summarises no runs with report.spread or report.timed",
        "reads getloadavg itself, line 4",
        "takes no --repeat",
    ]


def test_a_script_that_reports_through_the_module_passes():
    source = (
        "from benchmarks.report import add_repeat, reported, spread, timed\n"
        "with reported('x', runs=5):\n"
        "    print(spread(timed(lambda: None, 5)))\n"
    )
    assert problems(source) == []
