"""Monitored collection of the primary question: the plan's choice (frozen with the
protocol), the worker's evaluation of the anytime-valid monitor after each recompute, and
the lead's early stop once it has decided (docs/statistics.md, "Monitored collection").

The monitor (``stats.sequential``) is symmetric in the two systems; what is stored and
shown before unblinding is too (``selectors.monitor``).
"""

from decimal import Decimal, InvalidOperation

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from agreement.models import AnalysisPlan, PrimaryMonitor
from agreement.selectors.monitor import monitor_shown, monitor_win_losses, monitoring_plan
from agreement.services.plan import AnalysisPlanError, win_rate_measures
from studies.events import study_event_record
from studies.locks import study_lock
from studies.models import Study, StudyEvent
from studies.services.lifecycle import study_close
from studies.services.webhooks import webhook_event_announce
from studies.signals import analysis_inputs_announce

# (lowest, highest) of each setting; the alpha as the fixed tests allow it.
BOUNDS = {
    "alpha": (Decimal("0.001"), Decimal("0.200")),
    "expected_effect": (Decimal("0.010"), Decimal("0.400")),
    "margin": (Decimal("0.005"), Decimal("0.400")),
}
NAMES = {
    "alpha": "The monitor's alpha",
    "expected_effect": "The expected effect |p1 - 0.5|",
    "margin": "The margin around 0.5",
}


class MonitoringError(AnalysisPlanError):
    """Monitoring cannot be set or the study cannot stop; the message says why."""


def _decimal(value, name: str) -> Decimal:
    low, high = BOUNDS[name]
    try:
        number = Decimal(str(value).strip()[:20])
    except InvalidOperation:
        raise MonitoringError(f"{NAMES[name]} is a number from {low} to {high}.") from None
    if not number.is_finite() or not low <= number <= high:
        raise MonitoringError(f"{NAMES[name]} is a number from {low} to {high}.")
    return number.quantize(Decimal("0.001"))


@transaction.atomic
def monitoring_set(
    *, study: Study, actor: User, enabled: bool, alpha, expected_effect, margin
) -> AnalysisPlan:
    """Choose monitored collection of the primary question (or not), with its alpha, the
    expected effect that sets its mixture and the futility margin. Only before the study
    opens: the monitor is frozen with the protocol (its fingerprint holds it)."""
    study = study_lock(study.pk)  # shared: opening waits for this, raters do not
    if study.is_frozen:
        raise MonitoringError(
            "The protocol is frozen: monitored collection is chosen before the study opens."
        )
    values = {
        "monitoring_alpha": _decimal(alpha, "alpha"),
        "monitoring_effect": _decimal(expected_effect, "expected_effect"),
        "monitoring_margin": _decimal(margin, "margin"),
    }
    plan, _ = AnalysisPlan.objects.select_for_update().get_or_create(study=study)
    if enabled and plan.primary_measure not in win_rate_measures(study=study):
        raise MonitoringError(
            "Monitoring follows the primary question's win rate: name a win rate as the "
            "primary question first."
        )
    changed = {
        "monitoring": bool(enabled),
        **{name: value for name, value in values.items() if enabled},
    }
    if all(getattr(plan, name) == value for name, value in changed.items()):
        return plan
    for name, value in changed.items():
        setattr(plan, name, value)
    plan.save(update_fields=[*changed, "updated_at"])
    described = (
        f"on (alpha {values['monitoring_alpha']}, expected effect "
        f"{values['monitoring_effect']}, margin 0.5 +/- {values['monitoring_margin']})"
        if enabled
        else "off"
    )
    study_event_record(
        study=study,
        actor=actor,
        kind=StudyEvent.Kind.SETTINGS_CHANGED,
        reason=f"Monitored collection of the primary question: {described}",
        analysis_plan={name: str(value) for name, value in changed.items()},
    )
    analysis_inputs_announce(study_id=study.pk, reason="monitoring")
    return plan


def monitor_evaluate(*, study: Study, version: int) -> bool:
    """Evaluate the monitor on the study's main-phase data as they are now and store its
    state under ``version`` (the recompute request the run serves); False when the plan
    does not monitor, the study has not opened, or a fresher state is stored. One query
    (the plan) for a study that is not monitored."""
    from agreement.stats.sequential import sequential_win_rate  # numpy: the worker's step

    plan = monitoring_plan(study=study)
    if plan is None or study.opened_at is None:
        return False
    counts = monitor_win_losses(study=study)
    if counts is None:
        state, n, statistic = PrimaryMonitor.State.UNAVAILABLE, 0, 1.0
    else:
        monitor = sequential_win_rate(
            *counts,
            alpha=float(plan.monitoring_alpha),
            expected_effect=float(plan.monitoring_effect),
        )
        n, statistic = monitor.n, monitor.statistic
        if monitor.decided:
            state = PrimaryMonitor.State.DECIDED
        elif monitor.within(float(plan.monitoring_margin)):
            state = PrimaryMonitor.State.WITHIN_MARGIN
        else:
            state = PrimaryMonitor.State.NOT_DECIDED
    stored, _ = PrimaryMonitor.objects.get_or_create(study=study)
    written = PrimaryMonitor.objects.filter(study=study, version__lt=version).update(
        version=version,
        state=state,
        n=n,
        statistic=statistic,
        threshold=1.0 / float(plan.monitoring_alpha),
        evaluated_at=timezone.now(),
    )
    if written and (state != stored.state or not stored.evaluated_at):
        # The state as every page shows it: symmetric in the systems, with no statistic.
        webhook_event_announce(study_id=study.pk, event="monitor.changed", state=state, n=n)
    return bool(written)


@transaction.atomic
def study_stop_early(*, study: Study, actor: User) -> Study:
    """Close the study because the monitor has decided (or found no difference larger than
    the margin), through the lifecycle's close, recording the non-tied comparisons and the
    monitor's value it stopped at. Refused unless the plan monitors, the study is open and
    the monitor's state reflects every rating so far."""
    study = study_lock(study.pk, exclusive=True)  # as the close takes it: no upgrade
    shown = monitor_shown(study=study)
    if not shown["monitoring"]:
        raise MonitoringError("The analysis plan does not monitor the primary question.")
    if not study.is_open:
        raise MonitoringError("Only an open study stops collection.")
    if not shown["may_stop"]:
        raise MonitoringError(
            "The monitor has not decided: collection goes on until it does or the design "
            "is complete."
        )
    if not shown["current"]:
        raise MonitoringError(
            "Ratings came in since the monitor's last look; it is being brought up to date. "
            "Try again in a moment."
        )
    monitor = PrimaryMonitor.objects.get(study=study)
    return study_close(
        study=study,
        actor=actor,
        stopped_early={
            "state": monitor.state,
            "n": monitor.n,
            "statistic": monitor.statistic,
            "threshold": monitor.threshold,
            "version": monitor.version,
        },
    )
