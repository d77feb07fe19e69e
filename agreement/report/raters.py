"""The report's checklist item "Rater number, recruitment, expertise, training and pay",
filled from the app's data (protocol sections 3 and 4).

Aggregates only: the raters by status, the recruitment text the lead wrote, the rater
profile as suppressed counts (``profile_summary``), the training and qualification
counts, the calibration calls, and the pay with its hourly equivalent (``pay_check``).
Nothing here names a rater beside a profile answer, and nothing reads a system.
"""

from annotation.models import CalibrationAttendance, CalibrationCall, TrainingItem
from annotation.selectors.pay import pay_check
from annotation.selectors.profile import profile_summary
from studies.models import Membership, Study, WelfareSettings
from studies.selectors import welfare_settings_for


def _training(study: Study, raters: list[dict]) -> dict:
    kinds = TrainingItem.Kind
    items = study.training_items.values_list("kind", flat=True)
    finished = [r["qualified"] for r in raters if r["qualified"] is not None]
    calls = CalibrationCall.objects.filter(study=study).order_by("held_at")
    attended = dict.fromkeys(calls.values_list("pk", flat=True), 0)
    for call_id in CalibrationAttendance.objects.filter(call__in=calls).values_list(
        "call_id", flat=True
    ):
        attended[call_id] += 1
    return {
        "training_items": sum(1 for kind in items if kind == kinds.TRAINING),
        "qualification_items": sum(1 for kind in items if kind == kinds.QUALIFICATION),
        "qualification_finished": len(finished),
        "qualification_passed": sum(1 for passed in finished if passed),
        "qualification_pass_rate": (
            round(sum(1 for passed in finished if passed) / len(finished), 3) if finished else None
        ),
        "calibration_calls": [
            {"held_at": call.held_at.date().isoformat(), "attended": attended[call.pk]}
            for call in calls
        ],
    }


def _pay(study: Study) -> dict:
    check = pay_check(study=study)
    # The main study's times once there are any; the pilot's before.
    phase = "main" if check.overall("main") is not None else "pilot"
    row = check.overall(phase)
    return {
        "basis": check.basis,
        "amount": None if check.amount is None else str(check.amount),
        "currency": check.currency,
        "minimum_hourly": None if check.minimum is None else str(check.minimum),
        "phase": phase,
        "hourly_at_median": None
        if row is None or row.hourly_at_median is None
        else str(row.hourly_at_median),
        "hourly_at_p90": None
        if row is None or row.hourly_at_p90 is None
        else str(row.hourly_at_p90),
        "summary": check.summary(phase),
        "warnings": check.warnings(phase),
    }


def raters_item(*, study: Study, raters: list[dict]) -> dict:
    """The item's content and what it still lacks (``missing``, empty when filled).

    ``raters`` is the report's list of raters by pseudonym (status and qualification).
    """
    statuses = [r["status"] for r in raters]
    counts = {status: statuses.count(status) for status in Membership.Status.values}
    welfare: WelfareSettings = welfare_settings_for(study=study)
    expertise = profile_summary(study=study)
    training = _training(study, raters)
    pay = _pay(study)
    missing = []
    if not raters:
        missing.append("raters")
    if not welfare.recruitment:
        missing.append("the recruitment text (Rater welfare page)")
    if not expertise["questions"] or not expertise["consented"]:
        missing.append("expertise: profile questions answered by raters")
    if not (
        training["training_items"]
        or training["qualification_finished"]
        or training["calibration_calls"]
    ):
        missing.append("training: training examples, a qualification test or a calibration call")
    paid_by_case = welfare.pay_basis == WelfareSettings.PayBasis.CASE
    if welfare.pay_basis == WelfareSettings.PayBasis.NONE:
        missing.append("the pay (Rater welfare page)")
    elif paid_by_case and pay["hourly_at_median"] is None:
        missing.append("the pay's hourly equivalent: active times of submitted cases")
    return {
        "number": len(raters),
        "by_status": counts,
        "recruitment": welfare.recruitment,
        "expertise": expertise,
        "training": training,
        "pay": pay,
        "missing": missing,
    }
