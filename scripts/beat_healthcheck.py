"""Celery beat's health check: exit 0 while beat keeps writing its schedule file.

Beat saves the schedule (when each entry last ran) every few minutes while it ticks, and
it ticks at least once a minute for the stale-statistics sweep; a beat that hangs stops
writing. Its process dying ends the container anyway, so staleness is what is checked.
"""

import os
import sys
import time
from pathlib import Path

# Beat saves at least every 3 minutes (Celery's default); a margin over twice that.
STALE_AFTER_SECONDS = 10 * 60


def schedule_age(schedule: Path, now: float) -> float | None:
    """Seconds since beat last wrote ``schedule`` (any file the database module made from
    that name, e.g. ``.db``, ``.dat``), or None if there is none."""
    written = [path.stat().st_mtime for path in schedule.parent.glob(f"{schedule.name}*")]
    return now - max(written) if written else None


def main() -> int:
    schedule = Path(os.environ.get("BEAT_SCHEDULE", "/tmp/celerybeat-schedule"))  # noqa: S108
    age = schedule_age(schedule, time.time())
    if age is None:
        print(f"no schedule file at {schedule}*", file=sys.stderr)
        return 1
    if age > STALE_AFTER_SECONDS:
        print(f"{schedule} last written {age:.0f} s ago", file=sys.stderr)
        return 1
    print(f"{schedule} written {age:.0f} s ago")
    return 0


if __name__ == "__main__":
    sys.exit(main())
