"""A study's status is asked through the lifecycle's predicates (``Study.is_draft``,
``is_open``, ``is_unblinded``, ...), never by comparing statuses: the model and the
lifecycle services own what each status means."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = ["studies", "annotation", "agreement", "config"]
# The owners of the statuses' meaning: the model's predicates and the transitions table.
OWNERS = {Path("studies/models/study.py"), Path("studies/services/lifecycle.py")}
STATUSES = {"DRAFT": "draft", "PILOT": "pilot", "OPEN": "open", "CLOSED": "closed"}
STATUSES["UNBLINDED"] = "unblinded"
# Calls whose keyword arguments are lookups: ``filter(status=Study.Status.DRAFT)``.
LOOKUP_CALLS = {"filter", "exclude", "get", "Q"}
LOOKUP = re.compile(r"(^|__)status(__in)?$")
TEMPLATE_COMPARISON = re.compile(r"""study\.status\s*(==|!=|\bin\b|\bnot in\b)""")


def _terminal(node: ast.expr) -> str:
    """The last name of ``a.b.c`` (``c``), or of ``c``; "" for anything else."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def _is_study_status(node: ast.expr) -> bool:
    """``Study.Status.OPEN``, ``study.Status.OPEN``, ``self.study.Status.OPEN`` or a bare
    ``Status.OPEN``; not another model's ``Assignment.Status.DRAFT``."""
    if not (isinstance(node, ast.Attribute) and node.attr in STATUSES):
        return False
    holder = node.value
    if isinstance(holder, ast.Name):
        return holder.id == "Status"
    if isinstance(holder, ast.Attribute) and holder.attr == "Status":
        return _terminal(holder.value).lower() == "study"
    return False


def _is_study_status_text(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value in STATUSES.values()


def _is_study_status_field(node: ast.expr) -> bool:
    """``study.status``, ``rater.study.status``: the status of something named a study."""
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "status"
        and _terminal(node.value).lower() == "study"
    )


def _members(node: ast.expr) -> list[ast.expr]:
    """The operand, or each element of a tuple, list or set operand."""
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return list(node.elts)
    return [node]


def _compares_status(node: ast.Compare) -> bool:
    operands = [node.left, *node.comparators]
    members = [member for operand in operands for member in _members(operand)]
    if any(_is_study_status(member) for member in members):
        return True
    return any(_is_study_status_field(o) for o in operands) and any(
        _is_study_status_text(member) for member in members
    )


def _looks_up_status(node: ast.Call) -> bool:
    if _terminal(node.func) not in LOOKUP_CALLS:
        return False
    return any(
        keyword.arg
        and LOOKUP.search(keyword.arg)
        and any(_is_study_status(inner) for inner in ast.walk(keyword.value))
        for keyword in node.keywords
    )


def status_comparisons(source: str) -> list[int]:
    """The lines of ``source`` that compare a study's status or look it up by status."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Compare) and _compares_status(node)) or (
            isinstance(node, ast.Call) and _looks_up_status(node)
        ):
            found.append(node.lineno)
    return sorted(found)


def _checked_modules():
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if relative not in OWNERS and "migrations" not in relative.parts:
                yield relative, path


def test_no_module_compares_a_study_status_outside_the_lifecycle():
    found = [
        f"{relative}:{line}"
        for relative, path in _checked_modules()
        for line in status_comparisons(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_no_template_compares_a_study_status():
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "templates").rglob("*.html"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if TEMPLATE_COMPARISON.search(line)
    ]
    assert found == []


def test_the_checks_see_a_planted_comparison():
    # The checks above would pass vacuously if the reader missed comparisons.
    planted = """\
from studies.models import Study
from studies.models import Study as S

def f(study, rater, qs):
    a = study.status == Study.Status.UNBLINDED
    b = study.status != study.Status.DRAFT
    c = rater.study.status in (Study.Status.DRAFT, Study.Status.PILOT)
    d = Study.Status.CLOSED is study.status
    e = study.status == "unblinded"
    g = qs.exclude(status=Study.Status.DRAFT)
    h = qs.filter(study__status__in=[Study.Status.OPEN])
    i = study.status not in {Status.OPEN}
"""
    assert status_comparisons(planted) == [5, 6, 7, 8, 9, 10, 11, 12]
    assert TEMPLATE_COMPARISON.search('{% if study.status == "closed" %}')


def test_the_checks_leave_other_statuses_and_writes_alone():
    allowed = """\
def f(study, assignment, rater, qs):
    study.status = Study.Status.OPEN
    a = assignment.status == Assignment.Status.DRAFT
    b = rater.status != Membership.Status.ACTIVE
    c = study.is_unblinded
    d = qs.filter(status=Assignment.Status.SUBMITTED)
    e = action == "open"
"""
    assert status_comparisons(allowed) == []
    assert not TEMPLATE_COMPARISON.search('{% if assignment.status == "draft" %}')
