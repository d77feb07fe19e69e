"""Recompute requests and runs: ask for a recompute, and recompute a study's statistics."""

import gc
import logging
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from agreement import coalescing
from agreement.analysis.agreement import DimensionData, analyse_study_point, with_intervals
from agreement.analysis.comparison_data import ComparisonData
from agreement.analysis.incremental import tallied_point
from agreement.analysis.outcomes import compare_systems, label_free_summary
from agreement.models import AgreementTallies, StudyAgreement
from agreement.qc.checks import answer_values, quality_checks, rater_checks
from agreement.selectors import (
    agreement_awaits_run,
    agreement_is_stale,
    analysis_inputs,
    analysis_inputs_but_ratings,
    awaiting_run,
    qc_case_records,
    qc_quality_answers,
    qc_rules,
)
from agreement.selectors.comparison import study_comparison_data
from agreement.selectors.ratings import (
    StudyRatings,
    agreement_first_ratings,
    study_ratings,
    study_submitted_ratings,
)
from annotation.services.adjudication_queue import adjudication_queue_refresh
from jobs.runner import job_schedule
from studies.models import Study
from studies.services.webhooks import webhook_event_announce

from .adaptive import adaptive_raters_extend
from .monitor import monitor_evaluate
from .qc import quality_enforce
from .tallies import tallies_seen, tallies_settle, tallies_update

logger = logging.getLogger(__name__)


def agreement_request_recompute(*, study_id: int) -> None:
    """Mark the study's statistics stale and enqueue a recompute unless one is pending.

    Call it after the change is committed (``transaction.on_commit``). If the broker is
    unreachable the study simply stays stale and the periodic sweep enqueues it later;
    the caller never sees an error.
    """
    # The row exists after a study's first request: one update, and the create only then.
    requested = StudyAgreement.objects.filter(study_id=study_id)
    if not requested.update(requested=F("requested") + 1, last_requested_at=timezone.now()):
        StudyAgreement.objects.get_or_create(study_id=study_id)
        requested.update(requested=F("requested") + 1, last_requested_at=timezone.now())
    agreement_enqueue(study_id=study_id)


def agreement_enqueue(*, study_id: int) -> bool:
    """Enqueue a recompute if none is pending; False when nothing was enqueued.

    It runs where ``JOBS_RUN`` says, a debounce later, so that a burst of submissions is
    folded into one run; ``coalescing`` keeps one pending and one running per study.
    """
    from agreement.tasks import recompute_study  # the task module imports this one

    claim = None
    try:
        claim = coalescing.claim_pending(study_id)
        if not claim:
            return False
        enqueued = job_schedule(
            recompute_study,
            args=[study_id],
            kwargs={"claim": claim},
            countdown=settings.AGREEMENT_DEBOUNCE_SECONDS,
            on_unreachable=lambda: coalescing.release_pending(study_id, claim),
        )
        if enqueued:
            logger.info("Agreement recompute of study %s enqueued", study_id)
        return enqueued
    except Exception:  # any broker failure must leave the submit unharmed
        logger.warning("Could not enqueue the agreement recompute of study %s", study_id)
        if claim:
            with suppress(Exception):
                coalescing.release_pending(study_id, claim)
        return False


def agreement_enqueue_if_stale(*, study_id: int) -> bool:
    """Enqueue a recompute if the study is stale and none is pending."""
    if not agreement_awaits_run(study_id=study_id):
        return False
    return agreement_enqueue(study_id=study_id)


@dataclass(frozen=True)
class PointStage:
    """A run whose point estimates are stored: what its interval stage needs."""

    study_id: int
    target: int
    point: dict
    dimensions: list[DimensionData]
    n_resamples: int
    seed: int
    comparison: ComparisonData | None = None


@contextmanager
def _no_cycle_collection():
    """Python's cycle collector paused: a large study's run builds some hundred thousand
    tuples that hold no cycles, and the collector walked them again and again (a quarter
    of the point stage's CPU at 100,000 ratings). Reference counting still frees them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _point_result(*, study: Study) -> tuple[dict, StudyRatings]:
    """The study's statistics without intervals, from its data as they are now."""
    with _no_cycle_collection():
        return _point_result_computed(study=study)


