from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseBadRequest, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from agreement.analysis.jobs import (
    AnalysisPending,
    analysis_job_start,
    analysis_shown,
    judge_calibration_analysis,
    ranking_analysis,
    ranking_unavailable,
)
from agreement.judges import files as judge_files
from agreement.judges import verdicts as judges
from agreement.judges.files import JudgeImportError
from agreement.judges.prompts import (
    judge_outputs_csv,
    judge_prompts_jsonl,
    judge_template_chosen,
    pairwise_dimension,
    study_judges_counted,
)
from agreement.models import Judge
from agreement.qc import checks as qc
from agreement.report.charts import accuracy_chart, alpha_chart, time_chart
from agreement.selectors import (
    agreement_full_run,
    agreement_is_stale,
    dimensions_missing_target,
    dismissed_flags,
    dismissed_flags_by_rater,
    qc_checks,
    qc_raters,
    qc_rules,
    rater_decisions,
    study_agreement,
)
from agreement.services import judge_outputs_import, judge_template_save
from annotation.selectors import (
    adjudication_counts,
    incomplete_ratings,
    raters_at_limit_today,
    study_skip_summary,
)
from annotation.selectors.comments import comments_unread_count
from core.user_input import uuid_or_none
from jobs.models import Job
from jobs.services import job_status
from studies import access
from studies.errors import ApplicationError
from studies.models import Membership
from studies.selectors import adjudication_rules_table
from studies.services import (
    RATER_ACTION_LABELS,
    RATER_ACTIONS,
    rater_actions_available,
    rater_status_change,
)


