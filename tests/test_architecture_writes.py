"""The API never calls a page's view: it uses the services, forms and selectors.

Read from the code (an AST walk, relative imports resolved), so the next API endpoint that
borrows a view fails here; the check shows its power on planted samples. That every write
lives in its app's services package is rules/writes.yml (make lint), proved on
tests/rules_corpus/writes.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
APPS = ("studies", "annotation", "agreement", "config")


def is_view_module(path: Path) -> bool:
    """A page view: views.py, a module of a views/ package, or a *_views.py module."""
    return path.name == "views.py" or "views" in path.parts or path.stem.endswith("_views")


def is_api_module(path: Path) -> bool:
    # api.py, an api_*.py module beside it (api_accounts.py), or a module of an api/ package.
    return path.stem == "api" or path.stem.startswith("api_") or "api" in path.parts[:-1]


def is_admin_module(path: Path) -> bool:
    return path.name == "admin.py"


def modules(predicate) -> list[Path]:
    return sorted(
        path
        for app in APPS
        for path in (ROOT / app).rglob("*.py")
        if predicate(path.relative_to(ROOT))
    )


def imported_modules(source: str, *, package: str) -> set[str]:
    """Every module ``source`` imports (relative imports resolved against ``package``),
    with each imported name as a possible module too (``from . import views``)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def views_imported(source: str, *, package: str) -> list[str]:
    """The project's view modules ``source`` imports (or imports names from); a library's
    (``rest_framework.views``) is no page of ours."""
    return sorted(
        module
        for module in imported_modules(source, package=package)
        if module.split(".")[0] in APPS
        and any(part == "views" or part.endswith("_views") for part in module.split("."))
    )


def package_of(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])


def test_the_api_calls_no_view():
    offending = {
        str(path.relative_to(ROOT)): found
        for path in modules(is_api_module)
        if (found := views_imported(path.read_text(encoding="utf-8"), package=package_of(path)))
    }
    assert offending == {}, "the API uses the services, forms and selectors, never a view"


def test_the_check_reads_the_modules_it_is_meant_to():
    # The check would pass vacuously if the module lists were empty or wrong.
    views = {str(p.relative_to(ROOT)) for p in modules(is_view_module)}
    apis = {str(p.relative_to(ROOT)) for p in modules(is_api_module)}
    admins = {str(p.relative_to(ROOT)) for p in modules(is_admin_module)}
    assert {
        "agreement/views/statistics.py",
        "annotation/views/people.py",
        "agreement/views/report.py",
    } <= (views)
    assert {
        "studies/api.py",
        "annotation/api.py",
        "agreement/api.py",
        "studies/api_accounts.py",
        "agreement/api_qc.py",
    } <= apis
    assert {"studies/admin.py", "annotation/admin.py"} <= admins


PLANTED_IMPORTS = [
    "from .views.people import _invitation_form",
    "from .views import results as results_views",
    "from . import views",
    "from annotation.views.results import UnblindForm",
    "import agreement.views.report",
    "from ..report_views import report_page",
]


@pytest.mark.parametrize("line", PLANTED_IMPORTS)
def test_the_view_import_check_catches_a_planted_import(line):
    assert views_imported(line, package="annotation.api")


def test_the_view_import_check_leaves_forms_services_and_libraries_alone():
    source = (
        "from . import forms, selectors\nfrom studies.services import invitations\n"
        "from rest_framework.views import exception_handler\n"
    )
    assert views_imported(source, package="annotation") == []
