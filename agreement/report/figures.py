"""The report's figures, drawn from its numbers (``sections.study_report``): the page, its
printable file and the bundle show the same ones."""

import math

from django.utils.safestring import mark_safe

from agreement.report.charts import PALETTE, alpha_chart, forest, grouped_bars, histogram, scatter


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
