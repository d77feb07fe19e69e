"""Reads for the anytime-valid monitor of the primary question (``services.monitor``): the
plan's part of the frozen protocol, the worker's keyed count of the non-tied comparisons,
and the state as every page, the API and the report show it.

Before unblinding, what is shown is symmetric in the two systems: the state ("decided" or
not, or no difference larger than the margin), the non-tied comparisons and the threshold.
Never the direction, the estimate, the interval or the statistic (with the count, the
statistic tells |wins - losses|).

The statistics (``stats.sequential``, the ratings' matrices) are imported by the reads that
compute: they load numpy, which a page that shows the state does not need.
"""

from agreement.analysis.roles import dimension_measure
from agreement.models import AnalysisPlan, PrimaryMonitor, StudyAgreement
from studies.models import Study, StudyEvent

METHOD = "beta-binomial mixture likelihood ratio against 0.5, Beta(c, c) prior, Ville's bound"


def monitoring_plan(*, study: Study) -> AnalysisPlan | None:
    """The analysis plan when it monitors the primary question; None otherwise."""
    return AnalysisPlan.objects.filter(study=study, monitoring=True).first()


def monitoring_settings(*, study: Study) -> dict:
    """The plan's monitoring settings as the lead's form shows them (the defaults unless
    set), and whether they can still change (until the study opens)."""
    from agreement.stats.sequential import mixing_for_effect

    plan = AnalysisPlan.objects.filter(study=study).first() or AnalysisPlan(study=study)
    return {
        "monitoring": plan.monitoring,
        "alpha": f"{plan.monitoring_alpha:.3f}",
        "expected_effect": f"{plan.monitoring_effect:.3f}",
        "margin": f"{plan.monitoring_margin:.3f}",
        "mixing": mixing_for_effect(float(plan.monitoring_effect)),
        "editable": not study.is_frozen,
    }


def monitoring_protocol_part(*, study: Study) -> dict | None:
    """The protocol document's ``monitoring`` part (``studies.protocol_parts``), or None
    when the plan does not monitor: a study without it keeps its fingerprint."""
    from agreement.stats.sequential import mixing_for_effect

    plan = monitoring_plan(study=study)
    if plan is None:
        return None
    return {
        "method": METHOD,
        "primary_measure": plan.primary_measure,
        "alpha": f"{plan.monitoring_alpha:.3f}",
        "expected_effect": f"{plan.monitoring_effect:.3f}",
        "margin": f"{plan.monitoring_margin:.3f}",
        "mixing": f"{mixing_for_effect(float(plan.monitoring_effect)):.6f}",
    }


def monitor_win_losses(*, study: Study) -> tuple[int, int] | None:
    """The primary question's wins and losses in the main phase, counted by the report's
    own rule (``preference_rates.primary_win_losses``) on the ratings read in the systems' order,
    even while blinded. Only the monitor's worker step calls this, and keeps nothing of it
    but what is symmetric in the systems. None without a win rate to count."""
    from agreement.analysis.preference_rates import primary_win_losses

    from .comparison import study_comparison_data
    from .ratings import study_ratings, study_submitted_ratings

    data = study_ratings(
        study=study, pilot=False, submitted=study_submitted_ratings(study=study), keyed=True
    )
    comparison = study_comparison_data(study=study, data=data, keyed=True)
    return primary_win_losses(comparison) if comparison is not None else None


def monitor_stop_record(*, study: Study) -> dict | None:
    """What was recorded when the lead stopped collection under the plan: the latest
    closing, if it stopped early (None if the study never did, or was reopened since)."""
    event = (
        study.events.filter(kind__in=(StudyEvent.Kind.CLOSED, StudyEvent.Kind.REOPENED))
        .order_by("-created_at", "-pk")
        .first()
    )
    if event is None or event.kind != StudyEvent.Kind.CLOSED:
        return None
    stopped = event.detail.get("stopped_early")
    return {**stopped, "at": event.created_at.isoformat()} if stopped else None


