"""Daily exposure limits (protocol 3: "no more than 2 hours of harm-labelling per day").

A study may limit each rater's active rating time per day, over the whole study
(``WelfareSettings.daily_minutes``) and per stratum (``StratumSetting.daily_minutes``).
A rater's day is their own calendar day, in the IANA time zone their browser reports
(``Membership.time_zone``; UTC until it has reported one). This module owns the limits as
the protocol states them and the calendar they are counted on; the time counted and the
cases served are ``annotation``'s (``annotation.selectors.exposure``).
"""

import functools
import zoneinfo
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from .models import StratumSetting, Study, WelfareSettings

DEFAULT_TIME_ZONE = "UTC"
# Membership.time_zone's length: no IANA name is longer than 32 characters.
MAX_TIME_ZONE_LENGTH = 64


@functools.cache
def _known_zones() -> frozenset[str]:
    # Read from the system's time zone data once per process (a few hundred names).
    return frozenset(zoneinfo.available_timezones())


def time_zone_clean(value: object) -> str:
    """The IANA zone a browser reported, or "UTC" for anything that is not one."""
    if not isinstance(value, str):
        return DEFAULT_TIME_ZONE
    value = value.strip()
    if len(value) > MAX_TIME_ZONE_LENGTH or value not in _known_zones():
        return DEFAULT_TIME_ZONE
    return value


def zone_of(name: str) -> tzinfo:
    """The zone of a stored name; UTC for a name this system does not know (any more)."""
    if name and name in _known_zones():
        return zoneinfo.ZoneInfo(name)
    return UTC


def local_day(*, moment: datetime, zone: tzinfo) -> date:
    return moment.astimezone(zone).date()


def day_start(*, day: date, zone: tzinfo) -> datetime:
    """The first instant of ``day`` in ``zone``, as an aware UTC datetime.

    Where the clocks skip midnight (a few zones change at 00:00), the day starts at the
    first local time that exists, e.g. 01:00.
    """
    naive = datetime.combine(day, time.min)
    # Normalised through UTC: a local time in a gap becomes the instant the gap ends.
    return naive.replace(tzinfo=zone).astimezone(UTC)


def seconds_by_day(*, end: datetime, seconds: int, zone: tzinfo) -> list[tuple[date, int]]:
    """Active seconds that ended at ``end``, split over the rater's calendar days.

    A save reports the active time since the last save; it is counted as the time just
    before ``end``, so a save just after midnight puts the part before midnight on the
    day before. Days in order, each with its seconds (none with zero).
    """
    parts: list[tuple[date, int]] = []
    remaining = max(0, int(seconds))
    cursor = end.astimezone(UTC)
    while remaining:
        day = local_day(moment=cursor, zone=zone)
        start = day_start(day=day, zone=zone)
        # A save that lands exactly at midnight belongs with the day before.
        if start >= cursor:
            day = day - timedelta(days=1)
            start = day_start(day=day, zone=zone)
        on_day = min(remaining, int((cursor - start).total_seconds()))
        parts.append((day, on_day))
        remaining -= on_day
        cursor = start
    return sorted(parts)


@dataclass(frozen=True)
class ExposureLimits:
    """A study's daily limits in minutes: over the whole study (None: no limit) and per
    stratum (only the strata that set one)."""

    daily_minutes: int | None = None
    strata: dict[str, int] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return self.daily_minutes is not None or bool(self.strata)

    def document(self) -> dict:
        """The limits as the protocol document states them (``studies.protocol``)."""
        return {
            "daily_minutes": self.daily_minutes,
            "strata": [
                {"stratum": stratum, "daily_minutes": minutes}
                for stratum, minutes in sorted(self.strata.items())
            ],
        }


def exposure_limits(*, study: Study) -> ExposureLimits:
    """The study's daily limits: two queries."""
    study_minutes = (
        WelfareSettings.objects.filter(study=study).values_list("daily_minutes", flat=True).first()
    )
    rows = StratumSetting.objects.filter(study=study, daily_minutes__isnull=False)
    strata = {
        stratum: minutes
        for stratum, minutes in rows.values_list("stratum", "daily_minutes")
        if minutes is not None
    }
    return ExposureLimits(daily_minutes=study_minutes, strata=strata)
