"""Reads for the daily exposure limits: a rater's time today against the study's limits,
the one decision whether a case may be served to them now, and the coordinators' count.

The limits and the rater's calendar are ``studies.exposure``'s; the time is credited by
every save (``annotation.services.exposure``).
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from django.db.models import QuerySet
from django.utils import timezone

from annotation.models import Assignment, ExposureDay
from studies.exposure import (
    DEFAULT_TIME_ZONE,
    ExposureLimits,
    day_start,
    exposure_limits,
    local_day,
    zone_of,
)
from studies.models import Membership, Study


@dataclass(frozen=True)
class Exposure:
    """A rater's active time on their current day, against the study's limits."""

    limits: ExposureLimits
    time_zone: str
    day: date
    # The start of the rater's next day, in their zone: when a reached limit lifts.
    resume_at: datetime
    seconds: dict[str, int] = field(default_factory=dict)  # by stratum

    @property
    def total_seconds(self) -> int:
        return sum(self.seconds.values())

    @property
    def study_reached(self) -> bool:
        minutes = self.limits.daily_minutes
        return minutes is not None and self.total_seconds >= minutes * 60

    def stratum_reached(self, stratum: str) -> bool:
        minutes = self.limits.strata.get(stratum)
        return minutes is not None and self.seconds.get(stratum, 0) >= minutes * 60

    def allows(self, stratum: str) -> bool:
        """Whether a case of this stratum may be served to the rater now: the one rule."""
        return not self.study_reached and not self.stratum_reached(stratum)

    @property
    def strata_reached(self) -> list[str]:
        """The strata whose own limit the rater has reached today, in order."""
        return sorted(s for s in self.limits.strata if self.stratum_reached(s))

    @property
    def strata_limits_reached(self) -> list[tuple[str, int]]:
        """(stratum, its limit in minutes) for each of ``strata_reached``."""
        return [(s, self.limits.strata[s]) for s in self.strata_reached]

    @property
    def resume_text(self) -> str:
        """When a reached limit lifts, in the rater's own time: "tomorrow at 00:00
        (Europe/Berlin)"."""
        return f"tomorrow at {self.resume_at:%H:%M} ({self.time_zone})"


def exposure_today(*, rater: Membership, now: datetime | None = None) -> Exposure:
    """The rater's time on their current day, by stratum: three queries at most (none of
    the rater's rows when the study sets no limit)."""
    now = now or timezone.now()
    limits = exposure_limits(study=rater.study)
    name = rater.time_zone or DEFAULT_TIME_ZONE
    zone = zone_of(name)
    today = local_day(moment=now, zone=zone)
    resume_at = day_start(day=today + timedelta(days=1), zone=zone).astimezone(zone)
    seconds: dict[str, int] = {}
    if limits:
        seconds = dict(
            ExposureDay.objects.filter(rater=rater, day=today).values_list("stratum", "seconds")
        )
    return Exposure(
        limits=limits,
        time_zone=name if zone is not UTC else DEFAULT_TIME_ZONE,
        day=today,
        resume_at=resume_at,
        seconds=seconds,
    )


def servable(*, pending: QuerySet[Assignment], exposure: Exposure) -> QuerySet[Assignment]:
    """The cases of ``pending`` that ``exposure`` allows serving now (``Exposure.allows``,
    asked of the whole query at once)."""
    if exposure.study_reached:
        return pending.none()
    reached = exposure.strata_reached
    return pending.exclude(test_case__stratum__in=reached) if reached else pending


def held_back(*, pending: QuerySet[Assignment], exposure: Exposure) -> int:
    """How many cases of ``pending`` a reached limit holds back today: those not started
    (a case begun before the limit was reached stays open to be finished)."""
    not_started = pending.filter(status=Assignment.Status.TODO)
    if exposure.study_reached:
        return not_started.count()
    reached = exposure.strata_reached
    return not_started.filter(test_case__stratum__in=reached).count() if reached else 0


@dataclass(frozen=True)
class LimitCounts:
    """How many raters reached a daily limit on their current day: counts only."""

    study: int  # the whole study's limit
    stratum: int  # a stratum's limit (and not the study's)

    @property
    def total(self) -> int:
        return self.study + self.stratum


def raters_at_limit_today(*, study: Study, now: datetime | None = None) -> LimitCounts | None:
    """How many of the study's raters reached a limit on their own today; None when the
    study sets no limit. Three queries, whatever the number of raters."""
    limits = exposure_limits(study=study)
    if not limits:
        return None
    now = now or timezone.now()
    raters = dict(
        study.memberships.filter(role=Membership.Role.RATER).values_list("pk", "time_zone")
    )
    today = {pk: local_day(moment=now, zone=zone_of(name)) for pk, name in raters.items()}
    # Every zone's today is within a day of UTC's.
    utc_today = now.astimezone(UTC).date()
    rows = ExposureDay.objects.filter(
        rater_id__in=list(raters),
        day__range=(utc_today - timedelta(days=1), utc_today + timedelta(days=1)),
    ).values_list("rater_id", "day", "stratum", "seconds")
    seconds: dict[int, dict[str, int]] = defaultdict(dict)
    for rater_id, day, stratum, amount in rows:
        if day == today[rater_id]:
            seconds[rater_id][stratum] = amount
    counts = {"study": 0, "stratum": 0}
    for rater_id, by_stratum in seconds.items():
        exposure = Exposure(
            limits=limits, time_zone="", day=today[rater_id], resume_at=now, seconds=by_stratum
        )
        if exposure.study_reached:
            counts["study"] += 1
        elif exposure.strata_reached:
            counts["stratum"] += 1
    return LimitCounts(**counts)