def _point_result_computed(*, study: Study) -> tuple[dict, StudyRatings]:
    pilot = study.current_phase == "pilot"
    # One read of the submitted ratings serves the agreement data and the QC records.
    submitted = study_submitted_ratings(study=study)
    data = study_ratings(study=study, pilot=pilot, submitted=submitted)
    # Agreement reads the adaptive design's fixed part (the first k_min ratings of each
    # case); the labels and the comparison read every rating (``data``).
    first = agreement_first_ratings(study=study)
    fixed = data
    if first is not None:
        fixed = replace(
            study_ratings(study=study, pilot=pilot, submitted=submitted, first_per_case=first),
            labelled=data,
        )
    result = analyse_study_point(
        dimensions=fixed.dimensions,
        raters=fixed.raters,
        success_alpha=float(study.success_alpha),
        success_min_dimensions=study.success_min_dimensions,
    )
    result["phase"] = study.current_phase
    result["left_out"] = fixed.left_out
    # The QC rules read point estimates only: they are final in the first stage.
    rules = qc_rules(study=study)
    result["qc"] = rater_checks(
        cases=qc_case_records(study=study, submitted=submitted),
        agreement=result,
        rules=rules,
        # Straight-lining reads the sample's answers, already loaded for agreement.
        answers=answer_values(data.raters, data.dimensions),
    )
    for rater, check in quality_checks(qc_quality_answers(study=study), rules).items():
        entry = result["qc"].setdefault(rater, {"flags": []})
        entry["quality"] = check
        entry["flags"] = entry.get("flags", []) + check["flags"]
    # Label-free until unblinding; the comparison of systems comes with the intervals.
    result["summary"] = label_free_summary(dimensions=data.dimensions, confidence=data.confidence)
    if study.is_unblinded:
        result["comparison_pending"] = True
    return result, fixed


def _with_comparison(result: dict, comparison: ComparisonData | None, *, n_resamples, seed):
    """The result with the comparison of systems (after unblinding only)."""
    result = {key: value for key, value in result.items() if key != "comparison_pending"}
    if comparison is not None:
        try:
            result["comparison"] = compare_systems(comparison, n_resamples=n_resamples, seed=seed)
        except Exception:  # a failed comparison must not cost the agreement
            logger.exception("The comparison of systems failed; the agreement is stored")
            result["comparison_failed"] = True
    return result


def agreement_point_stage(*, study_id: int) -> PointStage | None:
    """Store the study's point estimates, marked ``intervals_pending``; None if a fresher
    result was stored (then there is nothing more to do for this run)."""
    logger.info("Agreement run for study %s started", study_id)
    study = Study.objects.select_related("rubric").filter(pk=study_id).first()
    if study is None:
        # Deleted while its run waited in the queue: nothing left to compute.
        logger.info("Agreement run for study %s: the study no longer exists", study_id)
        return None
    row, _ = StudyAgreement.objects.get_or_create(study=study)
    # Read the request counter and the inputs before the data: anything committed later
    # bumps the counter again and gets a run of its own. The inputs' ratings part comes
    # from the ratings the run reads (the same rows: no second pass over them).
    target = StudyAgreement.objects.values_list("requested", flat=True).get(pk=row.pk)
    inputs = analysis_inputs_but_ratings(study=study)
    if _incremental_allowed(row=row, inputs=inputs):
        tallies = tallies_update(study=study, built_for=inputs)
        if tallies is not None:
            _incremental_point_stage(
                study=study, row=row, target=target, tallies=tallies, inputs=inputs
            )
            return None
    seen = tallies_seen(study=study, built_for=inputs)
    point, data = _point_result(study=study)
    tallies_settle(study=study, data=data, built_for=dict(inputs), seen=seen)
    inputs["ratings"] = data.inputs_ratings
    # Older results give way; so does this run's own request if only its intervals are
    # missing (its run died between the stages).
    older = Q(computed__lt=target) | Q(computed=target, result__intervals_pending=True)
    with transaction.atomic():
        StudyAgreement.objects.filter(pk=row.pk).update(runs=F("runs") + 1)
        written = StudyAgreement.objects.filter(older, pk=row.pk).update(
            computed=target,
            result=point,
            computed_at=timezone.now(),
            n_ratings=data.n_ratings,
            inputs=inputs,
        )
    # QC-001 acts on every run, even one a fresher result overtook: the pause is idempotent.
    quality_enforce(study=study)
    # The adaptive design: cases whose raters disagree get one more rater. Then the
    # adjudication queue, with the other QC: cases that have all their ratings (in the
    # adaptive design, their extra raters' too) and trigger a rule (or 7.3's switch) wait
    # for an adjudicator. Both idempotent.
    adaptive_raters_extend(study=study)
    adjudication_queue_refresh(study=study)
    # The monitored primary question, under this run's request (a stale run gives way).
    monitor_evaluate(study=study, version=target)
    # The run's locked part ends here (see tasks.py); its intervals come next.
    logger.info("Agreement run for study %s finished (request %s)", study_id, target)
    if not written:
        return None
    return PointStage(
        study_id=study_id,
        target=target,
        point=point,
        dimensions=data.dimensions,
        n_resamples=settings.AGREEMENT_BOOTSTRAP_RESAMPLES,
        seed=study.blinding_seed,
        comparison=study_comparison_data(study=study, data=data),
    )


