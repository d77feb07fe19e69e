"""Reads for quality control: each rater's case records and gold answers, the study's QC
rules, and the decisions already taken about raters."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agreement.models import StudyAgreement
from agreement.qc.checks import CaseRecord, QualityAnswer, Rules
from annotation.models import Assignment
from annotation.selectors import expected_answer_details
from studies.models import Membership, Study, StudyEvent, TestCase
from studies.services.quality import quality_settings_for

if TYPE_CHECKING:
    from .ratings import SubmittedRatings


def qc_case_records(*, study: Study, submitted: SubmittedRatings | None = None) -> list[CaseRecord]:
    """Every submitted case with its active time, totals by on-screen position and, where
    the rubric has a pairwise preference, whether it went to the response shown first.
    ``submitted``: the study's submitted ratings, if read already."""
    import numpy as np  # the worker's run only: the QC page reads the stored checks

    from .ratings import study_submitted_ratings

    data = submitted or study_submitted_ratings(study=study)
    if not len(data.rating):
        return []
    # By case (assignment), each case's totals in the order they were shown.
    order = np.lexsort((data.shown_label, data.assignment))
    assignments = data.assignment[order]
    starts = np.flatnonzero(np.r_[True, assignments[1:] != assignments[:-1]])
    ends = [*starts[1:].tolist(), len(order)]
    totals = data.total[order].tolist()
    first = order[starts]
    # Negative prefers the response shown first; NaN is no answer, 0 a tie (None both).
    shown = data.shown_preference[first]
    firsts: list[bool | None] = [None] * len(first)
    if any(scoring.compares_two for _, scoring in data.rubric):
        decided = (~np.isnan(shown) & (shown != 0)).tolist()
        firsts = [
            value < 0 if known else None
            for value, known in zip(shown.tolist(), decided, strict=True)
        ]
    pseudonyms = {pk: name for pk, (name, _) in data.members.items()}
    return [
        CaseRecord(pseudonyms[rater], seconds, tuple(totals[start:end]), timed, first_preferred)
        for rater, seconds, timed, first_preferred, start, end in zip(
            data.rater[first].tolist(),
            data.active_seconds[first].tolist(),
            (data.source[first] == Assignment.Source.SCREEN).tolist(),
            firsts,
            starts.tolist(),
            ends,
            strict=True,
        )
    ]


def qc_quality_answers(*, study: Study) -> list[QualityAnswer]:
    """Every submitted gold item and attention check, checked against its expected answers
    by each dimension's kind; the evidence names responses by system, never by label."""
    rubric = {d.key: d for d in study.rubric.scoring_dimensions()}
    assignments = (
        Assignment.objects.filter(
            test_case__study=study,
            test_case__purpose__in=[TestCase.Purpose.GOLD, TestCase.Purpose.ATTENTION],
            test_case__expected__isnull=False,
            status=Assignment.Status.SUBMITTED,
        )
        .select_related("rater", "test_case__expected")
        .prefetch_related("ratings__response__system")
        .order_by("submitted_at", "pk")
    )
    answers = []
    for assignment in assignments:
        ratings = assignment.ratings.all()
        details = expected_answer_details(
            assignment=assignment,
            expected=assignment.test_case.expected.answers or {},
            dimensions=rubric,
            names={r.label: r.response.system.name for r in ratings},
        )
        answers.append(
            QualityAnswer(
                rater=assignment.rater.pseudonym,
                case=assignment.test_case.case_id,
                purpose=assignment.test_case.purpose,
                submitted_at=assignment.submitted_at.isoformat() if assignment.submitted_at else "",
                met=sum(1 for d in details if d["met"]),
                expected=len(details),
                confidence=assignment.confidence,
                details=tuple(details),
            )
        )
    return answers


def qc_rules(*, study: Study) -> Rules:
    """The study's quality-control thresholds (its settings, or the protocol's defaults)."""
    settings = quality_settings_for(study=study)
    return Rules(
        min_median_seconds=settings.min_median_seconds,
        position_share=settings.position_share_percent / 100,
        position_alpha=float(settings.position_alpha),
        straight_line_items=settings.straight_line_items,
        gold_pass_share=settings.gold_pass_percent / 100,
        gold_minimum=settings.gold_minimum,
        attention_misses=settings.attention_misses,
    )


def rater_reinstated_at(*, study: Study) -> dict[str, str]:
    """Each rater's last reinstatement (ISO time): the gold rule counts answers after it."""
    rows = study.events.filter(
        kind=StudyEvent.Kind.RATER_REINSTATED, membership__isnull=False
    ).values_list("membership__pseudonym", "created_at")
    latest: dict[str, str] = {}
    for pseudonym, at in rows:
        latest[pseudonym] = max(latest.get(pseudonym, ""), at.isoformat())
    return latest


def dismissed_flags(*, study: Study, membership: Membership) -> set[str]:
    """The flag texts an administrator dismissed for this rater (with a reason)."""
    rows = study.events.filter(
        kind=StudyEvent.Kind.RATER_FLAG_DISMISSED, membership=membership
    ).values_list("detail", flat=True)
    return {flag for detail in rows for flag in (detail or {}).get("flags", [])}


def dismissed_flags_by_rater(*, study: Study) -> dict[int, set[str]]:
    """``dismissed_flags`` of every rater of the study, by membership id, in one query."""
    rows = study.events.filter(
        kind=StudyEvent.Kind.RATER_FLAG_DISMISSED, membership__isnull=False
    ).values_list("membership_id", "detail")
    dismissed: dict[int, set[str]] = {}
    for membership_id, detail in rows:
        dismissed.setdefault(membership_id, set()).update((detail or {}).get("flags", []))
    return dismissed


def qc_checks(*, agreement: StudyAgreement) -> dict[str, dict]:
    """The stored quality-control checks of each rater, by pseudonym."""
    return (agreement.result or {}).get("qc", {})


def qc_raters(*, study: Study):
    """The study's raters for the QC page, by pseudonym, with their accounts."""
    raters = study.memberships.filter(role=Membership.Role.RATER)
    return raters.select_related("user", "joined_by").order_by("pseudonym")


def rater_decisions(*, study: Study, kinds) -> list[dict]:
    """The administrators' decisions about raters, newest first (the last 200)."""
    events = study.events.filter(membership__isnull=False, kind__in=kinds)
    return [
        {
            "created_at": event.created_at,
            "rater": event.membership.pseudonym,
            "label": event.get_kind_display(),
            "reason": event.reason,
            "automatic": bool(event.detail.get("automatic")),
        }
        for event in events.select_related("membership")[:200]
        if event.membership is not None  # every one, by the filter; said for the type checker
    ]