def monitor_shown(*, study: Study) -> dict:
    """The monitor as pages, the API, the report and the exports show it (see the module):
    ``monitoring`` False and nothing else when the plan does not monitor."""
    plan = monitoring_plan(study=study)
    if plan is None:
        return {"monitoring": False}
    monitor = PrimaryMonitor.objects.filter(study=study).first()
    requested = (
        StudyAgreement.objects.filter(study=study).values_list("requested", flat=True).first()
    )
    state = monitor.state if monitor else PrimaryMonitor.State.NOT_DECIDED
    stopped = monitor_stop_record(study=study)
    shown = {
        "monitoring": True,
        "alpha": float(plan.monitoring_alpha),
        "expected_effect": float(plan.monitoring_effect),
        "margin": float(plan.monitoring_margin),
        "state": state,
        "state_label": PrimaryMonitor.State(state).label,
        "evaluated": bool(monitor and monitor.evaluated_at),
        "evaluated_at": monitor.evaluated_at.isoformat()
        if monitor and monitor.evaluated_at
        else None,
        # Whether ratings came in that the state does not reflect yet.
        "current": bool(monitor and requested is not None and monitor.version >= requested),
        "n": monitor.n if monitor else 0,
        "threshold": 1.0 / float(plan.monitoring_alpha),
        "stopped_early": _stop_shown(stopped, unblinded=study.is_unblinded),
        "may_stop": bool(
            study.is_open
            and state in (PrimaryMonitor.State.DECIDED, PrimaryMonitor.State.WITHIN_MARGIN)
        ),
    }
    if study.is_unblinded:
        shown["statistic"] = monitor.statistic if monitor else None
    return shown


def _stop_shown(stopped: dict | None, *, unblinded: bool) -> dict | None:
    if stopped is None:
        return None
    keep = ("at", "state", "n", "threshold") + (("statistic",) if unblinded else ())
    return {key: stopped[key] for key in keep if key in stopped}


def monitor_interval(*, plan: AnalysisPlan, wins: int, losses: int) -> dict:
    """The anytime-valid interval of the primary win rate (after unblinding only: it shows
    the direction), from the report's own wins and losses."""
    from agreement.stats.sequential import sequential_win_rate

    state = sequential_win_rate(
        wins,
        losses,
        alpha=float(plan.monitoring_alpha),
        expected_effect=float(plan.monitoring_effect),
    )
    return {
        "wins": wins,
        "losses": losses,
        "rate": wins / state.n if state.n else None,
        "low": state.low,
        "high": state.high,
        "decided": state.decided,
        "within_margin": state.within(float(plan.monitoring_margin)),
        "statistic": state.statistic,
        "threshold": state.threshold,
        "mixing": state.mixing,
    }


def monitor_report(*, study: Study, comparison: dict | None) -> dict:
    """The report's "Monitored collection": the state as ``monitor_shown`` gives it and,
    after unblinding (``comparison``), the anytime-valid interval of the primary win rate
    beside the fixed-sample one, with which of them is valid."""
    shown = monitor_shown(study=study)
    plan = monitoring_plan(study=study)
    if plan is None or not study.is_unblinded or not comparison:
        return shown
    pair = next(
        (
            preference["pairs"][0]
            for preference in comparison.get("preferences") or []
            if dimension_measure(preference["key"]) == plan.primary_measure and preference["pairs"]
        ),
        None,
    )
    if pair is None:
        return shown
    items = pair["items"]
    stopped = shown["stopped_early"] is not None
    return {
        **shown,
        "primary": {
            "first": pair["first"],
            "second": pair["second"],
            **monitor_interval(plan=plan, wins=items["wins"], losses=items["losses"]),
        },
        "fixed": {key: items[key] for key in ("rate", "low", "high", "p_value")},
        # Stopped when the monitor decided: the fixed-sample interval and test assume a
        # size fixed in advance, which the stop was not. Run to the end of the design: both
        # hold (the anytime-valid one is wider, the price of looking after every rating).
        "valid": "anytime" if stopped else "both",
    }
