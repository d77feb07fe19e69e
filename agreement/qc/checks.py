"""Quality-control checks per rater (no Django here; numpy and scipy are imported by the
checks that compute, so that the QC page, which reads the thresholds, loads neither).

The rules follow the human-evaluation protocol template (section 8): gold items (QC-001),
attention checks (QC-002), time per item (QC-003), position bias (QC-004), agreement with
peers (QC-005), plus straight-lining and confidence against correctness on gold items. A
flag is a reason for an administrator to look; the one automatic consequence is the pause
of QC-001 (``gold_check``'s "pause"), and reinstating is always an administrator's decision.
"""

import math
import statistics
from dataclasses import dataclass
from typing import NamedTuple

MIN_MEDIAN_SECONDS = 20
POSITION_BIAS_SHARE = 0.70
POSITION_BIAS_MIN_CASES = 6
POSITION_ALPHA = 0.05
PEER_GAP = 0.10
# Time per item on the QC page: the lower edge of each bar, in seconds.
TIME_BINS = (0, 10, 20, 40, 80, 160, 320)
STRAIGHT_LINE_ITEMS = 10
GOLD_PASS_SHARE = 0.70
GOLD_MINIMUM = 5
ATTENTION_MISSES = 2


@dataclass(frozen=True)
class Rules:
    """A study's thresholds (its ``QualitySettings``); the protocol template's by default."""

    min_median_seconds: float = MIN_MEDIAN_SECONDS
    position_share: float = POSITION_BIAS_SHARE
    position_alpha: float = POSITION_ALPHA
    straight_line_items: int = STRAIGHT_LINE_ITEMS
    gold_pass_share: float = GOLD_PASS_SHARE
    gold_minimum: int = GOLD_MINIMUM
    attention_misses: int = ATTENTION_MISSES


def binomial_two_sided_p(successes: int, n: int, p: float = 0.5) -> float:
    """Exact two-sided binomial test: the probability, under ``p``, of an outcome no more
    likely than the one observed (the "minimum likelihood" method)."""
    import numpy as np
    from scipy.special import gammaln

    if n == 0:
        return 1.0
    # In logarithms: a binomial coefficient of a few thousand cases overflows a float.
    k = np.arange(n + 1)
    log_pmf = (
        gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)
        + k * math.log(p) + (n - k) * math.log1p(-p)
    )  # fmt: skip
    probabilities = np.exp(log_pmf)
    observed = probabilities[successes]
    # A relative tolerance, so outcomes equally likely in exact arithmetic count as such.
    return min(1.0, float(probabilities[probabilities <= observed * (1 + 1e-7)].sum()))


class CaseRecord(NamedTuple):
    """One submitted case of one rater: active seconds and each response's total, by
    the position it was shown in (0 = shown first). A named tuple: a study has one per
    submitted case, built on every recompute."""

    rater: str
    active_seconds: int
    totals_by_position: tuple[float, ...]
    # False for answers recorded off screen (an imported worksheet): no time was measured.
    timed: bool = True
    # Pairwise studies: whether the preference went to the response shown first (None for a
    # tie or no preference); the position rule reads this instead of the totals.
    first_preferred: bool | None = None


