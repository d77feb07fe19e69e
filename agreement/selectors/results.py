"""Reads for the stored agreement result: its inputs, whether it is stale, and what waits
for a run."""

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import (
    Count,
    F,
    Max,
    Q,
)

from agreement.models import AnalysisPlan, StudyAgreement
from annotation.models import Assignment, Rating
from annotation.selectors.adjudicated_labels import adjudication_inputs
from studies.models import Membership, Study, TestCase


def study_agreement(*, study: Study) -> StudyAgreement:
    return StudyAgreement.objects.filter(study=study).first() or StudyAgreement(study=study)


def analysis_inputs(*, study: Study) -> dict:
    """A small summary of everything the study's analysis reads, to tell a stale result.

    Any change to a rating (submitted, revised, imported, withdrawn), to who is excluded,
    to the dimensions or their levels, to the success criterion, to the phase or to the test
    cases changes this summary.
    """
    ratings = Rating.objects.filter(
        assignment__test_case__study=study,
        assignment__test_case__purpose=TestCase.Purpose.SAMPLE,
        assignment__status=Assignment.Status.SUBMITTED,
    ).aggregate(count=Count("pk"), last=Max("submitted_at"), last_id=Max("pk"))
    return {**analysis_inputs_but_ratings(study=study), "ratings": _ratings_summary(**ratings)}


def analysis_inputs_but_ratings(*, study: Study) -> dict:
    """``analysis_inputs`` without its ratings part, which a run takes from the ratings it
    read (``StudyRatings.inputs_ratings``) rather than from a second pass over them."""
    cases = study.test_cases.in_sample().aggregate(count=Count("pk"), last_id=Max("pk"))
    excluded = study.memberships.filter(status=Membership.Status.EXCLUDED).order_by("pk")
    return {
        "phase": study.current_phase,
        "unblinded": study.is_unblinded,
        "opened_at": study.opened_at.isoformat() if study.opened_at else None,
        "dimensions": [
            list(row)
            for row in study.rubric.dimensions.order_by("position").values_list(
                "key", "kind", "level"
            )
        ],
        "success": [str(study.success_alpha), study.success_min_dimensions],
        "cases": [cases["count"], cases["last_id"]],
        "excluded": list(excluded.values_list("pk", flat=True)),
        **_analysis_plan_inputs(study),
    }


# A page's statistics are kept this long (seconds) for the inputs they were computed from.
PAGE_RESULT_SECONDS = 24 * 3600


@dataclass(frozen=True)
class KeptResult:
    """A page's statistics for the study's analysis inputs as they are now: the cache key
    they are kept under, the inputs' digest (which names their job), and the result, None
    while it is not computed."""

    key: str
    inputs: str
    result: Any


def computed_for_inputs(*, study: Study, name: str, extra: Any = None) -> KeptResult:
    """The page statistics ``name`` as kept for the study's analysis inputs as they are now
    (ratings, exclusions, phase, cases, unblinding), its status and ``extra`` (what else
    the result reads): for pages whose statistics (a bootstrap) would otherwise run on
    every view. A read: the analysis's job computes and keeps them
    (``agreement.analysis.jobs``), started by a coordinator's POST, never by a page."""
    inputs = [analysis_inputs(study=study), study.status, extra]
    digest = hashlib.sha256(json.dumps(inputs, sort_keys=True, default=str).encode()).hexdigest()
    key = f"{name}:{study.pk}:{digest}"
    return KeptResult(key=key, inputs=digest, result=cache.get(key))


def agreement_is_stale(*, study: Study, agreement: StudyAgreement) -> bool:
    """True while the stored result does not reflect the study as it is now."""
    if agreement.pk is None:
        return False  # nothing stored: the page says "not computed yet"
    return agreement.is_stale or agreement.inputs != analysis_inputs(study=study)


def agreement_full_run(*, agreement: StudyAgreement) -> dict | None:
    """When the stored result was brought up to date from the alpha tallies: ``at``, the
    time of the from-scratch run its other figures (intervals, kappas, per rater and per
    stratum, the QC checks) come from, and ``every_minutes``, how often one runs at least.
    None when every figure is from the latest run."""
    incremental = (agreement.result or {}).get("incremental")
    if not incremental or not incremental.get("full_at"):
        return None
    return {
        "at": datetime.fromisoformat(incremental["full_at"]),
        "every_minutes": max(1, round(settings.AGREEMENT_FULL_SECONDS / 60)),
    }


def awaiting_run() -> Q:
    """Results that no run covers yet: a request newer than the result, or a stored first
    stage whose intervals are still missing (its run may have died between the stages)."""
    return Q(requested__gt=F("computed")) | Q(result__intervals_pending=True)


def agreement_awaits_run(*, study_id: int) -> bool:
    """True while a request of the study's statistics has no run that covers it yet."""
    rows = StudyAgreement.objects.filter(study_id=study_id)
    return not rows.exists() or rows.filter(awaiting_run()).exists()


def dimensions_missing_target(*, agreement: StudyAgreement) -> list[str]:
    """The keys of the dimensions whose α is below the study's success α in the stored
    result (7.3: "every disagreement" may then be adjudicated); none before a result."""
    result = agreement.result or {}
    passing = set((result.get("success") or {}).get("passing") or [])
    return [
        row["key"]
        for row in result.get("dimensions") or []
        if row.get("alpha") is not None and row["key"] not in passing
    ]


def _analysis_plan_inputs(study: Study) -> dict:
    """The analysis plan's part of ``analysis_inputs``, with the resolved adjudications. The
    primary question's measure, the aggregation rules, the minimum of ratings and the
    adjudications are there only once set, so that results stored before they existed stay
    fresh."""
    plan = AnalysisPlan.objects.filter(study=study).values_list(
        "stratum_shares", "primary_measure", "aggregation", "min_ratings"
    )
    shares, measure, rules, minimum = plan.first() or ({}, "", {}, None)
    adjudicated = adjudication_inputs(study=study)
    return {
        "stratum_shares": shares,
        **({"primary_measure": measure} if measure else {}),
        **({"aggregation": rules} if rules else {}),
        **({"min_ratings": minimum} if minimum else {}),
        **({"adjudicated": adjudicated} if adjudicated else {}),
    }


def _ratings_summary(*, count: int, last: datetime | None, last_id: int | None) -> list:
    """The ratings part of ``analysis_inputs``: the submitted ratings of sample cases, their
    number, latest submission and highest id."""
    return [count, last.isoformat() if last else None, last_id]
