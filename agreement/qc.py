"""Quality-control checks per rater (no Django here).

The rules follow the human-evaluation protocol template (section 8): time per item
(QC-003), position bias (QC-004) and agreement with peers (QC-005). A flag is a reason for
an administrator to look, never an automatic exclusion.
"""

import statistics
from dataclasses import dataclass

MIN_MEDIAN_SECONDS = 20
POSITION_BIAS_SHARE = 0.70
POSITION_BIAS_MIN_CASES = 6
PEER_GAP = 0.10


@dataclass(frozen=True)
class CaseRecord:
    """One submitted case of one rater: active seconds and each response's total, by
    the position it was shown in (0 = shown first)."""

    rater: str
    active_seconds: int
    totals_by_position: tuple[float, ...]
    # False for answers recorded off screen (an imported worksheet): no time was measured.
    timed: bool = True


def rater_checks(*, cases: list[CaseRecord], agreement: dict | None) -> dict:
    """{pseudonym: {"cases", "median_seconds", "untimed", "first_preferred", "decided",
    "peer_gaps", "flags": [...]}} for every rater with a submitted case.

    Time per case is judged on timed cases only: a case imported from a worksheet has no
    measured time, so it is counted in "untimed" and never makes the median look fast.
    """
    by_rater: dict[str, list[CaseRecord]] = {}
    for case in cases:
        by_rater.setdefault(case.rater, []).append(case)
    per_rater_agreement = _peer_gaps(agreement or {})
    checks = {}
    for rater, records in sorted(by_rater.items()):
        timed = [r.active_seconds for r in records if r.timed]
        median_seconds = statistics.median(timed) if timed else None
        decided = [r for r in records if len(set(r.totals_by_position[:2])) == 2]
        first = sum(1 for r in decided if r.totals_by_position[0] > r.totals_by_position[1])
        share = first / len(decided) if decided else None
        flags = []
        if median_seconds is not None and median_seconds < MIN_MEDIAN_SECONDS:
            flags.append(
                f"median time per case {median_seconds:.0f} s (under {MIN_MEDIAN_SECONDS} s)"
            )
        biased = share is not None and max(share, 1 - share) > POSITION_BIAS_SHARE
        if biased and len(decided) >= POSITION_BIAS_MIN_CASES:
            side = "first" if share > 0.5 else "second"
            flags.append(
                f"prefers the response shown {side} in {max(share, 1 - share):.0%} of "
                f"{len(decided)} cases"
            )
        gaps = per_rater_agreement.get(rater, [])
        if gaps:
            names = ", ".join(name for name, _ in gaps)
            flags.append(f"the group agrees clearly better without this rater on {names}")
        checks[rater] = {
            "cases": len(records),
            "median_seconds": median_seconds,
            "untimed": len(records) - len(timed),
            "first_preferred": share,
            "decided": len(decided),
            "peer_gaps": [{"dimension": name, "gap": gap} for name, gap in gaps],
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
