"""Writes for agreement: ask for a recompute, and recompute a study's statistics."""

import gc
import hashlib
import logging
from contextlib import contextmanager, suppress
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from studies.errors import ApplicationError
from studies.events import study_event_record
from studies.locks import study_lock
from studies.models import Membership, Study, StudyEvent
from studies.services import rater_pause_automatic

from . import coalescing
from .analysis.agreement import DimensionData, analyse_study_point, with_intervals
from .analysis.outcomes import ComparisonData, compare_systems, label_free_summary
from .background import background_schedule
from .judges import verdicts as judges
from .judges.files import JudgeImportError, judge_rows_read
from .models import Judge, JudgeOutput, JudgeTemplate, StudyAgreement
from .qc.checks import answer_values, quality_checks, rater_checks
from .selectors import (
    StudyRatings,
    agreement_awaits_run,
    agreement_is_stale,
    analysis_inputs_but_ratings,
    awaiting_run,
    qc_case_records,
    qc_quality_answers,
    qc_rules,
    rater_reinstated_at,
    study_comparison_data,
    study_ratings,
    study_submitted_ratings,
)

logger = logging.getLogger(__name__)


def agreement_request_recompute(*, study_id: int) -> None:
    """Mark the study's statistics stale and enqueue a recompute unless one is pending.

    Call it after the change is committed (``transaction.on_commit``). If the broker is
    unreachable the study simply stays stale and the periodic sweep enqueues it later;
    the caller never sees an error.
    """
    StudyAgreement.objects.get_or_create(study_id=study_id)
    StudyAgreement.objects.filter(study_id=study_id).update(
        requested=F("requested") + 1, last_requested_at=timezone.now()
    )
    agreement_enqueue(study_id=study_id)


def agreement_stale_check(*, study: Study, agreement: StudyAgreement) -> bool:
    """Whether the stored result is out of date; asks for a recompute if none is coming.

    Every change of the analysis inputs is announced and requests a recompute, so the
    second case only arises if a change slipped past that (e.g. an edit in the database).
    """
    stale = agreement_is_stale(study=study, agreement=agreement)
    if stale and not agreement.is_stale:
        agreement_request_recompute(study_id=study.pk)
    return stale


def agreement_enqueue(*, study_id: int) -> bool:
    """Enqueue a recompute if none is pending; False when nothing was enqueued."""
    from .tasks import recompute_study  # the task module imports this one

    if settings.CELERY_TASK_ALWAYS_EAGER and settings.AGREEMENT_IN_PROCESS == "background":
        background_schedule(study_id=study_id)
        return True
    claim = None
    try:
        claim = coalescing.claim_pending(study_id)
        if not claim:
            return False
        recompute_study.apply_async(
            args=[study_id], kwargs={"claim": claim}, countdown=settings.AGREEMENT_DEBOUNCE_SECONDS
        )
        return True
    except Exception:  # noqa: BLE001 - any broker failure must leave the submit unharmed
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
    result = analyse_study_point(
        dimensions=data.dimensions,
        raters=data.raters,
        success_alpha=float(study.success_alpha),
        success_min_dimensions=study.success_min_dimensions,
    )
    result["phase"] = study.current_phase
    result["left_out"] = data.left_out
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
    if study.status == Study.Status.UNBLINDED:
        result["comparison_pending"] = True
    return result, data


