"""The docs hold the map true: every relative link of README.md and docs/*.md leads to a file
(and, into a page, to one of its headings), every path they name (`studies/locks.py`,
`rules/layers.yml`) exists, and every dotted name of an app (`studies.signals`,
`agreement.stats`) is a module, or a name its module defines. A module moved or renamed
fails here until the docs follow it."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ("core", "jobs", "studies", "annotation", "agreement", "config")

LINK = re.compile(r"\]\(([^)\s]+)\)")
# A path with at least one folder and a file's extension: `studies/services/cases.py`.
PATH = re.compile(
    r"(?<![\w/.<>{}$-])((?:\.?[\w-]+/)+[\w.-]+\."
    r"(?:py|md|yml|yaml|html|js|css|txt|toml|ini|cfg|csv|jsonl|json|xlsx|sh))\b"
)
# A dotted name of an app in backticks: `studies.signals`, `studies.services.TRANSITIONS`.
DOTTED = re.compile(r"`((?:" + "|".join(APPS) + r")(?:\.\w+)+)`")
HEADING = re.compile(r"^#{1,6} (.+?)\s*#*$", re.MULTILINE)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def docs(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces
    to hyphens, a repeated one numbered."""
    seen: dict[str, int] = {}
    found = set()
    for title in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        title = re.sub(r"[`*_]|\[|\]\([^)]*\)", "", title)
        slug = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def _module_file(root: Path, parts: list[str]) -> Path | None:
    base = root.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def dotted_name_exists(root: Path, dotted: str) -> bool:
    """The longest prefix that is a module, and the next part (if any) defined or imported
    in it. `studies.BlindedLabel` is Django's app label and model: a class of the app's
    models."""
    parts = dotted.split(".")
    if len(parts) == 2 and parts[1][:1].isupper() and _module_file(root, parts) is None:
        models = root / parts[0] / "models"
        sources = [*models.glob("*.py"), root / parts[0] / "models.py"]
        return any(
            re.search(rf"^class {parts[1]}\b", source.read_text(encoding="utf-8"), re.MULTILINE)
            for source in sources
            if source.is_file()
        )
    for cut in range(len(parts), 0, -1):
        module = _module_file(root, parts[:cut])
        if module is None:
            continue
        if cut == len(parts):
            return True
        name = parts[cut]
        return re.search(rf"\b{re.escape(name)}\b", module.read_text(encoding="utf-8")) is not None
    return False


def _is_code_name(root: Path, dotted: str) -> bool:
    """A module's file name (`jobs.py`) is a path, and two lower-case words that are no
    module of the app (`agreement.recomputed`, a webhook event) are not code; longer dotted
    names, and an app with a capitalised name, are."""
    parts = dotted.split(".")
    if parts[-1] in {"py", "md", "yml", "html", "js", "txt", "json", "csv"}:
        return False
    if len(parts) == 2 and not parts[1][:1].isupper():
        return _module_file(root, parts) is not None
    return True


def broken(root: Path = ROOT) -> list[str]:
    problems = []
    for page in docs(root):
        text = page.read_text(encoding="utf-8")
        where = page.relative_to(root)
        for target in LINK.findall(text):
            if re.match(r"^(https?:|mailto:)", target):
                continue
            file_part, _, anchor = target.partition("#")
            linked = (page.parent / file_part) if file_part else page
            if not linked.exists():
                problems.append(f"{where}: link to {target}: no such file")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                problems.append(f"{where}: link to {target}: no such heading")
        for path in PATH.findall(LINK.sub("]()", text)):
            if not ((root / path).exists() or (page.parent / path).exists()):
                problems.append(f"{where}: names {path}, which does not exist")
        for dotted in DOTTED.findall(text):
            if not _is_code_name(root, dotted):
                continue
            if not dotted_name_exists(root, dotted):
                problems.append(f"{where}: names {dotted}, which is no module or name of one")
    return problems


def test_every_link_path_and_module_the_docs_name_exists():
    assert broken() == []


def test_the_check_catches_a_broken_link_a_missing_module_and_a_lost_heading(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "studies" / "services").mkdir(parents=True)
    (tmp_path / "studies" / "__init__.py").write_text("")
    (tmp_path / "studies" / "services" / "__init__.py").write_text("from .lifecycle import X\n")
    (tmp_path / "studies" / "locks.py").write_text("ORDER = []\n")
    (tmp_path / "studies" / "models").mkdir()
    (tmp_path / "studies" / "models" / "cases.py").write_text("class BlindedLabel:\n    pass\n")
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n\n## Set up\n\ntext\n")
    (tmp_path / "README.md").write_text(
        "# Concord\n\n"
        "[the guide](docs/guide.md#set-up), [gone](docs/gone.md), [lost](docs/guide.md#run)\n"
        "`studies/locks.py` is there, `studies/services/cases.py` is not.\n"
        "`studies.locks.ORDER`, `studies.services.X` and `studies.BlindedLabel` are, "
        "`studies.locks.SHAPE`, `studies.services.signals.Y` and `studies.Blinding` are not; "
        "`study.closed` and `locks.py` are no code.\n"
    )
    assert broken(tmp_path) == [
        "README.md: link to docs/gone.md: no such file",
        "README.md: link to docs/guide.md#run: no such heading",
        "README.md: names studies/services/cases.py, which does not exist",
        "README.md: names studies.locks.SHAPE, which is no module or name of one",
        "README.md: names studies.services.signals.Y, which is no module or name of one",
        "README.md: names studies.Blinding, which is no module or name of one",
    ]
