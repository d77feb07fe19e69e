"""The structural rules (rules/*.yml, run by ast-grep, and scripts/check_templates.py) prove
their power on a corpus: tests/rules_corpus/<rule>/bad/ holds samples, each at the path it
pretends to have in the project (the rules' path filters read it), with every line the rule
must flag marked ``# flagged: <rule id>`` (``{# flagged: <rule id> #}`` in a template);
good/ holds samples no rule may flag. A rule that misses a marked line, or flags one that is
not marked, fails here. A violation that slips through review later joins bad/.
"""

import importlib.util
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "rules"
CORPUS = ROOT / "tests" / "rules_corpus"
AST_GREP = shutil.which("ast-grep", path=str(Path(ROOT / ".venv" / "bin"))) or shutil.which(
    "ast-grep"
)
MARK = re.compile(r"(?:#|\{#)\s*flagged:\s*([\w-]+)")
RULE_FILES = sorted(path.stem for path in RULES.glob("*.yml"))
# The template rules, checked by scripts/check_templates.py (no grammar for ast-grep).
TEMPLATE_RULES = {"lifecycle": "lifecycle-template", "kinds": "kinds-template"}


def _template_checker():
    spec = importlib.util.spec_from_file_location(
        "check_templates", ROOT / "scripts" / "check_templates.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rule_ids(rule: str) -> set[str]:
    documents = yaml.safe_load_all((RULES / f"{rule}.yml").read_text(encoding="utf-8"))
    return {document["id"] for document in documents if document}


def findings(samples: Path, tmp_path: Path) -> set[tuple[str, int, str]]:
    """(path, line, rule id) for every finding of every rule over a copy of ``samples``,
    laid out as a project of its own so that the rules' path filters apply."""
    project = tmp_path / "project"
    shutil.copytree(samples, project)
    (project / "sgconfig.yml").write_text(f"ruleDirs:\n  - {RULES}\n")
    result = subprocess.run(
        [AST_GREP, "scan", "--json=stream", "."],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode in (0, 1), result.stderr
    found = {
        (item["file"], item["range"]["start"]["line"] + 1, item["ruleId"])
        for item in map(json.loads, result.stdout.splitlines())
    }
    checker = _template_checker()
    for template in sorted(project.rglob("*.html")):
        text = template.read_text(encoding="utf-8")
        for line, rule, _ in checker.template_findings(text):
            found.add((str(template.relative_to(project)), line, rule))
    return found


def marked(samples: Path) -> set[tuple[str, int, str]]:
    return {
        (str(path.relative_to(samples)), number, match[1])
        for path in sorted(samples.rglob("*"))
        if path.is_file()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for match in MARK.finditer(line)
    }


def test_every_rule_has_a_corpus():
    assert RULE_FILES == ["kinds", "layers", "lifecycle", "writes"]
    for rule in RULE_FILES:
        bad = [p for p in (CORPUS / rule / "bad").rglob("*") if p.is_file()]
        good = [p for p in (CORPUS / rule / "good").rglob("*") if p.is_file()]
        assert len(bad) >= 3 and good, rule


@pytest.mark.parametrize("rule", RULE_FILES)
def test_the_rule_flags_every_marked_line_of_its_bad_samples_and_no_other(rule, tmp_path):
    samples = CORPUS / rule / "bad"
    ids = rule_ids(rule) | ({TEMPLATE_RULES[rule]} if rule in TEMPLATE_RULES else set())
    expected = marked(samples)
    assert expected, "the bad samples mark no line"
    assert {rule_id for _, _, rule_id in expected} <= ids, "a mark names another rule"
    # Each rule id of the file shows its power on at least one sample.
    assert {rule_id for _, _, rule_id in expected} == ids
    found = {item for item in findings(samples, tmp_path) if item[2] in ids}
    assert sorted(expected - found) == [], "missed"
    assert sorted(found - expected) == [], "flagged but not marked"


@pytest.mark.parametrize("rule", RULE_FILES)
def test_no_rule_flags_a_good_sample(rule, tmp_path):
    assert findings(CORPUS / rule / "good", tmp_path) == set()


def test_the_project_itself_is_clean(tmp_path):
    # What make lint runs: the rules over the apps and the template check over templates/.
    result = subprocess.run(
        [AST_GREP, "scan", "studies", "annotation", "agreement", "core", "jobs", "config"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout
    checker = _template_checker()
    assert [
        (str(path), line, rule)
        for path in sorted((ROOT / "templates").rglob("*.html"))
        for line, rule, _ in checker.template_findings(path.read_text(encoding="utf-8"))
    ] == []
