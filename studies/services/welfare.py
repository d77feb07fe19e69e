"""The study's rater-welfare settings (protocol section 3): exposure limits, content
warnings per stratum, pay, recruitment, retention and the profile's smallest cell.

One writer for the settings page and the API. Every value is checked here, all of them
before anything is written: a request with one bad value changes nothing. Exposure limits
and content warnings are part of the protocol (raters are told them when they consent, and
the limits are in its fingerprint), so they freeze when the study opens; pay, recruitment,
retention and the profile's smallest cell can change at any time. Every change is recorded
in the audit trail with its old and new value.
"""

import re
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import transaction

from core.user_input import unstorable, whole_number_text
from studies.errors import StudySetupError
from studies.events import study_event_record
from studies.locks import study_lock
from studies.models import StratumSetting, Study, StudyEvent, WelfareSettings
from studies.selectors import information_sheet_additions, study_strata, welfare_settings_for

# The settings' bounds, as the page shows them and the service enforces them.
MINUTES_BOUNDS = (1, 1440)  # a day
RETENTION_BOUNDS = (0, 3650)  # up to ten years after closing
MIN_CELL_BOUNDS = (3, 100)
PAY_MAX = Decimal("100000")
MINIMUM_HOURLY_MAX = Decimal("10000")
MAX_TEXT = 2000
MAX_NUMBER_CHARS = 20
CURRENCY = re.compile(r"[A-Z]{3}")

WELFARE_FIELDS = (
    "daily_minutes",
    "pay_basis",
    "pay_amount",
    "pay_currency",
    "minimum_hourly",
    "recruitment",
    "retention_days",
    "profile_min_cell",
)
STRATUM_FIELDS = ("content_warning", "daily_minutes")
# Part of the protocol: frozen once the study opens.
FROZEN_FIELDS = frozenset({"daily_minutes"})
PAID = (WelfareSettings.PayBasis.HOUR, WelfareSettings.PayBasis.CASE)
LABELS = {
    "daily_minutes": "daily limit (minutes)",
    "pay_basis": "pay basis",
    "pay_amount": "pay amount",
    "pay_currency": "currency",
    "minimum_hourly": "minimum hourly equivalent",
    "recruitment": "recruitment",
    "retention_days": "retention (days)",
    "profile_min_cell": "smallest profile count reported",
}


def _empty(value) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _whole(value, *, label: str, bounds: tuple[int, int], problems: list[str]) -> int | None:
    low, high = bounds
    if _empty(value):
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        problems.append(f"{label}: give a whole number {low}-{high}.")
        return None
    number = whole_number_text(str(value), max_chars=MAX_NUMBER_CHARS)
    if number is None or not low <= number <= high:
        problems.append(f"{label}: give a whole number {low}-{high}.")
        return None
    return number


def _amount(value, *, label: str, high: Decimal, problems: list[str]) -> Decimal | None:
    if _empty(value):
        return None
    message = f"{label}: give an amount from 0 to {high:,} with at most two decimals."
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        problems.append(message)
        return None
    text = str(value).strip()
    try:
        amount = Decimal(text) if len(text) <= MAX_NUMBER_CHARS else None
    except InvalidOperation:
        amount = None
    if (
        amount is None
        or not amount.is_finite()
        or not 0 <= amount <= high
        or amount != amount.quantize(Decimal("0.01"))
    ):
        problems.append(message)
        return None
    return amount.quantize(Decimal("0.01"))


def _text(value, *, label: str, problems: list[str]) -> str:
    if _empty(value):
        return ""
    if not isinstance(value, str):
        problems.append(f"{label}: give a text.")
        return ""
    what = unstorable(value)
    if what:
        problems.append(f"{label}: the text contains {what}, which cannot be stored.")
        return ""
    text = value.strip().replace("\r\n", "\n")
    if len(text) > MAX_TEXT:
        problems.append(f"{label}: keep it under {MAX_TEXT:,} characters.")
        return ""
    return text


WHOLE_BOUNDS = {
    "daily_minutes": MINUTES_BOUNDS,
    "retention_days": RETENTION_BOUNDS,
    "profile_min_cell": MIN_CELL_BOUNDS,
}
AMOUNT_MAX = {"pay_amount": PAY_MAX, "minimum_hourly": MINIMUM_HOURLY_MAX}