def quality_enforce(*, study: Study) -> list[str]:
    """Pause, automatically, every active rater whose gold answers fail QC-001; returns
    their pseudonyms. Only answers since a rater's last reinstatement count, so an
    administrator's reinstatement gives them a fresh start rather than an instant pause."""
    rules = qc_rules(study=study)
    since = rater_reinstated_at(study=study)
    answers = [
        a for a in qc_quality_answers(study=study) if a.submitted_at > since.get(a.rater, "")
    ]
    active = dict(
        study.memberships.filter(
            role=Membership.Role.RATER, status=Membership.Status.ACTIVE
        ).values_list("pseudonym", "pk")
    )
    paused = []
    for rater, check in quality_checks(answers, rules).items():
        gold = check["gold"]
        if rater not in active or not gold["pause"]:
            continue
        reason = (
            f"Gold accuracy {gold['accuracy']:.0%} on {gold['items']} gold items, below "
            f"{rules.gold_pass_share:.0%} (QC-001)."
        )
        evidence = {
            "items": gold["items"],
            "accuracy": round(gold["accuracy"], 4),
            "missed": gold["missed"][:50],
        }
        if rater_pause_automatic(
            membership_id=active[rater], rule="QC-001", reason=reason, evidence=evidence
        ):
            paused.append(rater)
    return paused


def _with_comparison(result: dict, comparison: ComparisonData | None, *, n_resamples, seed):
    """The result with the comparison of systems (after unblinding only)."""
    result = {key: value for key, value in result.items() if key != "comparison_pending"}
    if comparison is not None:
        try:
            result["comparison"] = compare_systems(comparison, n_resamples=n_resamples, seed=seed)
        except Exception:  # noqa: BLE001 - a failed comparison must not cost the agreement
            logger.exception("The comparison of systems failed; the agreement is stored")
            result["comparison_failed"] = True
    return result


def agreement_result(*, study: Study) -> tuple[dict, int]:
    """The study's statistics from its data as they are now, and the ratings they used."""
    point, data = _point_result(study=study)
    options = {"n_resamples": settings.AGREEMENT_BOOTSTRAP_RESAMPLES, "seed": study.blinding_seed}
    result = with_intervals(point, dimensions=data.dimensions, **options)
    comparison = study_comparison_data(study=study, data=data)
    return _with_comparison(result, comparison, **options), data.n_ratings


def agreement_point_stage(*, study_id: int) -> PointStage | None:
    """Store the study's point estimates, marked ``intervals_pending``; None if a fresher
    result was stored (then there is nothing more to do for this run)."""
    logger.info("Agreement run for study %s started", study_id)
    study = Study.objects.select_related("rubric").get(pk=study_id)
    row, _ = StudyAgreement.objects.get_or_create(study=study)
    # Read the request counter and the inputs before the data: anything committed later
    # bumps the counter again and gets a run of its own. The inputs' ratings part comes
    # from the ratings the run reads (the same rows: no second pass over them).
    target = StudyAgreement.objects.values_list("requested", flat=True).get(pk=row.pk)
    inputs = analysis_inputs_but_ratings(study=study)
    point, data = _point_result(study=study)
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


def agreement_interval_stage(*, stage: PointStage) -> bool:
    """Add the bootstrap intervals to a stored first stage; False if a fresher result
    replaced it meanwhile (the intervals of older data are never written over it)."""
    if not StudyAgreement.objects.filter(study_id=stage.study_id, computed=stage.target).exists():
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
    logger.info("Agreement intervals of study %s stored (request %s)", stage.study_id, stage.target)
    return bool(written)


def agreement_recompute(*, study_id: int) -> bool:
    """Recompute and store the study's statistics, point estimates first and the intervals
    right after; False if a fresher result was stored."""
    stage = agreement_point_stage(study_id=study_id)
    return stage is not None and agreement_interval_stage(stage=stage)


def agreement_sweep() -> list[int]:
    """Enqueue every stale study (e.g. after the broker was down); returns their ids."""
    stale = StudyAgreement.objects.filter(awaiting_run()).values_list("study_id", flat=True)
    return [study_id for study_id in stale if agreement_enqueue(study_id=study_id)]


class JudgeTemplateError(ApplicationError):
    """A judge prompt template cannot be saved; the message lists why."""


