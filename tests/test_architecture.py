"""The apps depend one way, core <- jobs <- studies <- annotation <- agreement, config sits
above them all, and the rules that one module owns are not spelled out again elsewhere."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# A package may import those listed before it, never those after it. ``core`` is the
# neutral plumbing (error base, API helpers); ``jobs`` (the job runner) imports no app.
LAYERS = ["core", "jobs", "studies", "annotation", "agreement"]
# The only modules of ``config`` that may import an app: the URLconfs, which route to the
# apps' views. Settings name app classes as strings, which imports nothing here.
CONFIG_URLCONFS = {"urls.py", "api_urls.py"}
# The pure statistics: numpy and scipy only, so they can be tested and benchmarked alone.
PURE_STATISTICS = "agreement/stats"


def imported_modules(path: Path) -> set[str]:
    """The absolute modules a file imports (relative imports stay inside its own package)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def imported_packages(path: Path) -> set[str]:
    return {name.split(".")[0] for name in imported_modules(path)}


def imported_apps(path: Path) -> set[str]:
    return imported_packages(path) & set(LAYERS)


def python_files(app: str, root: Path = ROOT):
    return sorted((root / app).rglob("*.py"))


def upward_imports(root: Path = ROOT) -> dict[str, list[str]]:
    """Each file that imports a package above its own, with those packages."""
    offending = {}
    for app in LAYERS:
        above = set(LAYERS[LAYERS.index(app) + 1 :])
        for path in python_files(app, root):
            if imported_apps(path) & above:
                offending[str(path.relative_to(root))] = sorted(imported_apps(path) & above)
    return offending


def config_importers(root: Path = ROOT) -> list[str]:
    """The files of the apps and core that import ``config``."""
    return [
        str(path.relative_to(root))
        for app in LAYERS
        for path in python_files(app, root)
        if "config" in imported_packages(path)
    ]


def config_app_imports(root: Path = ROOT) -> dict[str, list[str]]:
    """The modules of ``config``, other than its URLconfs, that import an app or core."""
    return {
        str(path.relative_to(root)): sorted(imported_apps(path))
        for path in python_files("config", root)
        if path.name not in CONFIG_URLCONFS and imported_apps(path) - {"core"}
    }


def impure_statistics(root: Path = ROOT) -> dict[str, list[str]]:
    """The modules of the pure statistics that import Django or an app (or config)."""
    impure = {"django", "rest_framework", "config", *LAYERS}
    found = {}
    for path in python_files(PURE_STATISTICS, root):
        outside = {
            name
            for name in imported_modules(path)
            if name.split(".")[0] in impure and not name.startswith("agreement.stats")
        }
        if outside:
            found[str(path.relative_to(root))] = sorted(outside)
    return found


def test_an_app_imports_no_app_above_it():
    assert upward_imports() == {}


def test_core_imports_no_app_and_not_config():
    imports = {
        str(path.relative_to(ROOT)): sorted(
            imported_packages(path) & {*LAYERS, "config"} - {"core"}
        )
        for path in python_files("core")
    }
    assert {path: names for path, names in imports.items() if names} == {}
    assert python_files("core"), "core/ has no modules: the check above saw nothing"


def test_no_app_imports_config():
    # Settings are read through django.conf.settings; shared plumbing lives in core.
    assert config_importers() == []


def test_config_imports_apps_only_in_its_urlconfs():
    assert config_app_imports() == {}


def test_the_pure_statistics_import_no_django():
    assert python_files(PURE_STATISTICS)
    assert impure_statistics() == {}


def test_the_layer_checks_catch_planted_violations(tmp_path):
    # Each check above would pass vacuously if it missed what it looks for.
    planted = {
        "core/errors.py": "from studies.models import Study\n",
        "studies/api.py": "from config.api import Pagination\n",
        "annotation/views.py": "def f():\n    import config.settings\n",
        "studies/models.py": "from agreement import services\n",
        "config/navigation.py": "from studies import access\n",
        "config/urls.py": "from annotation import views\nfrom core import throttle\n",
        "config/health.py": "from core import throttle\n",
        "agreement/stats/kappa.py": "from django.db import models\nfrom agreement.stats import x\n",
        "agreement/stats/ranking.py": "import numpy\nfrom .ratings import RatingData\n",
    }
    for name, text in planted.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert upward_imports(tmp_path) == {
        "core/errors.py": ["studies"],
        "studies/models.py": ["agreement"],
    }
    assert sorted(config_importers(tmp_path)) == ["annotation/views.py", "studies/api.py"]
    assert config_app_imports(tmp_path) == {"config/navigation.py": ["studies"]}
    assert impure_statistics(tmp_path) == {"agreement/stats/kappa.py": ["django.db"]}


def test_the_import_reader_sees_upward_imports(tmp_path):
    # The check above would pass vacuously if the reader missed imports.
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import agreement.tasks\nfrom annotation.models import Rating\n"
        "def f():\n    from agreement import services\n"
    )
    assert imported_apps(sample) == {"agreement", "annotation"}
    sample.write_text("from core.errors import ApplicationError\nimport jobs.runner as runner\n")
    assert imported_apps(sample) == {"core", "jobs"}


# A module past this many lines is usually two ideas (docs/style.md); the apps' modules were
# split by concept to stay under it. Migrations are generated history, not read as modules.
MAX_MODULE_LINES = 600


def oversized_modules(root: Path = ROOT) -> dict[str, int]:
    """The modules of core, jobs, the apps and config longer than ``MAX_MODULE_LINES``."""
    found = {}
    for package in [*LAYERS, "config"]:
        for path in python_files(package, root):
            if "migrations" in path.parts:
                continue
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > MAX_MODULE_LINES:
                found[str(path.relative_to(root))] = lines
    return found


def test_no_module_is_over_the_size_limit():
    assert oversized_modules() == {}


def test_the_size_check_catches_a_long_module(tmp_path):
    (tmp_path / "annotation" / "services").mkdir(parents=True)
    (tmp_path / "annotation" / "migrations").mkdir(parents=True)
    (tmp_path / "annotation" / "services" / "long.py").write_text("x = 1\n" * 601)
    (tmp_path / "annotation" / "services" / "short.py").write_text("x = 1\n" * 600)
    (tmp_path / "annotation" / "migrations" / "0001_initial.py").write_text("x = 1\n" * 900)
    assert oversized_modules(tmp_path) == {"annotation/services/long.py": 601}
