"""The pay check: the hourly equivalent of the study's pay, from the raters' active times.

The one owner of the computation, read by the welfare settings page, the set-up checklist
(before opening, from pilot times), the overview (once main-study times come in) and the
report's raters item. Active time is what the rating screen measured
(``Assignment.active_seconds``) on submitted cases; cases rated in an offline worksheet, or
with no time measured, have no time to read and are counted apart as untimed.
"""

from dataclasses import dataclass, field
from decimal import Decimal

from annotation.models import Assignment
from annotation.pay_equivalent import hourly_per_case, percentile
from studies.models import Study, WelfareSettings
from studies.selectors import welfare_settings_for
from studies.setup_checklist import ChecklistItem

PHASES = (("pilot", "Pilot"), ("main", "Main study"))


@dataclass(frozen=True)
class PayRow:
    """Active time per case in one phase (and stratum, or all when ``stratum`` is None)."""

    phase: str
    stratum: str | None
    n: int  # timed submitted cases
    median_seconds: float
    p90_seconds: float
    hourly_at_median: Decimal | None
    hourly_at_p90: Decimal | None
    below_at_median: bool
    below_at_p90: bool

    @property
    def below(self) -> bool:
        return self.below_at_median or self.below_at_p90


@dataclass(frozen=True)
class PayCheck:
    basis: str
    basis_label: str
    amount: Decimal | None
    currency: str
    minimum: Decimal | None
    rows: list[PayRow] = field(default_factory=list)
    untimed: int = 0

    @property
    def paid(self) -> bool:
        return self.basis in (WelfareSettings.PayBasis.HOUR, WelfareSettings.PayBasis.CASE)

    def overall(self, phase: str) -> PayRow | None:
        return next((r for r in self.rows if r.phase == phase and r.stratum is None), None)

    def warnings(self, phase: str) -> list[str]:
        """Each place where the phase's times give an hourly equivalent under the minimum."""
        name = dict(PHASES)[phase].lower()
        messages = []
        for row in self.rows:
            if row.phase != phase or not row.below:
                continue
            where = (
                f"{name.capitalize()} times"
                if row.stratum is None
                else f"In stratum {row.stratum or '(none)'!r}, {name} times"
            )
            at = (
                f"{row.hourly_at_median} {self.currency} at the median"
                if row.below_at_median
                else f"{row.hourly_at_p90} {self.currency} at the 90th percentile"
            )
            messages.append(
                f"{where} give an hourly equivalent of {at}, below the minimum of "
                f"{self.minimum} {self.currency}."
            )
        return messages

    def summary(self, phase: str) -> str:
        """The pay and its hourly equivalent in one sentence, for the report."""
        if self.basis == WelfareSettings.PayBasis.UNPAID:
            return "Raters were volunteers (unpaid)."
        if not self.paid:
            return ""
        unit = "hour" if self.basis == WelfareSettings.PayBasis.HOUR else "case"
        text = f"{self.amount} {self.currency} per {unit}"
        row = self.overall(phase)
        if self.basis == WelfareSettings.PayBasis.CASE and row is not None:
            text += (
                f"; hourly equivalent {row.hourly_at_median} {self.currency} at the median "
                f"active time per case ({_minutes(row.median_seconds)}), "
                f"{row.hourly_at_p90} {self.currency} at the 90th percentile "
                f"({_minutes(row.p90_seconds)}), from {row.n} {dict(PHASES)[phase].lower()} "
                "case(s)"
            )
        elif self.basis == WelfareSettings.PayBasis.CASE:
            text += "; no active times yet to give an hourly equivalent"
        if self.minimum is not None:
            text += f"; minimum hourly equivalent {self.minimum} {self.currency}"
        return text + "."


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def _row(*, phase: str, stratum: str | None, times: list[int], welfare: WelfareSettings) -> PayRow:
    median = percentile(times, 0.5)
    p90 = percentile(times, 0.9)
    amount = welfare.pay_amount
    if welfare.pay_basis == WelfareSettings.PayBasis.CASE and amount is not None:
        at_median, at_p90 = hourly_per_case(amount, median), hourly_per_case(amount, p90)
    elif welfare.pay_basis == WelfareSettings.PayBasis.HOUR and amount is not None:
        at_median = at_p90 = amount
    else:
        at_median = at_p90 = None
    minimum = welfare.minimum_hourly

    def below(hourly):
        return minimum is not None and hourly is not None and hourly < minimum

    return PayRow(
        phase=phase,
        stratum=stratum,
        n=len(times),
        median_seconds=median,
        p90_seconds=p90,
        hourly_at_median=at_median,
        hourly_at_p90=at_p90,
        below_at_median=below(at_median),
        below_at_p90=below(at_p90),
    )


def pay_check(*, study: Study) -> PayCheck:
    """Per phase (pilot, main) and, where the study has several strata, per stratum: the
    median and 90th percentile of active seconds per submitted case, and the hourly
    equivalent at each (pay per case: amount x 3600 / seconds; pay per hour: the amount)."""
    welfare = welfare_settings_for(study=study)
    submitted = Assignment.objects.filter(rater__study=study, status=Assignment.Status.SUBMITTED)
    times: dict[tuple[str, str], list[int]] = {}
    untimed = 0
    rows = submitted.values_list("active_seconds", "submitted_at", "source", "test_case__stratum")
    for seconds, submitted_at, source, stratum in rows.iterator(chunk_size=5000):
        if source != Assignment.Source.SCREEN or not seconds:
            untimed += 1
            continue
        times.setdefault((study.phase_at(submitted_at), stratum), []).append(seconds)
    result = []
    for phase, _ in PHASES:
        by_stratum = {s: t for (p, s), t in times.items() if p == phase}
        if not by_stratum:
            continue
        pooled = [seconds for values in by_stratum.values() for seconds in values]
        result.append(_row(phase=phase, stratum=None, times=pooled, welfare=welfare))
        if len(by_stratum) > 1:
            result += [
                _row(phase=phase, stratum=stratum, times=by_stratum[stratum], welfare=welfare)
                for stratum in sorted(by_stratum)
            ]
    return PayCheck(
        basis=welfare.pay_basis,
        basis_label=welfare.get_pay_basis_display(),
        amount=welfare.pay_amount,
        currency=welfare.pay_currency,
        minimum=welfare.minimum_hourly,
        rows=result,
        untimed=untimed,
    )


def setup_checklist_pay(*, study: Study) -> list[ChecklistItem]:
    """The set-up checklist's item on pay (``studies.setup_checklist``): recorded, and at
    or above the minimum hourly equivalent on the pilot's times."""
    check = pay_check(study=study)
    warnings = check.warnings("pilot")
    # Once pay is recorded the item is done; what is still to check is its warning.
    done, warning = check.basis != WelfareSettings.PayBasis.NONE, ""
    if not done:
        detail = "Pay is not recorded yet."
    elif check.basis == WelfareSettings.PayBasis.UNPAID:
        detail = "Raters are volunteers (unpaid)."
    else:
        detail = check.summary("pilot").rstrip(".") + "."
        if check.basis == WelfareSettings.PayBasis.CASE and check.overall("pilot") is None:
            detail += " Run the pilot to check its hourly equivalent on task times."
        if warnings:
            warning = " ".join(warnings)
        elif check.minimum is None:
            warning = "No minimum hourly equivalent is set to check the pay against."
    return [
        ChecklistItem(
            order=55,
            title="Rater pay",
            done=done,
            detail=detail,
            url_name="annotation:welfare",
            optional=True,
            warning=warning,
        )
    ]
