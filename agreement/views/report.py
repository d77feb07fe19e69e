"""The study report page, its printable form and the zip bundle."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from agreement.analysis.jobs import (
    analysis_job_start,
    analysis_shown,
    robustness_analysis,
    robustness_unavailable,
)
from agreement.report.bundle import report_bundle_response
from agreement.report.figures import report_charts
from agreement.report.sections import study_report
from agreement.selectors.monitor import monitoring_settings
from agreement.services.monitor import monitoring_set, study_stop_early
from agreement.services.plan import (
    AnalysisPlanError,
    aggregation_choices,
    aggregation_get,
    aggregation_set,
    primary_measure_choices,
    primary_measure_get,
    primary_measure_set,
    stratum_shares_set,
    stratum_shares_text,
)
from agreement.views.statistics import analysis_pending_context
from core.user_input import whole_number_text
from studies import access
from studies.errors import ApplicationError


@login_required
def study_report_page(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    report = study_report(study=study)
    choices, measure = primary_measure_choices(study=study), primary_measure_get(study=study)
    return render(
        request,
        "agreement/report.html",
        {
            "study": study,
            "report": report,
            "charts": report_charts(report),
            "shares_text": stratum_shares_text(study=study),
            "primary_choices": choices,
            "primary_measure": measure,
            # Named, then left out of the rubric (renamed, removed): the rule applies.
            "primary_missing": bool(measure) and measure not in dict(choices),
            "aggregation_choices": aggregation_choices(study=study),
            "aggregation": aggregation_get(study=study),
            "robustness": _robustness_pending(request, study, report),
            "monitoring": monitoring_settings(study=study),
            "is_lead": study.lead_id == request.user.pk,
        },
    )


def _robustness_pending(request, study, report: dict) -> dict:
    """The robustness check's Compute button, or its job's progress, while it is not kept
    for the data as they are (after unblinding only)."""
    shown = report.get("robustness")
    if not shown or shown["computed"]:
        return {}
    value = analysis_shown(analysis=robustness_analysis(study=study))
    compute_url = reverse("agreement:robustness_compute", args=[study.slug])
    return analysis_pending_context(request, study, value, compute_url)


@login_required
@require_POST
def study_robustness_compute(request, slug):
    """Start the mixed-effects robustness check for the data as they are (refused before
    unblinding: it names the systems), then back to the report."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    unavailable = robustness_unavailable(study=study)
    if unavailable is not None:
        messages.error(request, unavailable["reason"])
    else:
        analysis_job_start(analysis=robustness_analysis(study=study), requested_by=request.user)
    return redirect(reverse("agreement:report", args=[study.slug]) + "#section-robustness")


@login_required
@require_POST
def study_aggregation(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    rules = {
        row["key"]: request.POST.get(f"rule-{row['key']}", "")[:20]
        for row in aggregation_choices(study=study)
        if f"rule-{row['key']}" in request.POST
    }
    minimum = request.POST.get("min_ratings", "").strip()[:3]
    try:
        min_ratings = whole_number_text(minimum) if minimum else None
        if minimum and (min_ratings is None or min_ratings < 0):
            raise AnalysisPlanError("The minimum of valid ratings is a whole number.")
        aggregation_set(study=study, actor=request.user, rules=rules, min_ratings=min_ratings)
    except ApplicationError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, "The aggregation is saved; the estimates are recomputed.")
    return redirect("agreement:report", slug=study.slug)


@login_required
@require_POST
def study_primary_measure(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    try:
        primary_measure_set(
            study=study, actor=request.user, measure=request.POST.get("measure", "")[:64]
        )
    except ApplicationError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, "The primary question is saved.")
    return redirect("agreement:report", slug=study.slug)


@login_required
@require_POST
def study_monitoring(request, slug):
    """The lead's choice of monitored collection of the primary question (before opening)."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.LEAD)
    try:
        monitoring_set(
            study=study,
            actor=request.user,
            enabled=request.POST.get("monitoring") == "on",
            alpha=request.POST.get("alpha", "")[:20],
            expected_effect=request.POST.get("expected_effect", "")[:20],
            margin=request.POST.get("margin", "")[:20],
        )
    except ApplicationError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, "Monitored collection is saved in the analysis plan.")
    return redirect(reverse("agreement:report", args=[study.slug]) + "#monitoring-plan")


@login_required
@require_POST
def study_monitor_stop(request, slug):
    """The lead stops collection once the monitor has decided: the study closes."""
    study, _ = access.get_study_for_user(request.user, slug, role=access.LEAD)
    try:
        study_stop_early(study=study, actor=request.user)
    except ApplicationError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, "Collection stopped under the plan: the study is closed.")
    return redirect(reverse("agreement:report", args=[study.slug]) + "#section-monitor")


@login_required
@require_POST
def study_stratum_shares(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    try:
        stratum_shares_set(study=study, actor=request.user, text=request.POST.get("shares", ""))
    except ApplicationError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, "Stratum shares saved; the estimates are recomputed.")
    return redirect("agreement:report", slug=study.slug)


@login_required
def study_report_bundle(request, slug):
    study, _ = access.get_study_for_user(request.user, slug, role=access.COORDINATOR)
    return report_bundle_response(study=study)
