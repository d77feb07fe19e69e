"""One rule for the raters' majority of a preference (``aggregation.preference_majority``),
asked by the report's per-case preference and by the judges' calibration alike.

The code is read as a syntax tree: a function named for a majority outside the rule's
module, the rule's formula (a sign of a sum of signs) written again, or a count of votes
over (-1, 0, 1) is a second copy, and fails here."""

import ast
import math
from pathlib import Path

import numpy as np

from agreement.analysis.aggregation import aggregate, preference_majority
from agreement.analysis.roles import MAJORITY

NAN = math.nan
ROOT = Path(__file__).resolve().parents[2]
APPS = ["agreement", "annotation", "studies", "core", "jobs"]
OWNER = Path("agreement/analysis/aggregation.py")
# Who must ask the rule rather than decide a majority of sides themselves: the report's
# per-case preference, the judges' calibration, and the confidence check (a rater against
# the majority of the case's other raters).
ASKERS = [
    OWNER,
    Path("agreement/judges/calibration.py"),
    Path("agreement/analysis/confidence.py"),
]


def test_ties_choose_no_side_and_a_balance_is_a_tie():
    # Raters x cases. Case 0: tie, tie, first -> first (-1): a tie chooses neither side.
    # Case 1: first, second, tie -> balanced -> 0. Case 2: second, missing -> +1.
    # Case 3: tie, tie -> 0. Case 4: nobody -> NaN.
    votes = np.array([[0, -1, 2, 0, NAN], [0, 1, NAN, 0, NAN], [-1, 0, NAN, NAN, NAN]], dtype=float)
    result = preference_majority(votes)
    np.testing.assert_array_equal(result[:4], [-1.0, 0.0, 1.0, 0.0])
    assert np.isnan(result[4])
    # The report's per-case preference under the plan's "majority" rule is the same label.
    report = aggregate(votes, rule=MAJORITY, min_ratings=1, sides=True)
    np.testing.assert_array_equal(report.labels[:4], result[:4])


def _copies(source: str, path: str) -> list[str]:
    """Where ``source`` decides a majority of sides itself: a function named for a
    majority, a sign of a sum of signs (or of a sum's difference, as a leave-one-out
    majority), or a loop or comprehension over (-1, 0, 1)."""
    found = []
    tree = ast.parse(source)
    # Names bound to a sum (``total = np.nansum(signs, axis=0)``): a sign of one is a sign
    # of a sum, however the sum was spelled apart.
    sums = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and _is_sum(node.value)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and "majority" in node.name.lower():
            found.append(f"{path}:{node.lineno} defines {node.name}")
        if _is_sign(node) and _sums_signs(node.args[0], sums):
            found.append(f"{path}:{node.lineno} a sign of a sum of signs")
        if isinstance(node, ast.For | ast.comprehension) and _is_three_sides(node.iter):
            found.append(f"{path}:{node.iter.lineno} counts votes over (-1, 0, 1)")
    return found


def _name(node) -> str:
    func = node.func if isinstance(node, ast.Call) else None
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _is_sign(node) -> bool:
    return isinstance(node, ast.Call) and _name(node) == "sign" and bool(node.args)


def _is_sum(node) -> bool:
    return isinstance(node, ast.Call) and _name(node) in {"sum", "nansum"}


def _sums_signs(node, sums: set[str]) -> bool:
    """Whether ``node`` holds a sum (a call, or a name bound to one) of signs or of
    anything: the outer sign of such a sum is the majority's formula."""
    for inner in ast.walk(node):
        if _is_sum(inner) and any(_is_sign(s) for s in ast.walk(inner)):
            return True
        if isinstance(inner, ast.Name) and inner.id in sums:
            return True
    return False


def _is_three_sides(node) -> bool:
    if not isinstance(node, ast.Tuple | ast.List):
        return False
    values = []
    for element in node.elts:
        if isinstance(element, ast.UnaryOp) and isinstance(element.op, ast.USub):
            element = ast.Constant(-element.operand.value)  # type: ignore[attr-defined]
        if not isinstance(element, ast.Constant):
            return False
        values.append(element.value)
    return sorted(values) == [-1, 0, 1]


def test_no_module_but_the_owner_decides_a_majority_of_sides():
    found = []
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if relative != OWNER and "migrations" not in relative.parts:
                found += _copies(path.read_text(), str(relative))
    assert found == [], "\n".join(found)


def test_the_check_finds_a_planted_copy():
    planted = """
def human_majority(preferences):
    signs = np.sign(preferences)
    votes = np.stack([(signs == value).sum(axis=0) for value in (-1, 0, 1)])
    return votes.argmax(axis=0)

def case_side(values):
    return np.sign(np.nansum(np.sign(values), axis=0))

def others_side(signs, r):
    total = np.nansum(signs, axis=0)
    return np.sign(total - np.nan_to_num(signs[r]))
"""
    found = _copies(planted, "planted.py")
    assert any("defines human_majority" in f for f in found)
    assert any("counts votes over (-1, 0, 1)" in f for f in found)
    assert [f for f in found if "a sign of a sum of signs" in f] == [
        "planted.py:8 a sign of a sum of signs",
        "planted.py:12 a sign of a sum of signs",
    ]


def test_the_report_and_the_calibration_ask_the_rule():
    for path in ASKERS:
        tree = ast.parse((ROOT / path).read_text())
        calls = {_name(node) for node in ast.walk(tree) if isinstance(node, ast.Call)}
        assert "preference_majority" in calls, path