@login_required
def study_agreement_page(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    agreement = study_agreement(study=study)
    # A read: a stale result is shown as such; the change that made it stale requested
    # the recompute (and the periodic sweep catches any that slipped past).
    stale = agreement_is_stale(study=study, agreement=agreement)
    result = agreement.result or {}
    context = {
        "study": study,
        "agreement": agreement,
        "stale": stale,
        "result": result,
        "full_run": agreement_full_run(agreement=agreement),
        "chart": alpha_chart(result) if result.get("dimensions") else None,
        "chart_narrow": alpha_chart(result, layout="narrow") if result.get("dimensions") else None,
    }
    if not request.GET.get("fragment"):
        context["adjudication"] = _adjudication_context(request, study, agreement)
    template = "agreement/_results.html" if request.GET.get("fragment") else "agreement/study.html"
    return render(request, template, context)


def _adjudication_context(request, study, agreement) -> dict:
    """The agreement page's adjudication section: the queue's counts, and for the lead the
    dimensions below the target that may be switched to every disagreement (7.3)."""
    missed = set(dimensions_missing_target(agreement=agreement))
    return {
        "counts": adjudication_counts(study=study),
        "is_lead": request.user.pk == study.lead_id,
        "can_switch": study.is_frozen and not study.is_unblinded,
        "missed": [row for row in adjudication_rules_table(study=study) if row["key"] in missed],
    }


@login_required
def study_agreement_status(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    agreement = study_agreement(study=study)
    stale = agreement_is_stale(study=study, agreement=agreement)
    return JsonResponse(
        {
            "requested": agreement.requested,
            "computed": agreement.computed,
            "stale": stale,
            # The point estimates are stored first; the intervals follow within seconds.
            "intervals_pending": bool((agreement.result or {}).get("intervals_pending")),
            "computed_at": agreement.computed_at.isoformat() if agreement.computed_at else None,
        }
    )


# The administrators' decisions about raters, as recorded in the audit trail.
RATER_DECISIONS = [kind for _, kind in RATER_ACTIONS.values()]


def _open_flags(check: dict, dismissed: set[str]) -> list[str]:
    """A rater's flags not yet dismissed; a flag whose evidence changes is a new flag."""
    return [flag for flag in check.get("flags", []) if flag not in dismissed]


@login_required
def study_quality(request, slug):
    """Quality-control flags per rater; administrators pause, retrain or exclude here."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    form_errors: dict[str, str] = {}
    if request.method == "POST":
        if not request.user.is_staff:
            raise PermissionDenied
        done, form_errors = _rater_decision(request, study)
        if done:
            messages.success(request, f"{done}; the reason is recorded.")
            return redirect("agreement:qc", slug=study.slug)
    return render(
        request,
        "agreement/quality.html",
        {
            **_quality_context(study, can_act=request.user.is_staff, form_errors=form_errors),
            # The lead sends a case to adjudication from here too.
            "is_lead": request.user.pk == study.lead_id,
            # QC-006: the comments digest, with what this coordinator has not read yet.
            "comments_unread": comments_unread_count(study=study, reader=request.user),
            # Raters who reached a daily exposure limit today: counts, never who.
            "at_limit": raters_at_limit_today(study=study),
            # Submitted before answers were required, lacking one: shown, never rewritten.
            "incomplete": incomplete_ratings(study=study),
        },
        status=400 if form_errors else 200,
    )


def _rater_decision(request, study) -> tuple[str, dict[str, str]]:
    """Record an administrator's decision about one rater: what was done, or the error."""
    # A NUL character cannot reach PostgreSQL, even in a lookup: no rater has one.
    pseudonym = request.POST.get("rater", "").replace("\x00", "\ufffd")
    membership = get_object_or_404(
        Membership, study=study, role=Membership.Role.RATER, pseudonym=pseudonym
    )
    check = qc_checks(agreement=study_agreement(study=study)).get(membership.pseudonym) or {}
    try:
        changed = rater_status_change(
            membership=membership,
            action=request.POST.get("action", ""),
            reason=request.POST.get("reason", ""),
            actor=request.user,
            flags=_open_flags(check, dismissed_flags(study=study, membership=membership)),
        )
    except ApplicationError as error:
        return "", {membership.pseudonym: str(error)}
    if request.POST.get("action") == "dismiss":
        return "the flags are dismissed", {}
    return f"{changed.pseudonym} is now {changed.get_status_display().lower()}", {}


def _quality_context(study, *, can_act: bool, form_errors: dict[str, str]) -> dict:
    """The QC page: a row per rater, their decisions, the rules; a fixed number of queries
    however many raters the study has."""
    agreement = study_agreement(study=study)
    checks = qc_checks(agreement=agreement)
    rules = qc_rules(study=study)
    dismissed = dismissed_flags_by_rater(study=study)
    rows = [
        _rater_row(
            membership,
            checks.get(membership.pseudonym),
            dismissed.get(membership.pk, set()),
            rules=rules,
            error=form_errors.get(membership.pseudonym),
        )
        for membership in qc_raters(study=study)
    ]
    # Open flags first: raters with a flag who are not yet excluded.
    rows.sort(key=lambda row: not (row["check"] or {}).get("flags") or row["excluded"])
    return {
        "study": study,
        "agreement": agreement,
        "full_run": agreement_full_run(agreement=agreement),
        "rows": rows,
        "events": rater_decisions(study=study, kinds=RATER_DECISIONS),
        "skips": study_skip_summary(study=study),
        "can_act": can_act,
        "rules": rules,
        "thresholds": {
            "seconds": rules.min_median_seconds,
            "position": rules.position_share,
            "position_cases": qc.POSITION_BIAS_MIN_CASES,
            "gap": qc.PEER_GAP,
        },
    }


def _rater_row(membership, check, dismissed: set[str], *, rules, error) -> dict:
    """One rater's checks, open and dismissed flags and evidence charts."""
    quality = (check or {}).get("quality")
    open_flags = _open_flags(check or {}, dismissed)
    return {
        "membership": membership,
        # Only what would change something: no "Pause" for a rater already paused.
        "actions": [
            (action, RATER_ACTION_LABELS[action])
            for action in rater_actions_available(
                status=membership.status, has_open_flags=bool(open_flags)
            )
        ],
        "excluded": membership.status == Membership.Status.EXCLUDED,
        "check": check,
        "open_flags": open_flags,
        "dismissed": [f for f in (check or {}).get("flags", []) if f in dismissed],
        "quality": quality,
        "chart": accuracy_chart(quality["gold"]["series"], threshold=rules.gold_pass_share)
        if quality
        else None,
        "time_chart": time_chart(
            (check or {}).get("time_bins") or [],
            edges=qc.TIME_BINS,
            threshold=rules.min_median_seconds,
        ),
        "error": error,
    }


@login_required
def study_judges(request, slug):
    """LLM judges: export prompts, edit templates, import outputs, list judges."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    problems, status = [], 200
    template_form = {"name": "", "text": judges.REFERENCE_TEMPLATE, "uuid": "", "allow_tie": False}
    if request.method == "POST":
        action = request.POST.get("action", "")
        try:
            if action == "import":
                upload = request.FILES.get("file")
                if upload is None:
                    raise JudgeImportError(["Choose a file to import."])
                if upload.size > judge_files.MAX_BYTES:
                    raise JudgeImportError(["The file is larger than 10 MB."])
                chosen = judge_template_chosen(
                    study=study, choice=request.POST.get("template", "")[:40]
                )
                if chosen is None:
                    raise JudgeImportError(["Choose the template the judge answered."])
                counts = judge_outputs_import(
                    study=study,
                    filename=upload.name,
                    data=upload.read(),
                    allow_tie=chosen[1],
                    actor=request.user,
                )
                ties = f", {counts['ties']} tie(s)" if counts["allow_tie"] else ""
                messages.success(
                    request,
                    f"Imported {counts['rows']} judge output(s) from {', '.join(counts['judges'])}"
                    f"{ties}; {counts['unparseable']} could not be read (listed on the judge's "
                    "calibration page).",
                )
                return redirect("agreement:judges", slug=study.slug)
            if action == "template":
                template_uuid = uuid_or_none(request.POST.get("uuid", ""))
                existing = (
                    study.judge_templates.filter(uuid=template_uuid).first()
                    if template_uuid
                    else None
                )
                saved = judge_template_save(
                    study=study,
                    name=request.POST.get("name", "")[:200],
                    text=request.POST.get("text", "")[: judges.MAX_TEMPLATE_CHARS + 1],
                    template=existing,
                    allow_tie=request.POST.get("allow_tie") == "on",
                    actor=request.user,
                )
                messages.success(request, f"Template {saved.name!r} saved.")
                return redirect("agreement:judges", slug=study.slug)
            return HttpResponseBadRequest("Unknown action.")
        except ApplicationError as error:
            problems = error.problems or [str(error)]
            status = 400
            if action == "template":
                template_form = {
                    "name": request.POST.get("name", "")[:200],
                    "text": request.POST.get("text", "")[: judges.MAX_TEMPLATE_CHARS],
                    "uuid": request.POST.get("uuid", "")[:40],
                    "allow_tie": request.POST.get("allow_tie") == "on",
                }
            problems = [error.message, *problems] if error.message not in problems else problems
    judge_rows = study_judges_counted(study=study)
    return render(
        request,
        "agreement/judges.html",
        {
            "study": study,
            "judges": judge_rows,
            "templates": study.judge_templates.all(),
            "template_form": template_form,
            "placeholders": judges.PLACEHOLDERS.items(),
            "problems": problems,
            "pairwise": pairwise_dimension(study),
        },
        status=status,
    )


@login_required
@require_GET
def judge_prompts(request, slug):
    """The prompts for a judge, both orders, as JSONL (no system names)."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    chosen = judge_template_chosen(study=study, choice=request.GET.get("template", "")[:40])
    if chosen is None:
        raise Http404
    response = StreamingHttpResponse(
        judge_prompts_jsonl(study=study, template=chosen[0]), content_type="application/jsonl"
    )
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-judge-prompts.jsonl"'
    return response


@login_required
@require_GET
def judge_calibration_page(request, slug, judge_uuid):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    judge = get_object_or_404(Judge, study=study, uuid=judge_uuid)
    report = analysis_shown(analysis=judge_calibration_analysis(study=study, judge=judge))
    compute_url = reverse("agreement:judge_calibration_compute", args=[study.slug, judge.uuid])
    return render(
        request,
        "agreement/judge_calibration.html",
        {
            "study": study,
            "judge": judge,
            "report": report,
            **analysis_pending_context(request, study, report, compute_url),
        },
    )


@login_required
@require_POST
def judge_calibration_compute(request, slug, judge_uuid):
    """Start computing the judge's calibration for the data as they are, then back to it."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    judge = get_object_or_404(Judge, study=study, uuid=judge_uuid)
    analysis_job_start(
        analysis=judge_calibration_analysis(study=study, judge=judge), requested_by=request.user
    )
    return redirect("agreement:judge_calibration", study.slug, judge.uuid)


@login_required
@require_GET
def study_ranking_page(request, slug):
    """Win matrix and Bradley-Terry ranking of the systems, from the raters' preferences."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    # Before unblinding (or with no pairwise preference) there is nothing to compute.
    arena = ranking_unavailable(study=study) or analysis_shown(
        analysis=ranking_analysis(study=study)
    )
    compute_url = reverse("agreement:ranking_compute", args=[study.slug])
    return render(
        request,
        "agreement/ranking.html",
        {
            "study": study,
            "arena": arena,
            **analysis_pending_context(request, study, arena, compute_url),
        },
    )


@login_required
@require_POST
def study_ranking_compute(request, slug):
    """Start computing the ranking for the data as they are, then back to its page."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    analysis_job_start(analysis=ranking_analysis(study=study), requested_by=request.user)
    return redirect("agreement:ranking", study.slug)


def analysis_pending_context(request, study, value, compute_url: str) -> dict:
    """What a page shows while its statistics are not kept for the data as they are (the
    Compute button, or its job's progress); nothing once they are."""
    if not isinstance(value, AnalysisPending):
        return {}
    context = {"pending": value, "compute_url": compute_url}
    if value.job is not None:
        context["status_url"] = reverse(
            "agreement:analysis_status", args=[study.slug, value.job.uuid]
        )
        context["page_url"] = request.get_full_path()
    return context


@login_required
@require_GET
def analysis_job_status(request, slug, job_uuid):
    """An analysis job's progress as JSON, for the page's poller."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    job = get_object_or_404(Job, study_id=study.pk, kind=Job.Kind.ANALYSIS, uuid=job_uuid)
    return JsonResponse(job_status(job=job))


@login_required
@require_GET
def judge_outputs_export(request, slug):
    """Every imported judge output as CSV, apart from the raters' exports (no system names)."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    response = StreamingHttpResponse(
        judge_outputs_csv(study=study), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-judge-outputs.csv"'
    return response
