"""Fail `make lint` when a pin in pyproject.toml is missing from the lock files or differs
there: the image and `make` install from the locks, so a dependency added to pyproject.toml
alone would never be installed. `make lock` brings them back in step."""

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*==\s*([^\s;#]+)")


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(lines: list[str]) -> dict[str, str]:
    """``name -> version`` for each ``name[extras]==version`` line."""
    found = {}
    for line in lines:
        match = PIN.match(line)
        if match:
            found[normalized(match[1])] = match[2]
    return found


def out_of_step(wanted: dict[str, str], locked: dict[str, str], lock: str) -> list[str]:
    problems = []
    for name, version in sorted(wanted.items()):
        if name not in locked:
            problems.append(f"{name}=={version} is in pyproject.toml but not in {lock}")
        elif locked[name] != version:
            problems.append(f"{name}: pyproject.toml pins {version}, {lock} has {locked[name]}")
    return problems


def main() -> int:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = pins(project["dependencies"])
    dev = {**runtime, **pins(project["optional-dependencies"]["dev"])}
    problems = []
    for lock, wanted in (("requirements/runtime.txt", runtime), ("requirements/dev.txt", dev)):
        locked = pins((ROOT / lock).read_text().splitlines())
        problems += out_of_step(wanted, locked, lock)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        print("Run `make lock` and commit requirements/.", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