def _currency(value, *, problems: list[str]) -> str | None:
    if _empty(value):
        return ""
    if not isinstance(value, str) or not CURRENCY.fullmatch(value.strip().upper()):
        problems.append("currency: give the three-letter ISO 4217 code, e.g. EUR or USD.")
        return None
    return value.strip().upper()


def welfare_values_clean(*, values: dict) -> tuple[dict[str, Any], list[str]]:
    """The study-wide values given, cleaned, and the problems found (none: all valid)."""
    problems = [
        f"{str(name)[:50]}: not a welfare setting." for name in values if name not in WELFARE_FIELDS
    ]
    cleaned: dict[str, Any] = {}
    for name, bounds in WHOLE_BOUNDS.items():
        if name in values:
            cleaned[name] = _whole(
                values[name], label=LABELS[name], bounds=bounds, problems=problems
            )
    for name, high in AMOUNT_MAX.items():
        if name in values:
            cleaned[name] = _amount(values[name], label=LABELS[name], high=high, problems=problems)
    if cleaned.get("profile_min_cell", 0) is None:
        # Required: the suppression of small cells cannot be switched off.
        cleaned.pop("profile_min_cell")
        if LABELS["profile_min_cell"] not in _fields_with_problems(problems):
            low, high = MIN_CELL_BOUNDS
            problems.append(f"{LABELS['profile_min_cell']}: give a whole number {low}-{high}.")
    if "pay_basis" in values:
        if values["pay_basis"] in WelfareSettings.PayBasis.values:
            cleaned["pay_basis"] = values["pay_basis"]
        else:
            choices = ", ".join(WelfareSettings.PayBasis.values)
            problems.append(f"pay basis: choose one of {choices}.")
    if "pay_currency" in values:
        currency = _currency(values["pay_currency"], problems=problems)
        if currency is not None:
            cleaned["pay_currency"] = currency
    if "recruitment" in values:
        cleaned["recruitment"] = _text(
            values["recruitment"], label=LABELS["recruitment"], problems=problems
        )
    return cleaned, problems


def _pay_problems(after: dict, problems: list[str]) -> None:
    """What a paid study must give with its pay, once per field; clears an unpaid amount."""
    given = _fields_with_problems(problems)
    if after["pay_basis"] in PAID:
        if after["pay_amount"] is None and "pay amount" not in given:
            problems.append("pay amount: give the amount paid per hour or per case.")
        if not after["pay_currency"] and "currency" not in given:
            problems.append("currency: give the currency of the pay.")
            given.add("currency")
    else:
        # Not paid (or not recorded): no amount to keep.
        after["pay_amount"] = None
    if (
        after["minimum_hourly"] is not None
        and not after["pay_currency"]
        and "currency" not in given
    ):
        problems.append("currency: give the currency of the minimum hourly equivalent.")


def _strata_clean(*, study: Study, strata: list, problems: list[str]) -> dict[str, dict]:
    """stratum -> {content_warning, daily_minutes} for the rows given."""
    known = set(study_strata(study=study))
    if not isinstance(strata, list) or len(strata) > max(len(known), 1):
        problems.append(f"strata: give at most one row for each of the {len(known)} strata.")
        return {}
    rows: dict[str, dict] = {}
    for number, row in enumerate(strata, start=1):
        if not isinstance(row, dict) or not isinstance(row.get("stratum", ""), str):
            problems.append(f"strata row {number}: give stratum, content_warning, daily_minutes.")
            continue
        stratum = row.get("stratum", "")
        name = stratum[:50] or "(no stratum)"
        if stratum not in known:
            problems.append(f"strata row {number}: the study has no stratum {name!r}.")
            continue
        if stratum in rows:
            problems.append(f"strata row {number}: {name!r} is given twice.")
            continue
        extra = sorted(set(row) - {"stratum", *STRATUM_FIELDS})
        if extra:
            problems.append(f"strata row {number}: unknown field {str(extra[0])[:50]!r}.")
            continue
        rows[stratum] = {
            "content_warning": _text(
                row.get("content_warning"),
                label=f"content warning of {name!r}",
                problems=problems,
            ),
            "daily_minutes": _whole(
                row.get("daily_minutes"),
                label=f"daily limit of {name!r} (minutes)",
                bounds=MINUTES_BOUNDS,
                problems=problems,
            ),
        }
    return rows


def _json(value):
    return str(value) if isinstance(value, Decimal) else value


