"""Beat's container health check: healthy while beat keeps writing its schedule file."""

import os
import subprocess
import sys
import time

from tests.processes import ROOT

STALE_AFTER_SECONDS = 10 * 60


def check(schedule):
    env = {**os.environ, "BEAT_SCHEDULE": str(schedule)}
    return subprocess.run(  # our own script
        [sys.executable, "scripts/beat_healthcheck.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False,
    ).returncode  # fmt: skip


def test_a_schedule_written_lately_is_healthy(tmp_path):
    (tmp_path / "celerybeat-schedule.db").write_bytes(b"")
    assert check(tmp_path / "celerybeat-schedule") == 0


def test_no_schedule_or_a_stale_one_is_unhealthy(tmp_path):
    schedule = tmp_path / "celerybeat-schedule"
    assert check(schedule) == 1
    schedule.write_bytes(b"")
    long_ago = time.time() - STALE_AFTER_SECONDS - 60
    os.utime(schedule, (long_ago, long_ago))
    assert check(schedule) == 1