def _full_at(row: StudyAgreement) -> datetime | None:
    """When the stored result's from-scratch run stored it (None: nothing stored)."""
    incremental = (row.result or {}).get("incremental")
    if incremental:
        return datetime.fromisoformat(incremental["full_at"]) if incremental["full_at"] else None
    return row.computed_at


def _full_run_due(row: StudyAgreement) -> bool:
    """Whether a result kept up to date by the tallies is due its from-scratch run."""
    full_at = _full_at(row)
    if "incremental" not in (row.result or {}) or full_at is None:
        return False
    return timezone.now() - full_at >= timedelta(seconds=settings.AGREEMENT_FULL_SECONDS)


def _incremental_allowed(*, row: StudyAgreement, inputs: dict) -> bool:
    """Whether this run may update the stored result from the tallies: tallies are on, the
    study is large enough, a from-scratch result of the study as it is now (but its
    ratings) is stored, and its from-scratch run is recent enough."""
    if settings.AGREEMENT_FULL_SECONDS <= 0 or not (row.result or {}).get("dimensions"):
        return False
    if row.n_ratings < settings.AGREEMENT_INCREMENTAL_MIN_RATINGS:
        return False  # a small study: a run from scratch is cheap and keeps all fresh
    stored = {key: value for key, value in (row.inputs or {}).items() if key != "ratings"}
    full_at = _full_at(row)
    return (
        stored == inputs
        and full_at is not None
        and timezone.now() - full_at < timedelta(seconds=settings.AGREEMENT_FULL_SECONDS)
    )


def _incremental_point_stage(
    *, study: Study, row: StudyAgreement, target: int, tallies: AgreementTallies, inputs: dict
):
    """Store the last result with its tallied figures brought up to date (no read of the
    ratings but the touched cases', done by ``tallies_update``)."""
    incremental = row.result.get("incremental") or {}
    full_at = _full_at(row)
    result = tallied_point(
        row.result,
        totals=tallies.totals,
        success_alpha=float(study.success_alpha),
        success_min_dimensions=study.success_min_dimensions,
        full_request=incremental.get("full_request", row.computed),
        full_at=full_at.isoformat() if full_at else None,
    )
    # The inputs' ratings part as the tallies keep it; after a deletion, by one aggregate in
    # the database (no rating is loaded).
    if tallies.inputs_ratings is None:
        inputs = analysis_inputs(study=study)
        AgreementTallies.objects.filter(pk=tallies.pk, version=tallies.version).update(
            inputs_ratings=inputs["ratings"]
        )
    else:
        inputs = {**inputs, "ratings": tallies.inputs_ratings}
    with transaction.atomic():
        StudyAgreement.objects.filter(pk=row.pk).update(runs=F("runs") + 1)
        written = StudyAgreement.objects.filter(pk=row.pk, computed__lt=target).update(
            computed=target,
            result=result,
            computed_at=timezone.now(),
            n_ratings=tallies.n_ratings,
            inputs=inputs,
        )
    quality_enforce(study=study)
    adaptive_raters_extend(study=study)
    adjudication_queue_refresh(study=study)
    monitor_evaluate(study=study, version=target)
    logger.info("Agreement of study %s updated from its tallies (request %s)", study.pk, target)
    if written:
        webhook_event_announce(
            study_id=study.pk, event="agreement.recomputed", run=target, computed_at=timezone.now()
        )