def rater_checks(
    *,
    cases: list[CaseRecord],
    agreement: dict | None,
    rules: Rules | None = None,
    answers: dict[str, dict[str, list[float]]] | None = None,
) -> dict:
    """{pseudonym: {"cases", "median_seconds", "untimed", "first_preferred", "decided",
    "position_p", "position_basis", "peer_gaps", "straight_lines", "flags": [...]}} for
    every rater with a submitted case.

    ``answers`` holds each rater's answers per dimension (for straight-lining), as
    ``answer_values`` reads them from the agreement data. Time per case is judged on timed
    cases only: a case imported from a worksheet has no
    measured time, so it is counted in "untimed" and never makes the median look fast.
    """
    rules = rules or Rules()
    by_rater: dict[str, list[CaseRecord]] = {}
    for case in cases:
        by_rater.setdefault(case.rater, []).append(case)
    per_rater_agreement = _peer_gaps(agreement or {})
    checks = {}
    for rater, records in sorted(by_rater.items()):
        timed = [r.active_seconds for r in records if r.timed]
        median_seconds = statistics.median(timed) if timed else None
        flags = []
        if median_seconds is not None and median_seconds < rules.min_median_seconds:
            flags.append(
                f"median time per case {median_seconds:.0f} s (under "
                f"{rules.min_median_seconds:.0f} s)"
            )
        position = _position(records, rules)
        if position["flag"]:
            flags.append(position["flag"])
        straight = straight_lines((answers or {}).get(rater, {}), items=rules.straight_line_items)
        flags.extend(straight)
        gaps = per_rater_agreement.get(rater, [])
        if gaps:
            names = ", ".join(name for name, _ in gaps)
            flags.append(f"the group agrees clearly better without this rater on {names}")
        checks[rater] = {
            "cases": len(records),
            "median_seconds": median_seconds,
            "untimed": len(records) - len(timed),
            "time_bins": [
                sum(1 for t in timed if low <= t < high)
                for low, high in zip(TIME_BINS, (*TIME_BINS[1:], math.inf), strict=True)
            ],
            "first_preferred": position["share"],
            "decided": position["n"],
            "position_p": position["p"],
            "position_basis": position["basis"],
            "peer_gaps": [{"dimension": name, "gap": gap} for name, gap in gaps],
            "straight_lines": straight,
            "flags": flags,
        }
    return checks


def _position(records: list[CaseRecord], rules: Rules) -> dict:
    """Position bias (QC-004): the preference itself where the study has one, else totals.

    Flags a share of first-shown choices above the threshold (either side) whose two-sided
    binomial test against 50% is significant at the study's alpha; reports n and p.
    """
    if any(r.first_preferred is not None for r in records):
        basis = "preference"
        choices = [r.first_preferred for r in records if r.first_preferred is not None]
    else:
        basis = "totals"
        # A response without a total (a part unanswered) decides nothing: NaN is no total.
        decided = [
            r
            for r in records
            if len(r.totals_by_position) >= 2
            and not any(math.isnan(t) for t in r.totals_by_position[:2])
            and r.totals_by_position[0] != r.totals_by_position[1]
        ]
        choices = [r.totals_by_position[0] > r.totals_by_position[1] for r in decided]
    n = len(choices)
    first = sum(1 for c in choices if c)
    share = first / n if n else None
    p = binomial_two_sided_p(first, n) if n else None
    flag = ""
    biased = share is not None and max(share, 1 - share) > rules.position_share
    if biased and n >= POSITION_BIAS_MIN_CASES and p < rules.position_alpha:
        side = "first" if share > 0.5 else "second"
        flag = (
            f"prefers the response shown {side} in {max(share, 1 - share):.0%} of "
            f"{n} cases (binomial p = {p:.3f})"
        )
    return {"share": share, "n": n, "p": p, "basis": basis, "flag": flag}


def answer_values(raters: list[str], dimensions) -> dict[str, dict[str, list[float]]]:
    """{rater: {dimension name: their answers}} from the agreement matrices (raters x
    units, NaN where nothing was answered), in unit order."""
    import numpy as np

    values: dict[str, dict[str, list[float]]] = {rater: {} for rater in raters}
    for dimension in dimensions:
        for index, rater in enumerate(raters):
            row = dimension.matrix[index]
            values[rater][dimension.name] = row[~np.isnan(row)].tolist()
    return values


def straight_lines(values: dict[str, list[float]], *, items: int) -> list[str]:
    """Identical answers on every item, or no variation on a dimension across ``items``."""
    constant = {name: seen for name, seen in values.items() if len(set(seen)) == 1}
    counts = [len(seen) for seen in values.values() if seen]
    if counts and len(constant) == len(counts) and max(counts) >= items:
        return [f"identical answers on every item ({max(counts)} answers per dimension)"]
    return [
        f"no variation on {name} across {len(seen)} answers"
        for name, seen in constant.items()
        if len(seen) >= items
    ]


@dataclass(frozen=True)
class QualityAnswer:
    """One submitted gold item or attention check of one rater, checked against its key."""

    rater: str
    case: str
    purpose: str  # "gold" or "attention"
    submitted_at: str  # ISO time, for the order and the window since a reinstatement
    met: int  # expected answers met
    expected: int  # expected answers
    confidence: str = ""
    # [{"dimension", "response", "expected", "given", "met"}], for the evidence
    details: tuple = ()

    @property
    def correct(self) -> bool:
        return self.met == self.expected


