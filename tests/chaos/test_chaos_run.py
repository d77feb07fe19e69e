"""The chaos run, shortened: benchmarks/chaos.py brings the scaled-out shape up through
deploy/hosts/shape.py, as docs/deployment.md says (HAProxy, two web nodes, PgBouncer in
transaction mode as an unprivileged user with SCRAM and no pidfile, Redis, the recompute and
jobs workers, beat), kills one of each (shape.py starts each again, PgBouncer after kill -9
too) and ends every PostgreSQL backend of the app (pg_terminate_backend), and must find
every acknowledged submit stored once, every stored one acknowledged (a rater sends a submit
again until it is), none answered 500 by the app though stored, no 5xx outside the killed
connections, and the statistics equal to a from-scratch recompute within 60 s of the last fault.

Every process is on free loopback ports, in a database and role of its own (this run's
name with ``_chaos``, dropped at the end), so it needs only PostgreSQL and the programs
(.ci/run installs HAProxy and PgBouncer); its Redis is its own, never the shared one. In a
group of its own: it loads the machine."""

import json
import shutil
import subprocess
import sys
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.conf import settings

from tests.processes import ROOT

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.xdist_group("chaos"),
    pytest.mark.timeout(600),
]


# The same plan every time (which process dies, in what order, when): a failure is
# reproducible with `benchmarks/chaos.py --seed`. A recompute claim lost with a killed worker
# holds the study for up to PENDING_SECONDS (agreement/coalescing.py), well inside the run's
# 60 s limit for convergence (benchmarks/README.md, "Chaos").
SEED = 895471


def chaos_database_url() -> str:
    db = settings.DATABASES["default"]
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    netloc = f"{user}{password}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}"
    return urlunsplit(("postgres", netloc, f"/{db['NAME']}_chaos", "", ""))


def test_a_short_chaos_run_loses_nothing_and_converges(tmp_path):
    for name in ("haproxy", "pgbouncer", "redis-server"):
        if shutil.which(name) is None and shutil.which(name, path="/usr/sbin:/sbin") is None:
            pytest.fail(f"{name} is not installed (.ci/run installs it)")
    figures_file = tmp_path / "figures.json"
    url = chaos_database_url()
    assert urlsplit(url).path.endswith("_chaos")
    run = subprocess.run(  # the repository's own benchmark, on loopback only
        [sys.executable, "benchmarks/chaos.py", "--duration", "40", "--raters", "6",
         "--seed", str(SEED), "--database-url", url, "--json", str(figures_file)],
        cwd=ROOT, capture_output=True, text=True, timeout=560, check=False,
    )  # fmt: skip
    print(run.stdout, run.stderr[-4000:])
    assert figures_file.exists(), run.stderr[-4000:]
    figures = json.loads(figures_file.read_text())
    assert figures["problems"] == []
    assert run.returncode == 0
    # Every kind of process was killed, and the raters got through.
    killed = {fault["kind"] for fault in figures["faults"]}
    assert killed == {
        "web-worker", "web-node", "recompute-worker", "jobs-worker", "beat", "redis", "pgbouncer",
        "pg-backends",
    }  # fmt: skip
    assert figures["acknowledged"] > 0
    assert figures["acknowledged_not_stored"] == 0
    assert figures["stored_unacknowledged"] == 0  # every stored submit learnt, resent or not
    assert figures["stored_answered_500"] == 0  # the app never said "failed" of a stored one
    assert figures["duplicates"] == 0
    assert figures["failed_elsewhere"] == 0
    assert figures["convergence_after_last_fault"] is not None
    assert figures["convergence_after_last_fault"] <= 60