_INTERVAL_FIELDS = ("low", "high", "below", "n_resamples", "n_degenerate")


def _intervals_merge(*, stage: PointStage, result: dict) -> int:
    """Put a from-scratch run's intervals (and comparison) into the result the tallies
    brought up to date from it since; 0 when there is none."""
    with transaction.atomic():
        row = (
            StudyAgreement.objects.select_for_update()
            .filter(study_id=stage.study_id, result__incremental__full_request=stage.target)
            .first()
        )
        if row is None:
            return 0
        intervals = {d["key"]: d for d in result["dimensions"]}
        merged = {key: value for key, value in row.result.items() if key != "comparison_pending"}
        merged["dimensions"] = [
            {**d, **{name: intervals[d["key"]][name] for name in _INTERVAL_FIELDS}}
            if d["key"] in intervals
            else d
            for d in row.result["dimensions"]
        ]
        for name in ("bootstrap", "comparison", "comparison_failed"):
            if name in result:
                merged[name] = result[name]
        row.result = merged
        row.save(update_fields=["result"])
        return 1


def agreement_interval_stage(*, stage: PointStage) -> bool:
    """Add the bootstrap intervals to a stored first stage; False if a fresher result
    replaced it meanwhile (the intervals of older data are never written over it)."""
    # The stage's own result, or one brought up to date from it by the tallies since.
    own = Q(computed=stage.target) | Q(result__incremental__full_request=stage.target)
    if not StudyAgreement.objects.filter(own, study_id=stage.study_id).exists():
        return False  # superseded already: spare the bootstrap
    result = with_intervals(
        stage.point, dimensions=stage.dimensions, n_resamples=stage.n_resamples, seed=stage.seed
    )
    result = _with_comparison(
        result, stage.comparison, n_resamples=stage.n_resamples, seed=stage.seed
    )
    written = StudyAgreement.objects.filter(study_id=stage.study_id, computed=stage.target).update(
        result=result
    )
    if not written:
        written = _intervals_merge(stage=stage, result=result)
    logger.info("Agreement intervals of study %s stored (request %s)", stage.study_id, stage.target)
    if written:
        webhook_event_announce(
            study_id=stage.study_id,
            event="agreement.recomputed",
            run=stage.target,
            computed_at=timezone.now(),
        )
    return bool(written)


def agreement_recompute(*, study_id: int) -> bool:
    """Recompute and store the study's statistics, point estimates first and the intervals
    right after; False if a fresher result was stored."""
    stage = agreement_point_stage(study_id=study_id)
    return stage is not None and agreement_interval_stage(stage=stage)


def agreement_sweep() -> list[int]:
    """Enqueue every stale study (e.g. after the broker was down); returns their ids.

    Every change of the analysis inputs is announced and requests a recompute; a result
    whose inputs changed without a request (an edit in the database) is requested here,
    since pages only read and say that it is out of date.
    """
    agreements = StudyAgreement.objects.filter(requested__lte=F("computed"))
    for agreement in agreements.select_related("study__rubric").iterator(chunk_size=100):
        # A result kept up to date by the tallies gets its from-scratch run on schedule.
        if _full_run_due(agreement) or agreement_is_stale(
            study=agreement.study, agreement=agreement
        ):
            StudyAgreement.objects.filter(pk=agreement.pk).update(
                requested=F("requested") + 1, last_requested_at=timezone.now()
            )
    stale = StudyAgreement.objects.filter(awaiting_run()).values_list("study_id", flat=True)
    return [study_id for study_id in stale if agreement_enqueue(study_id=study_id)]
