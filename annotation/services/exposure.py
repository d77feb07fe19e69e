"""Writes for the daily exposure limits: the rater's time zone, and the active time each
save adds to their day (``studies.exposure`` owns the limits and the calendar)."""

from datetime import datetime

from django.db import connection

from annotation.models import ExposureDay
from studies.exposure import seconds_by_day, time_zone_clean, zone_of
from studies.models import Membership


def rater_time_zone_report(*, rater: Membership, reported: object) -> None:
    """Keep the IANA zone the rater's browser reported (anything unknown: UTC).

    Called before a rating write, outside its transaction: one statement that touches the
    membership only when the zone changed, so two tabs saving at once never wait on it
    while they hold the membership shared (``studies.locks``). Nothing reported (an older
    page): the stored zone stays.
    """
    if reported is None or reported == "":
        return
    zone = time_zone_clean(reported)
    if zone == rater.time_zone:
        return
    Membership.objects.filter(pk=rater.pk).exclude(time_zone=zone).update(time_zone=zone)
    rater.time_zone = zone


def exposure_credit(*, rater: Membership, stratum: str, seconds: int, end: datetime) -> None:
    """Add a save's active seconds to the rater's day in the case's stratum.

    Called by the rating write (``rating_locks._saved``) in its transaction, with the assignment
    locked: the exposure rows come after it in the lock order. One upsert that adds to
    the stored seconds in the database, so two tabs saving at once both count, whichever
    commits first (PostgreSQL and SQLite both have ``ON CONFLICT ... DO UPDATE``).
    Seconds that began before the rater's midnight count on the day before.
    """
    parts = seconds_by_day(end=end, seconds=seconds, zone=zone_of(rater.time_zone))
    if not parts:
        return
    table = connection.ops.quote_name(ExposureDay._meta.db_table)
    rows = ", ".join(["(%s, %s, %s, %s)"] * len(parts))
    params: list = []
    for day, on_day in parts:  # in day order: concurrent upserts lock the rows alike
        params += [rater.pk, connection.ops.adapt_datefield_value(day), stratum, on_day]
    query = (
        f"INSERT INTO {table} (rater_id, day, stratum, seconds) VALUES {rows} "  # noqa: S608
        f"ON CONFLICT (rater_id, day, stratum) DO UPDATE "
        f"SET seconds = {table}.seconds + excluded.seconds"
    )
    with connection.cursor() as cursor:
        cursor.execute(query, params)
