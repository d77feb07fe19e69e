"""Checks for the self-check page: places where a rater may have counted inconsistently.

Plain Python over a rater's submitted scores, so it can be tested alone. The checks follow
the validator instructions: count with the same granularity across cases, and
double-check a large gap between the responses of one case ("calibrate on outliers").
"""

import re
from collections import defaultdict
from dataclasses import dataclass

# A gap between two responses of one case this large (as a share of the maximum total)
# is pointed out for a second look.
GAP_SHARE = 0.4


@dataclass(frozen=True)
class Entry:
    """One response as the rater scored it."""

    case: str
    label: str  # as shown to the rater
    scores: dict
    total: int | None  # None: a part unanswered, no total (studies.rubric.totals)


@dataclass(frozen=True)
class Finding:
    kind: str  # "weight", "duplicate", "two-dimensions" or "gap"
    case: str
    message: str


def normalise(text: str) -> str:
    """Item text compared loosely: case, spacing and surrounding punctuation ignored."""
    text = re.sub(r"\s+", " ", text.lower()).strip()
    return text.strip(" .,;:!?-–—\"'()[]")


def _items(entry: Entry, dimension) -> list[tuple[str, bool]]:
    """What the rater listed for a dimension, as its kind reads it: (text, half-weight)."""
    return dimension.listed_items(entry.scores.get(dimension.key))


def find_inconsistencies(*, entries: list[Entry], counted: list, max_total: int) -> list[Finding]:
    """Findings in case order; ``counted`` are the rubric's kinds that list items."""
    findings = _weight_findings(entries, counted)
    for entry in entries:
        findings += _entry_findings(entry, counted)
    findings += _gap_findings(entries, max_total)
    # A stable sort: within a case, findings keep the order they were found in.
    order = {entry.case: index for index, entry in enumerate(entries)}
    return sorted(findings, key=lambda f: order.get(f.case, 0))


def _weight_findings(entries: list[Entry], counted: list) -> list[Finding]:
    """The same item counted at full weight in one place and at half weight in another."""
    findings = []
    for dimension in counted:
        name = dimension.name
        weights = defaultdict(lambda: {False: [], True: []})
        for entry in entries:
            for text, half in _items(entry, dimension):
                weights[normalise(text)][half].append(f"{entry.case} {entry.label}")
        for text, by_weight in weights.items():
            if by_weight[False] and by_weight[True]:
                first = by_weight[False][0].split()[0]
                findings.append(
                    Finding(
                        "weight",
                        first,
                        f"{name}: “{text}” counted in full in {', '.join(by_weight[False])} "
                        f"but at half weight in {', '.join(by_weight[True])}.",
                    )
                )
    return findings


def _entry_findings(entry: Entry, counted: list) -> list[Finding]:
    """One response's items listed twice in a dimension, then those counted in two."""
    names = {dimension.key: dimension.name for dimension in counted}
    where = f"{entry.case} Response {entry.label}"
    findings = []
    seen_in = defaultdict(list)
    for dimension in counted:
        texts = [normalise(text) for text, _ in _items(entry, dimension)]
        for text in sorted({t for t in texts if texts.count(t) > 1}):
            findings.append(
                Finding(
                    "duplicate",
                    entry.case,
                    f"{where}, {dimension.name}: “{text}” is listed twice.",
                )
            )
        for text in set(texts):
            seen_in[text].append(dimension.key)
    for text, keys in seen_in.items():
        if len(keys) > 1:
            listed = " and ".join(names[k] for k in keys)
            findings.append(
                Finding(
                    "two-dimensions",
                    entry.case,
                    f"{where}: “{text}” is counted under both {listed}; check this is intended.",
                )
            )
    return findings


def _gap_findings(entries: list[Entry], max_total: int) -> list[Finding]:
    """Cases whose highest and lowest response totals are far apart."""
    if not max_total:
        return []
    by_case = defaultdict(list)
    for entry in entries:
        if entry.total is not None:  # a response without a total has no gap to show
            by_case[entry.case].append(entry)
    findings = []
    for case, group in by_case.items():
        if len(group) < 2:
            continue
        high = max(group, key=lambda e: e.total)
        low = min(group, key=lambda e: e.total)
        if high.total - low.total >= GAP_SHARE * max_total:
            findings.append(
                Finding(
                    "gap",
                    case,
                    f"{case}: Response {high.label} scored {high.total} and Response "
                    f"{low.label} {low.total}. Double-check that the rubric criteria support "
                    "a gap this large.",
                )
            )
    return findings