@transaction.atomic
def judge_template_save(
    *,
    study: Study,
    name: str,
    text: str,
    template: JudgeTemplate | None = None,
    actor: AbstractBaseUser | None = None,
) -> JudgeTemplate:
    """Create or change one of the study's judge prompt templates."""
    name = name.strip()
    problems = judges.template_check(text)
    if not name or len(name) > 100:
        problems.insert(0, "Give the template a name of at most 100 characters.")
    elif study.judge_templates.filter(name=name).exclude(pk=getattr(template, "pk", None)).exists():
        problems.insert(0, f"The study already has a template named {name!r}.")
    if problems:
        raise JudgeTemplateError(" ".join(problems), problems=problems)
    template = template or JudgeTemplate(study=study)
    template.name, template.text = name, text
    template.save()
    study_event_record(
        study=study, actor=actor, kind=StudyEvent.Kind.JUDGE_TEMPLATE_SAVED, name=name
    )
    return template


@transaction.atomic
def judge_outputs_import(
    *, study: Study, filename: str, data: bytes, actor: AbstractBaseUser | None = None
) -> dict:
    """Import judge outputs: every row or none. Returns counts for the message.

    Rows naming an unknown case, a case without exactly two responses, or the same judge,
    case and order twice are problems that refuse the whole file. An output whose verdict
    cannot be read is not a problem of the file: it is stored with the reason, listed on the
    judges page, and never counted as a verdict. A row replaces an earlier output of the
    same judge, case and order.
    """
    rows = judge_rows_read(filename=filename, data=data)
    study_lock(study.pk)  # shared: the cases cannot be removed meanwhile
    pairs = dict(
        study.test_cases.annotate(n=Count("responses")).filter(n=2).values_list("case_id", "pk")
    )
    known = set(study.test_cases.values_list("case_id", flat=True))
    problems, seen = [], set()
    for row in rows:
        place = f"Line/row {row.number}"
        if row.case_id not in known:
            problems.append(f"{place}: no test case {row.case_id[:50]!r} in this study.")
        elif row.case_id not in pairs:
            problems.append(f"{place}: test case {row.case_id!r} does not have two responses.")
        key = (row.judge, row.case_id, row.order)
        if key in seen:
            problems.append(f"{place}: {row.judge!r} on {row.case_id!r} ({row.order}) again.")
        seen.add(key)
    if problems:
        raise JudgeImportError(problems)
    now = timezone.now()
    names = sorted({row.judge for row in rows})
    # Two imports naming the same new judge at once: both create it (one is a no-op), then
    # each locks the judges it writes, in one order, so the second waits for the first.
    Judge.objects.bulk_create(
        [Judge(study=study, name=name) for name in names], ignore_conflicts=True
    )
    existing = {
        judge.name: judge
        for judge in Judge.objects.select_for_update()
        .filter(study=study, name__in=names)
        .order_by("pk")
    }
    outputs = []
    for row in rows:
        try:
            verdict, problem = judges.parse_verdict(row.output), ""
        except ValueError as error:
            verdict, problem = "", str(error)[:200]
        outputs.append(
            JudgeOutput(
                judge=existing[row.judge],
                test_case_id=pairs[row.case_id],
                order=row.order,
                raw_text=row.output,
                verdict=verdict,
                problem=problem,
                imported_at=now,
            )
        )
    # In batches of the file's rows: one DELETE per 500 keys.
    for start in range(0, len(outputs), 500):
        batch = outputs[start : start + 500]
        keys = Q()
        for output in batch:
            keys |= Q(judge=output.judge, test_case_id=output.test_case_id, order=output.order)
        JudgeOutput.objects.filter(keys).delete()
    JudgeOutput.objects.bulk_create(outputs, batch_size=500)
    counts = {
        "rows": len(outputs),
        "judges": names,
        "unparseable": sum(1 for output in outputs if not output.verdict),
    }
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.JUDGE_OUTPUTS_IMPORTED,
        file=filename[:255],
        sha256=hashlib.sha256(data).hexdigest(),
        **counts,
    )
    return counts
