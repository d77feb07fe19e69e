"""The apps depend one way, studies <- annotation <- agreement, and the rules that one
module owns are not spelled out again elsewhere."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# An app may import those listed before it, never those after it.
LAYERS = ["studies", "annotation", "agreement"]


def imported_apps(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names & set(LAYERS)


def python_files(app: str):
    return sorted((ROOT / app).rglob("*.py"))


@pytest.mark.parametrize("app", LAYERS)
def test_an_app_imports_no_app_above_it(app):
    above = set(LAYERS[LAYERS.index(app) + 1 :])
    offending = {
        str(path.relative_to(ROOT)): sorted(imported_apps(path) & above)
        for path in python_files(app)
        if imported_apps(path) & above
    }
    assert offending == {}


def test_the_import_reader_sees_upward_imports(tmp_path):
    # The check above would pass vacuously if the reader missed imports.
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import agreement.tasks\nfrom annotation.models import Rating\n"
        "def f():\n    from agreement import services\n"
    )
    assert imported_apps(sample) == {"agreement", "annotation"}
