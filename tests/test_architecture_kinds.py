"""Only the rubric's kinds (``studies/rubric/``) read an answer's fields: everything else
asks the kind's class (``studies.rubric.KINDS``).

The code is read as a syntax tree, so every spelling of a read is seen: ``a.get("points")``,
``a["choice"]``, ``"items" in a``, ``a.pop("checked")``. The reads stay here, not in
rules/kinds.yml, because some dictionaries only share the words (``NOT_ANSWERS``, each with
its reason, each checked still to be there). Branching on a kind's name, in code and
templates, is rules/kinds.yml and scripts/check_templates.py (make lint), proved on
tests/rules_corpus/kinds.
"""

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = ["studies", "annotation", "agreement", "config"]
PACKAGE = ROOT / "studies" / "rubric"
# The fields of a stored answer that only its kind may read.
ANSWER_FIELDS = frozenset({"choice", "items", "checked", "points"})
READERS = frozenset({"get", "pop", "setdefault"})

# Dictionaries that are not answers but happen to use the same words, as the code reads
# them (whatever function they are in, so that moving or splitting one keeps its entry).
NOT_ANSWERS = {
    "gold['items']": "the gold-accuracy summary of a rater: a number of items",
    "pair['items']": "a comparison's item-level statistics in the report",
    "length['points']": "a chart's points in the report",
    "preference['points']": "a chart's points in the report",
}
# Request data, not answers: a form's posted fields.
REQUEST_DATA = frozenset({"POST", "GET"})


@dataclass(frozen=True)
class Finding:
    where: str  # "path:line"
    function: str  # the enclosing function's name, "" at module level
    code: str  # the offending expression as source

    def __str__(self):
        return f"{self.where} in {self.function or 'module'}: {self.code}"


def _constant(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _reads_answer_field(node) -> bool:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        receiver = node.func.value
        if isinstance(receiver, ast.Attribute) and receiver.attr in REQUEST_DATA:
            return False
        return (
            node.func.attr in READERS
            and bool(node.args)
            and _constant(node.args[0]) in ANSWER_FIELDS
        )
    if isinstance(node, ast.Subscript):
        return _constant(node.slice) in ANSWER_FIELDS
    if isinstance(node, ast.Compare):
        membership = any(isinstance(op, ast.In | ast.NotIn) for op in node.ops)
        return membership and _constant(node.left) in ANSWER_FIELDS
    return False


class _Reader(ast.NodeVisitor):
    """Walks a module, keeping the enclosing function's name for each finding."""

    def __init__(self, where: str, check):
        self.where, self.check = where, check
        self.function = ""
        self.found: list[Finding] = []

    def visit_FunctionDef(self, node):
        outer, self.function = self.function, node.name
        self.generic_visit(node)
        self.function = outer

    visit_AsyncFunctionDef = visit_FunctionDef

    def generic_visit(self, node):
        if self.check(node):
            code = ast.unparse(node.value if isinstance(node, ast.MatchValue) else node)
            self.found.append(Finding(f"{self.where}:{node.lineno}", self.function, code))
        super().generic_visit(node)


def findings(source: str, where: str, check) -> list[Finding]:
    """Every node of the source that ``check`` matches, with where it is."""
    reader = _Reader(where, check)
    reader.visit(ast.parse(source))
    return reader.found


def _outside_the_kinds(*, migrations: bool):
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if PACKAGE in path.parents or (not migrations and "migrations" in path.parts):
                continue
            yield path


def _found(check, *, migrations: bool) -> list[str]:
    return [
        str(finding)
        for path in _outside_the_kinds(migrations=migrations)
        for finding in findings(
            path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)), check
        )
        if finding.code not in NOT_ANSWERS
    ]


def test_no_module_reads_an_answers_fields_outside_the_kinds():
    # Migrations are history: one may need the answer shape of the day it runs.
    assert _found(_reads_answer_field, migrations=False) == []


def test_the_exceptions_are_still_there():
    # An exception that no longer matches anything would hide the next real read.
    seen = {
        finding.code
        for path in _outside_the_kinds(migrations=False)
        for finding in findings(path.read_text(encoding="utf-8"), str(path), _reads_answer_field)
    }
    assert set(NOT_ANSWERS) <= seen


# --- the checks' power: a planted sample with each violation is caught ----------------------

PLANTED_READS = """
def summary(answer, scores, key):
    a = answer.get("choice")
    b = scores[key]["points"]
    c = "items" in answer
    d = answer.pop("checked", None)
    e = answer.setdefault("points", 0)
    return a, b, c, d, e
"""


def test_the_answer_check_catches_every_spelling_of_a_read():
    found = findings(PLANTED_READS, "sample.py", _reads_answer_field)
    assert [f.code for f in found] == [
        "answer.get('choice')",
        "scores[key]['points']",
        "'items' in answer",
        "answer.pop('checked', None)",
        "answer.setdefault('points', 0)",
    ]
    assert {f.function for f in found} == {"summary"}


HARMLESS = """
def fine(request, answer, dimension, value, row):
    flagged = answer.get("flagged")
    text = row["name"]
    chosen = dimension.kind == value
    other = value.get(dimension.key)
    posted = request.POST.get("checked")
    return flagged, text, chosen, other, posted
"""


def test_the_check_leaves_other_reads_alone():
    assert findings(HARMLESS, "sample.py", _reads_answer_field) == []
