"""The template half of the lifecycle and kinds rules (rules/README.md): no `{% if %}` or
`{% elif %}` compares a status or a rubric kind's name with a literal, in either order and
with any operator (`==`, `!=`, `in`, `not in`). A template asks the model's predicate
(`study.is_open`) or renders the kind's own template instead.

ast-grep has no grammar for Django templates, so this reads them with Django's own lexer:
the tag's contents split as Django splits them, quotes and filters included. Run by `make
lint`; `python scripts/check_templates.py [paths]` prints `path:line: rule: tag` for each
finding and exits 1 if there is one.
"""

import re
import sys
from collections.abc import Iterator
from pathlib import Path

from django.template.base import Lexer, Token, TokenType

ROOT = Path(__file__).resolve().parents[1]
STATUSES = ("draft", "pilot", "open", "closed", "unblinded")
KINDS = ("counted", "checklist", "scale", "categorical", "pairwise")
OPERATORS = {"==", "!=", "in", "not in", "is", "is not"}
# What is compared: a study's (or anything's) status, its display, or a kind.
SUBJECTS = {
    "lifecycle-template": re.compile(r"(^|\.|_)(status|get_status_display)$"),
    "kinds-template": re.compile(r"(^|\.|_)kind$"),
}
WORDS = {
    "lifecycle-template": re.compile(rf"\b({'|'.join(STATUSES)})\b", re.IGNORECASE),
    "kinds-template": re.compile(rf"\b({'|'.join(KINDS)})\b", re.IGNORECASE),
}


def _operand(bit: str) -> str:
    """A variable without its filters (``study.status|lower`` -> ``study.status``)."""
    return bit.split("|", 1)[0]


def _literal(bit: str) -> str | None:
    """The text of a quoted literal (filters dropped), or None for a variable."""
    value = _operand(bit)
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    if value.startswith("_(") and value.endswith(")"):  # _("Open"), a translated literal
        return _literal(value[2:-1])
    return None


def _comparisons(bits: list[str]) -> Iterator[tuple[str, str]]:
    """The operand pairs of each comparison in an if tag's bits (``not in`` is two bits)."""
    index = 1
    while index < len(bits):
        operator = bits[index]
        width = 1
        if operator in {"not", "is"} and index + 1 < len(bits) and bits[index + 1] in {"in", "not"}:
            operator, width = f"{operator} {bits[index + 1]}", 2
        if operator in OPERATORS and index + width < len(bits):
            yield bits[index - 1], bits[index + width]
        index += width


def tag_findings(contents: str) -> list[str]:
    """The rules an ``if``/``elif`` tag's contents break (``if study.status == "open"``)."""
    bits = Token(TokenType.BLOCK, contents).split_contents()
    if not bits or bits[0] not in {"if", "elif"}:
        return []
    found = []
    for left, right in _comparisons(bits):
        for rule, subject in SUBJECTS.items():
            for variable, other in ((left, right), (right, left)):
                text = _literal(other)
                if (
                    _literal(variable) is None
                    and subject.search(_operand(variable))
                    and text is not None
                    and WORDS[rule].search(text)
                ):
                    found.append(rule)
    return sorted(set(found))


def template_findings(text: str) -> list[tuple[int, str, str]]:
    """``(line, rule, tag)`` for each comparison in a template's text."""
    return [
        (token.lineno, rule, token.contents)
        for token in Lexer(text).tokenize()
        if token.token_type == TokenType.BLOCK
        for rule in tag_findings(token.contents)
    ]


def main(paths: list[str]) -> int:
    roots = [Path(p) for p in paths] or [ROOT / "templates"]
    files = sorted(f for r in roots for f in ([r] if r.is_file() else r.rglob("*.html")))
    problems = [
        f"{path}:{line}: {rule}: {{% {tag} %}}"
        for path in files
        for line, rule, tag in template_findings(path.read_text(encoding="utf-8"))
    ]
    print("\n".join(problems) or f"check_templates: {len(files)} templates, no finding")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