def _strata_changes(study: Study, rows: dict[str, dict]) -> tuple[dict, dict]:
    """The warnings and the limits the rows change, each stratum's {"from", "to"}."""
    current = {s.stratum: s for s in StratumSetting.objects.filter(study=study)}
    warnings, limits = {}, {}
    for stratum, row in rows.items():
        old = current.get(stratum)
        old_warning = old.content_warning if old else ""
        old_minutes = old.daily_minutes if old else None
        if row["content_warning"] != old_warning:
            warnings[stratum] = {"from": old_warning, "to": row["content_warning"]}
        if row["daily_minutes"] != old_minutes:
            limits[stratum] = {"from": old_minutes, "to": row["daily_minutes"]}
    return warnings, limits


def consent_renew_if_sheet_changed(*, study: Study, sheet_before: list[str]) -> bool:
    """Whether the information sheet's additions (``information_sheet_additions``) differ
    from ``sheet_before``, and so the consent version was raised: pilot raters agreed to a
    sheet without the new warning or limit, and like a changed consent text
    (``studies.services.settings``) a new version asks them again. In a draft no one has
    agreed yet; an open study refuses these changes. ``study`` is locked by the caller."""
    if study.is_draft or information_sheet_additions(study=study) == sheet_before:
        return False
    study.consent_version += 1
    study.save(update_fields=["consent_version"])
    return True


@transaction.atomic
def welfare_settings_update(
    *, study: Study, actor, values: dict, strata: list | None = None
) -> WelfareSettings:
    """Save the study's welfare settings and its strata's warnings and limits, all or
    nothing. ``values`` holds any of ``WELFARE_FIELDS``; ``strata`` rows of
    {"stratum", "content_warning", "daily_minutes"} (a stratum left out keeps its
    settings). Raises ``StudySetupError`` listing every problem, or when a frozen setting
    would change after the study opened. A change of what the information sheet states
    (warnings, limits) during the pilot asks the raters to consent again."""
    study = study_lock(study.pk, exclusive=True)
    sheet_before = information_sheet_additions(study=study)
    if not isinstance(values, dict):
        raise StudySetupError("Give the settings as an object of field names and values.")
    cleaned, problems = welfare_values_clean(values=values)
    rows = _strata_clean(study=study, strata=strata or [], problems=problems)
    settings = welfare_settings_for(study=study)
    after = {name: cleaned.get(name, getattr(settings, name)) for name in WELFARE_FIELDS}
    _pay_problems(after, problems)
    if problems:
        count = len(problems)
        raise StudySetupError(
            f"The welfare settings have {count} problem{'s' if count != 1 else ''}; "
            "nothing was saved.",
            problems=problems,
        )
    changed = {
        name: {"from": _json(getattr(settings, name)), "to": _json(after[name])}
        for name in WELFARE_FIELDS
        if getattr(settings, name) != after[name]
    }
    warnings, limits = _strata_changes(study, rows)
    if study.is_frozen and (FROZEN_FIELDS & set(changed) or warnings or limits):
        raise StudySetupError(
            f"The study is {study.get_status_display().lower()}: exposure limits and content "
            "warnings are part of its frozen protocol (raters consented to them) and can no "
            "longer change. Pay, recruitment and retention can."
        )
    if changed:
        for name in changed:
            setattr(settings, name, after[name])
        settings.save()
    for stratum in set(warnings) | set(limits):
        row = rows[stratum]
        if not row["content_warning"] and row["daily_minutes"] is None:
            StratumSetting.objects.filter(study=study, stratum=stratum).delete()
        else:
            StratumSetting.objects.update_or_create(study=study, stratum=stratum, defaults=row)
    consent_asked_again = consent_renew_if_sheet_changed(study=study, sheet_before=sheet_before)
    if changed or limits or consent_asked_again:
        detail: dict[str, Any] = {"fields": changed}
        if consent_asked_again:
            detail["consent_version"] = study.consent_version
        if limits:
            detail["stratum_limits"] = limits
        study_event_record(
            study=study, actor=actor, kind=StudyEvent.Kind.WELFARE_SETTINGS_CHANGED, **detail
        )
    if warnings:
        study_event_record(
            study=study, actor=actor, kind=StudyEvent.Kind.CONTENT_WARNINGS_SET, strata=warnings
        )
    return settings


def _fields_with_problems(problems: list[str]) -> set[str]:
    """The labels of the fields that already have a problem (one message per field)."""
    return {problem.split(":", 1)[0] for problem in problems}
