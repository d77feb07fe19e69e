"""The study report page, its printable form and the zip bundle."""

import math
from pathlib import Path

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.staticfiles import finders
from django.http import StreamingHttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from agreement.analysis.jobs import (
    analysis_job_start,
    analysis_shown,
    robustness_analysis,
    robustness_unavailable,
)
from agreement.report.bundle import report_bundle_chunks
from agreement.report.charts import PALETTE, alpha_chart, forest, grouped_bars, histogram, scatter
from agreement.report.sections import study_report
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
from studies import access
from studies.errors import ApplicationError


def report_charts(report: dict) -> dict:
    """The report's charts: SVG markup (escaped in ``charts``, so safe to show), and the
    alpha chart's coordinates for its template."""
    charts = {}
    if report["agreement"]["dimensions"]:
        charts["agreement"] = alpha_chart(report["agreement"])
    comparison = report.get("comparison")
    if not comparison:
        return charts
    svgs = {
        "means": _means_chart(comparison),
        "differences": _differences_chart(comparison),
        "win_rate": _win_rate_chart(comparison),
        **_length_charts(comparison["length"]),
    }
    charts |= {key: mark_safe(svg) for key, svg in svgs.items() if svg}  # noqa: S308
    charts["distributions"] = [
        (
            d["name"],
            mark_safe(  # noqa: S308
                grouped_bars(
                    [f"{v:g}" for v in d["values"]],
                    [{"name": s["system"], "counts": s["counts"]} for s in d["systems"]],
                    label=f"{d['name']}: how often each score was given, per system",
                )
            ),
        )
        for d in comparison["distributions"]
    ]
    return charts


def _means_chart(comparison: dict) -> str | None:
    if not comparison["per_system"]:  # a rubric without points has no score to chart
        return None
    return forest(
        [
            {
                "name": f"{row['name']}: {s['system']}",
                "value": s["mean"],
                "low": s["low"],
                "high": s["high"],
                "color": _color(i),
            }
            for row in comparison["per_system"][:6]
            for i, s in enumerate(row["systems"])
        ],  # fmt: skip
        label="Mean score per system with 95% bootstrap intervals over test cases",
        low=0.0,
        high=0.0,
    )


def _differences_chart(comparison: dict) -> str | None:
    if not comparison["cases_plot"]:
        return None
    first = comparison["cases_plot"][0]
    return histogram(
        first["differences"],
        label=f"Per test case: total of {first['second']} minus total of {first['first']}",
        x_label=f"total of {first['second']} minus total of {first['first']} (points)",
    )


def _win_rate_chart(comparison: dict) -> str | None:
    wins = [
        {"name": f"{p['name']}: {pair['second']} over {pair['first']}",
         "value": pair["items"]["rate"], "low": pair["items"]["boot_low"],
         "high": pair["items"]["boot_high"]}
        for p in comparison["preferences"] for pair in p["pairs"]
    ]  # fmt: skip
    if not wins:
        return None
    return forest(
        wins,
        label="Win rate without ties, 95% bootstrap interval over test cases",
        low=0.0,
        high=1.0,
        lines=(0.5,),
    )


def _length_charts(length: dict) -> dict[str, str]:
    """Length against the score difference where there is a score, and against the
    preference where there is one."""
    fit = length["score"]
    charts = {}
    if fit is not None:
        charts["length_score"] = scatter(
            [(p["length"], p["score"]) for p in length["points"]],
            label="Length difference against total score difference, per test case",
            x_label="length difference (characters, second minus first system)",
            y_label="score difference",
            line=(fit["intercept"], fit["slope"] / 100.0) if fit["slope"] is not None else None,
        )
    preference = length.get("preference")
    if preference and preference["points"]:
        curve = None
        if preference["slope"] is not None:
            a, b = preference["intercept"], preference["slope"] / 100.0
            curve = lambda x: 1.0 / (1.0 + math.exp(-(a + b * x)))  # noqa: E731
        charts["length_preference"] = scatter(
            [(p["length"], p["second_preferred"]) for p in preference["points"]],
            label="Length difference against the preference verdict (1 = second system)",
            x_label="length difference (characters, second minus first system)",
            y_label="second system preferred",
            curve=curve,
        )
    return charts


def _color(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


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
        if minimum and not minimum.isdigit():
            raise AnalysisPlanError("The minimum of valid ratings is a whole number.")
        aggregation_set(
            study=study,
            actor=request.user,
            rules=rules,
            min_ratings=int(minimum) if minimum else None,
        )
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
    report = study_report(study=study)
    css = Path(finders.find("css/report.css")).read_text(encoding="utf-8")
    html = render_to_string(
        "agreement/report_file.html",
        {"study": study, "report": report, "charts": report_charts(report), "css": css},
    )
    # Streamed while it is written: the exports in it grow with the study.
    response = StreamingHttpResponse(
        report_bundle_chunks(study=study, report=report, report_html=html),
        content_type="application/zip",
    )
    response["Content-Disposition"] = content_disposition_header(True, f"{study.slug}-report.zip")
    response["Cache-Control"] = "no-store"  # ratings, and after unblinding the key
    return response