def gold_check(answers: list[QualityAnswer], rules: Rules | None = None) -> dict:
    """QC-001 on one rater's gold answers (in submission order): accuracy is the share of
    expected answers met; "pause" once at least ``gold_minimum`` items are answered and the
    accuracy is below the pass share."""
    rules = rules or Rules()
    gold = sorted((a for a in answers if a.purpose == "gold"), key=lambda a: a.submitted_at)
    met = sum(a.met for a in gold)
    expected = sum(a.expected for a in gold)
    accuracy = met / expected if expected else None
    series, running_met, running_expected = [], 0, 0
    for answer in gold:
        running_met += answer.met
        running_expected += answer.expected
        series.append(running_met / running_expected if running_expected else None)
    pause = (
        len(gold) >= rules.gold_minimum
        and accuracy is not None
        and accuracy < rules.gold_pass_share
    )
    return {
        "items": len(gold),
        "met": met,
        "expected": expected,
        "accuracy": accuracy,
        "series": series,
        "pause": pause,
        "missed": [_evidence(a) for a in gold if not a.correct],
    }


def attention_check(answers: list[QualityAnswer], rules: Rules | None = None) -> dict:
    """QC-002: an attention check is missed unless every expected answer is met."""
    rules = rules or Rules()
    checks = sorted((a for a in answers if a.purpose == "attention"), key=lambda a: a.submitted_at)
    missed = [a for a in checks if not a.correct]
    return {
        "items": len(checks),
        "missed": [_evidence(a) for a in missed],
        "flag": len(missed) >= rules.attention_misses,
    }


def confidence_accuracy(answers: list[QualityAnswer]) -> list[dict]:
    """On gold items: accuracy per stated confidence (High, Medium, Low); shown, no flag."""
    rows = []
    for level in ("high", "medium", "low"):
        chosen = [a for a in answers if a.purpose == "gold" and a.confidence == level]
        expected = sum(a.expected for a in chosen)
        rows.append(
            {
                "confidence": level,
                "items": len(chosen),
                "accuracy": sum(a.met for a in chosen) / expected if expected else None,
            }
        )
    return rows


def _evidence(answer: QualityAnswer) -> dict:
    return {
        "case": answer.case,
        "submitted_at": answer.submitted_at,
        "details": [d for d in answer.details if not d["met"]],
    }


def quality_checks(answers: list[QualityAnswer], rules: Rules | None = None) -> dict:
    """{pseudonym: {"gold", "attention", "confidence", "flags"}} per rater with answers."""
    by_rater: dict[str, list[QualityAnswer]] = {}
    for answer in answers:
        by_rater.setdefault(answer.rater, []).append(answer)
    checks = {}
    for rater, theirs in sorted(by_rater.items()):
        rules_ = rules or Rules()
        gold = gold_check(theirs, rules_)
        attention = attention_check(theirs, rules_)
        flags = []
        if gold["pause"]:
            flags.append(
                f"gold accuracy {gold['accuracy']:.0%} on {gold['items']} items (below "
                f"{rules_.gold_pass_share:.0%})"
            )
        if attention["flag"]:
            flags.append(f"missed {len(attention['missed'])} attention checks")
        checks[rater] = {
            "gold": gold,
            "attention": attention,
            "confidence": confidence_accuracy(theirs),
            "flags": flags,
        }
    return checks


def _peer_gaps(agreement: dict) -> dict[str, list[tuple[str, float]]]:
    """Dimensions where alpha without the rater exceeds the overall alpha by PEER_GAP."""
    gaps: dict[str, list[tuple[str, float]]] = {}
    for dimension in agreement.get("dimensions", []):
        overall = dimension.get("alpha")
        if overall is None:
            continue
        for row in dimension.get("per_rater", []):
            without = row.get("alpha_without")
            if without is not None and without - overall >= PEER_GAP:
                gaps.setdefault(row["rater"], []).append(
                    (dimension["name"], round(without - overall, 3))
                )
    return gaps
