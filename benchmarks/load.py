"""Simulated raters against a running Concord: throughput, latency per page, lost ratings.

Two shapes:
- production (the default of this script): gunicorn with config/gunicorn.py and the
  production settings, PostgreSQL, Redis, one Celery worker;
- ``--default``: the embedded default of `make run` (runserver, SQLite, in-process tasks).

    .venv/bin/python benchmarks/load.py --raters 8
    .venv/bin/python benchmarks/load.py --default --raters 20
    .venv/bin/python benchmarks/load.py --proxy --nodes 1 --raters 8

``--participants N``: instead of the raters' loop, N crowd participants (issue 29) arrive
through one participant link within ``--window`` seconds (each opens the vendor's URL,
presses Start, and lands on the information sheet), one thread each; it prints joins per
second, the join's p50/p95/p99, the errors, and checks one participant and one pseudonym per
arrival in the database.

    .venv/bin/python benchmarks/load.py --participants 200 --window 60

``--cases-per-participant B`` gives the link a batch size: the study is then built with no
raters and ``--raters-per-case`` (default 2) raters per case, so each arrival is given B of
the ``--cases`` cases in the join; once every case has its k, later arrivals are refused
politely (counted apart, not as errors), and the run checks that no case has more than k.

    .venv/bin/python benchmarks/load.py --participants 200 --window 60 --cases 200 \
        --cases-per-participant 2

``--proxy``: the scaled-out shape of docs/deployment.md instead (benchmarks/chaos.py's, with
no fault): HAProxy in front of ``--nodes`` web nodes of ``--workers`` gunicorn workers each,
PgBouncer in transaction mode, a Redis of its own, the recompute and jobs workers and beat.

The script builds its own data through the services (tests/factories.py, tests/payloads.py)
in a database of its own (PostgreSQL ``concord_bench_load``, or a SQLite file in a temporary
directory), starts the servers, and lets N raters at once sign in, open their next case,
save a draft (the page's autosave request) and submit, case after case, as static/js/rating.js
does (CSRF cookie and token, the version from the page and from the autosave's answer). It
then prints requests/s, p50/p95/p99 per page, errors, the ratings lost (submits the client
sent whose rating is not stored: must be 0) and the delay from the last submission to a
fresh agreement result. Everything it started is stopped, and its database dropped, at the
end, Ctrl-C included. One run (a study built, servers started, the raters' run) takes a minute
or more, so the default is one run: ``--repeat 5`` repeats it from scratch and prints the
median and spread of its headline figures. Needs PostgreSQL and Redis for the production
shape (Redis db from ``--redis-url``; the Celery queue has a name of its own).
"""

import argparse
import json
import os
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import requests
from processes import (
    DRAFT_URL,
    TOKEN,
    VERSION,
    browser_headers,
    build_study,
    free_port,
    postgres,
)
from report import add_repeat, reported, runs_apart, spread

ROOT = Path(__file__).resolve().parents[1]
PG_URL = "postgres://postgres:postgres@127.0.0.1:5432/concord_bench_load"
REDIS_URL = "redis://127.0.0.1:6379/13"


def environment(args, tmp: Path, port: int) -> dict:
    env = {
        "CASE_UPLOAD_ROOT": str(tmp / "uploads"),
        "REDIS_URL": args.redis_url,
        "AGREEMENT_LOG_LEVEL": "WARNING",
    }
    if args.default:
        return {
            **env,
            "DJANGO_SETTINGS_MODULE": "config.settings.local",
            "DATABASE_URL": f"sqlite:///{tmp / 'load.sqlite3'}",
        }
    return {
        **env,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DATABASE_URL": args.database_url,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        # TLS ends at a proxy in production: the client sends what the proxy would.
        "SECURE_SSL_REDIRECT": "false",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_WORKERS": str(args.workers),
        "CELERY_QUEUE": f"concord-load-{secrets.token_hex(4)}",
        "JOBS_RUN": "celery",
    }


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.times = defaultdict(list)
        self.errors = defaultdict(int)
        self.error_samples = []
        self.attempted = {}  # assignment uuid -> version the client saw when it submitted
        self.confirmed = set()
        self.last_submit = 0.0
        self.cpu = []
        # The servers' CPU and the requests so far when every rater had signed in: the
        # rating loop is measured from there (sign-in hashes a password: not in the loop).
        self.signed_in_cpu = []
        self.signed_in_requests = 0
        self.loop_cpu = []
        self.client_cpu = 0.0  # this script's own threads (the simulated browsers)
        self.machine = [0.0, 0.0]  # busy and total CPU seconds of the whole machine
        self.database_cpu = 0.0  # PostgreSQL's backends for the benchmark's database
        self.run_cpu = []  # the servers' CPU while the raters ran

    def record(self, page: str, seconds: float, ok: bool, detail: str = "") -> None:
        with self.lock:
            self.times[page].append(seconds)
            if not ok:
                self.errors[page] += 1
                if len(self.error_samples) < 5:
                    self.error_samples.append(f"{page}: {detail}")


class Rater:
    """One browser: cookies kept by hand, since the production cookies are Secure and the
    benchmark speaks plain HTTP to gunicorn as the TLS proxy would."""

    def __init__(self, base: str, secure: bool, stats: Stats):
        self.base = base
        self.secure = secure
        self.stats = stats
        self.http = requests.Session()
        self.cookies: dict[str, str] = {}

    def call(self, method, path, page, expect, **kwargs):
        headers = browser_headers(
            kwargs.pop("headers", {}),
            cookies=self.cookies,
            base=self.base,
            method=method,
            path=path,
            secure=self.secure,
        )
        if self.secure:
            headers["X-Forwarded-Proto"] = "https"
        start = time.perf_counter()
        try:
            response = self.http.request(
                method, self.base + path, headers=headers, allow_redirects=False, timeout=120,
                **kwargs,
            )  # fmt: skip
        except requests.RequestException as error:
            self.stats.record(page, time.perf_counter() - start, False, repr(error))
            return None
        elapsed = time.perf_counter() - start
        self.http.cookies.clear()
        for cookie in response.cookies:
            if cookie.value:
                self.cookies[cookie.name] = cookie.value
            else:
                self.cookies.pop(cookie.name, None)
        ok = response.status_code in expect
        self.stats.record(page, elapsed, ok, f"HTTP {response.status_code} {path}")
        return response if ok else None

    def run(self, username, password, slug, cases, think, signed_in: threading.Barrier) -> None:
        try:
            self.sign_in(username, password)
        finally:
            signed_in.wait()  # the rating loop is measured once everyone has signed in
        if self.cookies.get("sessionid"):
            self.rate(username, slug, cases, think)

    def sign_in(self, username: str, password: str) -> None:
        page = self.call("GET", "/accounts/login/", "sign-in page", {200})
        if page is None:
            return
        token = TOKEN.search(page.text).group(1)
        data = {"username": username, "password": password, "csrfmiddlewaretoken": token}
        self.call("POST", "/accounts/login/", "sign in", {302}, data=data)

    def rate(self, username: str, slug: str, cases: int, think: float) -> None:
        from tests.payloads import payload_for

        response = self.call("GET", f"/s/{slug}/next/", "next case", {302})
        location = response and urlsplit(response.headers["Location"]).path
        for n in range(cases):
            if not location or not location.startswith("/rate/"):
                return
            page = self.call("GET", location, "rating page", {200})
            if page is None:
                return
            token = TOKEN.search(page.text).group(1)
            version = int(VERSION.search(page.text).group(1))
            draft_url = DRAFT_URL.search(page.text).group(1)
            payload = payload_for(n + len(username))
            time.sleep(think)
            saved = self.call(
                "POST", draft_url, "autosave", {200},
                data=json.dumps({"payload": payload, "version": version, "active_seconds": 5}),
                headers={
                    "Content-Type": "application/json",
                    "X-CSRFToken": self.cookies.get("csrftoken", ""),
                },
            )  # fmt: skip
            if saved is not None:
                version = saved.json()["version"]
            time.sleep(think)
            uuid = location.split("/")[2]
            with self.stats.lock:
                self.stats.attempted[uuid] = version
            form = {
                "csrfmiddlewaretoken": token,
                "payload": json.dumps(payload),
                "version": str(version),
                "active_seconds": "5",
            }
            response = self.call("POST", location, "submit", {302}, data=form)
            if response is None:
                return
            with self.stats.lock:
                self.stats.confirmed.add(uuid)
                self.stats.last_submit = time.perf_counter()
            location = urlsplit(urljoin(self.base + location, response.headers["Location"])).path


def wait_healthy(base: str, processes, timeout: float = 90) -> None:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        for process in processes:
            if process.poll() is not None:
                raise RuntimeError(f"{process.args[:3]} exited with {process.returncode}")
        try:
            if requests.get(base + "/healthz", timeout=5).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.5)
    raise TimeoutError("the server did not become healthy")


def start(command, env, log: Path):
    return subprocess.Popen(  # our own commands
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
        stderr=log.open("ab"), start_new_session=True,
    )  # fmt: skip


def stop(processes) -> None:
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


class Groups:
    """Several servers' process groups counted as one (the web nodes behind the proxy)."""

    def __init__(self, processes):
        self.processes = processes


def cpu_seconds(process) -> float:
    """CPU time (user + system) of every live process in ``process``'s group."""
    if isinstance(process, Groups):
        return sum(cpu_seconds(member) for member in process.processes)
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == process.pid:  # the group id: each server leads its own
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def database_cpu(name: str) -> dict[int, float]:
    """CPU seconds of each live PostgreSQL backend connected to database ``name``."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().decode(errors="replace")
            if not command.startswith("postgres:") or f" {name} " not in command:
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        found[int(entry.name)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return found


def machine_busy() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, from /proc/stat."""
    ticks = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = ticks[3] + ticks[4]  # idle and iowait
    hz = os.sysconf("SC_CLK_TCK")
    return (sum(ticks) - idle) / hz, sum(ticks) / hz


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def freshness(study_id: int, since: float, timeout: float = 300) -> tuple[float, float]:
    """Seconds from ``since`` until the point estimates, then the intervals, are fresh."""
    from django.db import connection

    from agreement.models import StudyAgreement

    point = None
    while time.perf_counter() - since < timeout:
        row = StudyAgreement.objects.filter(study_id=study_id).first()
        connection.close()  # a fresh snapshot (and no SQLite read lock held) each time
        if row and row.requested and row.computed >= row.requested:
            now = time.perf_counter() - since
            point = now if point is None else point
            if not row.result.get("intervals_pending"):
                return point, now
        time.sleep(0.02)
    return point or float("nan"), float("nan")


def start_servers(args, env: dict, tmp: Path, port: int) -> list:
    log = tmp / "servers.log"
    processes = []
    python = sys.executable
    if args.default:
        processes.append(
            start([python, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
                  {**os.environ}, log)
        )  # fmt: skip
    else:
        subprocess.run(
            [python, "manage.py", "collectstatic", "--no-input", "--verbosity", "0"],
            cwd=ROOT, env={**os.environ}, check=True,
        )  # fmt: skip
        bin_dir = Path(python).parent
        processes.append(
            start([str(bin_dir / "gunicorn"), "-c", "config/gunicorn.py",
                   "config.wsgi:application"], {**os.environ}, log)
        )  # fmt: skip
        processes.append(
            start([python, "-m", "celery", "-A", "config", "worker", "--concurrency", "1",
                   "-Q", env["CELERY_QUEUE"], "--without-gossip", "--without-mingle",
                   "--without-heartbeat", "--loglevel", "WARNING"], {**os.environ}, log)
        )  # fmt: skip
    return processes


def run_raters(args, base: str, study, usernames, processes) -> tuple[Stats, float]:
    from tests.factories import PASSWORD

    stats = Stats()

    def everyone_signed_in():
        stats.signed_in_cpu = [cpu_seconds(process) for process in processes]
        with stats.lock:
            stats.signed_in_requests = sum(len(v) for v in stats.times.values())

    signed_in = threading.Barrier(len(usernames), action=everyone_signed_in)
    raters = [Rater(base, not args.default, stats) for _ in usernames]
    threads = [
        threading.Thread(
            target=rater.run,
            args=(name, PASSWORD, study.slug, args.cases, args.think, signed_in),
            daemon=True,
        )
        for rater, name in zip(raters, usernames, strict=True)
    ]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - began
    return stats, wall


class Arrival(Rater):
    """One crowd participant's browser: the vendor's URL, Start, the information sheet."""

    def run(self, slug: str, token: str, pid: str, delay: float, start: threading.Barrier):
        start.wait()
        time.sleep(delay)
        path = f"/p/{token}/?PROLIFIC_PID={pid}&STUDY_ID=LOADSTUDY&SESSION_ID=S-{pid}"
        began = time.perf_counter()
        page = self.call("GET", path, "link page", {200})
        found = TOKEN.search(page.text) if page is not None else None
        if found is None:
            return
        fields = {
            "csrfmiddlewaretoken": found.group(1),
            "PROLIFIC_PID": pid,
            "STUDY_ID": "LOADSTUDY",
            "SESSION_ID": f"S-{pid}",
        }
        started = self.call("POST", f"/p/{token}/", "start", {302, 400}, data=fields)
        if started is None:
            return
        if started.status_code == 400:
            # A batch link with every case at its k: the polite refusal, anything else an error.
            refused = 'data-reason="no_places"' in started.text
            self.stats.record("refused", time.perf_counter() - began, refused, started.text[:80])
            return
        landed = self.call("GET", f"/s/{slug}/participant/", "first step", {302})
        if landed is None or not self.call("GET", landed.headers["Location"], "sheet", {200}):
            return
        self.stats.record("join", time.perf_counter() - began, True)


def run_participants(args, base: str, study, processes) -> tuple[Stats, float]:
    """``args.participants`` arrivals spread evenly over ``args.window`` seconds."""
    from studies.models import Study
    from studies.services.participants import participant_link_save

    if args.cases_per_participant:
        Study.objects.filter(pk=study.pk).update(raters_per_item=args.raters_per_case)
        study.refresh_from_db()
    link = participant_link_save(
        study=study,
        actor=study.lead,
        values={
            "name": "load",
            "completion_code": "LOAD1",
            "max_participants": args.participants,
            "cases_per_participant": args.cases_per_participant or "",
        },
    )
    stats = Stats()
    count = args.participants
    start = threading.Barrier(count)
    arrivals = [Arrival(base, not args.default, stats) for _ in range(count)]
    threads = [
        threading.Thread(
            target=arrival.run,
            args=(study.slug, link.token, f"LOADPID{n:05d}", args.window * n / count, start),
            daemon=True,
        )
        for n, arrival in enumerate(arrivals)
    ]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return stats, time.perf_counter() - began


def report_participants(args, stats: Stats, wall: float, study) -> dict:
    from annotation.models import Assignment
    from studies.models import Membership, Participant, TestCase

    joins = stats.times.get("join", [])
    errors = sum(stats.errors.values())
    participants = Participant.objects.filter(study=study).count()
    pseudonyms = list(
        Membership.objects.filter(study=study, participant__isnull=False).values_list(
            "pseudonym", flat=True
        )
    )
    print(f"{args.participants} participants arriving within {args.window:.0f} s, one link")
    print(f"{len(joins)} joins in {wall:.1f} s: {len(joins) / wall:.2f} joins/s; errors: {errors}")
    print(f"{'step':<12}{'n':>6}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'errors':>8}")
    for step in ("link page", "start", "first step", "sheet", "join", "refused"):
        values = stats.times.get(step)
        if values:
            p50, p95, p99 = (percentile(values, q) * 1000 for q in (0.5, 0.95, 0.99))
            print(f"{step:<12}{len(values):>6}{p50:>9.0f}{p95:>9.0f}{p99:>9.0f}"
                  f"{stats.errors[step]:>8}")  # fmt: skip
    for sample in stats.error_samples:
        print(f"  error: {sample}")
    if args.cases_per_participant:
        refused = len(stats.times.get("refused", []))
        per_case = Counter(
            Assignment.objects.filter(
                test_case__study=study, test_case__purpose=TestCase.Purpose.SAMPLE
            ).values_list("test_case_id", flat=True)
        )
        most = max(per_case.values(), default=0)
        print(
            f"Batches of {args.cases_per_participant}, {args.raters_per_case} raters per case: "
            f"{refused} arrivals refused (every case had its k); {len(per_case)} of "
            f"{args.cases} cases rated, at most {most} raters on one "
            f"({'within k' if most <= args.raters_per_case else 'OVER k'})"
        )
    unique = len(set(pseudonyms)) == len(pseudonyms)
    print(
        f"In the database: {participants} participants, {len(pseudonyms)} pseudonyms, "
        f"{'all different' if unique else 'SOME SHARED'}"
    )
    if stats.run_cpu:
        print(f"CPU of the web server: {stats.run_cpu[0]:.1f} s; of the worker: "
              f"{sum(stats.run_cpu[1:]):.1f} s")  # fmt: skip
    return {"joins/s": len(joins) / wall, "join errors": errors}


def cleanup(args, env: dict, tmp: Path, port: int, processes, *, created: bool, cluster=None):
    """Stop every process started, drop the database, remove the temporary files."""
    if cluster is not None:
        cluster.stop()  # shape.py stops the processes it started
        processes = []
    stop(processes)
    from django.db import connections

    connections.close_all()
    if created:
        name = urlsplit(args.database_url).path.lstrip("/")
        postgres(args.database_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if "CELERY_QUEUE" in env and not args.proxy:  # the proxy's shape had its own Redis
            import redis

            redis.Redis.from_url(args.redis_url).delete(env["CELERY_QUEUE"])
        if cluster is not None:
            cluster.database_drop()  # the app's role too
    log = tmp / "servers.log"
    if log.exists() and b"Traceback" in log.read_bytes():
        kept = Path(tempfile.gettempdir()) / f"concord-load-{port}.log"
        shutil.copy(log, kept)
        print(f"Server tracebacks were logged: {kept}", file=sys.stderr)
    shutil.rmtree(tmp, ignore_errors=True)


def measure(args, base: str, study, usernames, processes):
    """Run the raters; their figures, the wall time and the freshness of the result."""
    before = [cpu_seconds(process) for process in processes]
    client_before, machine_before = time.process_time(), machine_busy()
    database = "" if args.default else urlsplit(args.database_url).path.lstrip("/")
    database_before = database_cpu(database) if database else {}
    stats, wall = run_raters(args, base, study, usernames, processes)
    after = [cpu_seconds(process) for process in processes]
    if database:
        stats.database_cpu = sum(
            seconds - database_before.get(pid, 0.0)
            for pid, seconds in database_cpu(database).items()
        )
    stats.client_cpu = time.process_time() - client_before
    machine_after = machine_busy()
    stats.machine = [a - b for a, b in zip(machine_after, machine_before, strict=True)]
    point, intervals = freshness(study.pk, stats.last_submit)
    stats.cpu = [cpu_seconds(p) - b for p, b in zip(processes, before, strict=True)]
    stats.loop_cpu = [a - b for a, b in zip(after, stats.signed_in_cpu, strict=True)]
    stats.run_cpu = [a - b for a, b in zip(after, before, strict=True)]
    return stats, wall, point, intervals


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--default", action="store_true", help="runserver, SQLite, in-process")
    parser.add_argument("--raters", type=int, default=8)
    parser.add_argument("--cases", type=int, default=20, help="cases each rater submits")
    parser.add_argument("--think", type=float, default=0.0, help="seconds between actions")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers")
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", PG_URL))
    parser.add_argument("--redis-url", default=REDIS_URL)
    parser.add_argument("--proxy", action="store_true", help="the scaled-out shape")
    parser.add_argument("--nodes", type=int, default=2, help="web nodes behind the proxy")
    add_repeat(parser, default=1)
    parser.add_argument("--json", type=Path, help="also write the headline figures to this file")
    parser.add_argument(
        "--participants", type=int, default=0,
        help="crowd participants joining through a link instead of the raters' loop (200)",
    )  # fmt: skip
    parser.add_argument("--window", type=float, default=60.0, help="their arrival window, s")
    parser.add_argument(
        "--cases-per-participant", type=int, default=0,
        help="the link's batch size (the study then has no raters, --raters-per-case per case)",
    )  # fmt: skip
    parser.add_argument("--raters-per-case", type=int, default=2, help="k, with a batch size")
    args = parser.parse_args()
    if args.proxy and not 1 <= args.nodes <= 8:
        parser.error("1-8 web nodes")
    if args.cases_per_participant:
        if not args.participants:
            parser.error("--cases-per-participant goes with --participants")
        if not 1 <= args.cases_per_participant <= 10_000 or args.raters_per_case < 1:
            parser.error("a batch of 1-10,000 cases and at least 1 rater per case")
        args.raters = 0  # the participants are the raters: every place is theirs
    return args


def main() -> None:
    args = arguments()
    shape = "default" if args.default else "proxy" if args.proxy else "production"
    title = f"Simulated raters, {shape} shape: {args.raters} raters x {args.cases} cases"
    if args.participants:
        title = (
            f"Crowd participants joining, {shape} shape: {args.participants} within "
            f"{args.window:.0f} s, {args.cases} cases each"
        )
        if args.cases_per_participant:
            title = (
                f"Crowd participants joining, {shape} shape: {args.participants} within "
                f"{args.window:.0f} s, batches of {args.cases_per_participant} of {args.cases} "
                f"cases, {args.raters_per_case} raters per case"
            )
    with reported(title, runs=args.repeat, why_fewer="a minute or more a run"):
        if args.repeat == 1:
            figures = one_run(args)
            if figures is not None and args.json:
                args.json.write_text(json.dumps(figures))
            return
        # Each run in a process of its own: Django is set up once per process, on its database.
        runs = runs_apart(__file__, sys.argv[1:], args.repeat)
        if runs:
            print(f"--- over {len(runs)} runs")
            headline = PARTICIPANT_HEADLINE if args.participants else HEADLINE
            for name, (unit, scale, digits) in headline.items():
                values = [figures[name] for figures in runs]
                print(f"{name}: {spread(values, unit=unit, scale=scale, digits=digits)}")


# The figures a run returns, summarised over --repeat runs: (unit, scale, digits).
PARTICIPANT_HEADLINE = {"joins/s": ("", 1, 2), "join errors": ("", 1, 0)}
HEADLINE = {
    "requests/s": ("", 1, 1),
    "submit p95": ("ms", 1000, 0),
    "median submit": ("ms", 1000, 0),
    "fresh point estimates": ("s", 1, 2),
}


def one_run(args) -> dict | None:
    """One run from scratch: its headline figures, or None when interrupted."""
    figures = None
    # SIGTERM ends the run like Ctrl-C, so the cleanup below runs either way (the previous
    # run's cleanup ignored both).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)

    tmp = Path(tempfile.mkdtemp(prefix="concord-load-"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = environment(args, tmp, port)
    for key in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"):
        os.environ.pop(key, None)
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    processes = []
    cluster = None
    created = False
    try:
        if args.proxy:
            cluster = proxy_cluster(args, tmp)
        created = bool(cluster) or database_make(args)
        study, usernames = build_study(args, "load")
        from django.db import connection

        connection.close()
        if cluster is not None:
            base = cluster.base
            processes.extend(proxy_processes(cluster))
        else:
            processes.extend(start_servers(args, env, tmp, port))
            wait_healthy(base, processes)
        if args.participants:
            before = [cpu_seconds(process) for process in processes]
            stats, wall = run_participants(args, base, study, processes)
            stats.run_cpu = [cpu_seconds(p) - b for p, b in zip(processes, before, strict=True)]
            figures = report_participants(args, stats, wall, study)
            return figures
        stats, wall, point, intervals = measure(args, base, study, usernames, processes)
        report(args, stats, wall, study, point, intervals)
        submits = stats.times.get("submit") or [float("nan")]
        figures = {
            "requests/s": sum(len(v) for v in stats.times.values()) / wall,
            "submit p95": percentile(submits, 0.95),
            "median submit": statistics.median(submits),
            "fresh point estimates": point,
        }
    except KeyboardInterrupt:
        print("\nInterrupted: stopping what was started.", file=sys.stderr)
    finally:
        # A second Ctrl-C must not cut the cleanup short.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        cleanup(args, env, tmp, port, processes, created=created, cluster=cluster)
    return figures


def database_make(args) -> bool:
    """The run's database, dropped and made again; False for the default shape (SQLite)."""
    if args.default:
        return False
    name = urlsplit(args.database_url).path.lstrip("/")
    postgres(args.database_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    postgres(args.database_url, f'CREATE DATABASE "{name}"')
    return True


def proxy_cluster(args, tmp: Path):
    """benchmarks/chaos.py's shape (deploy/hosts/shape.py's), started with no fault, its
    database made first (shape.py migrates it as the app's role, which owns it); returns
    once migrated, while its processes start."""
    from chaos import Cluster

    shape = argparse.Namespace(
        database_url=args.database_url, web_workers=args.workers, nodes=args.nodes,
        sweep=60, resamples=int(os.environ.get("AGREEMENT_BOOTSTRAP_RESAMPLES", "10000")),
    )  # fmt: skip
    cluster = Cluster(shape, tmp)
    cluster.database_create()
    cluster.start()
    return cluster


def proxy_processes(cluster) -> list:
    """The shape's process groups whose CPU is counted, once every one answers."""
    cluster.wait_ready()
    return [
        Groups([cluster.group(node) for node in cluster.nodes]),
        Groups([cluster.group(f"{k}-worker") for k in ("recompute", "jobs")]),
        cluster.group("proxy"),
        cluster.group("pgbouncer"),
    ]


def report(args, stats: Stats, wall: float, study, point: float, intervals: float) -> None:
    from annotation.models import Assignment

    stored = set(
        str(u)
        for u in Assignment.objects.filter(
            test_case__study=study, status=Assignment.Status.SUBMITTED, ratings__isnull=False
        ).values_list("uuid", flat=True)
    )
    lost = [u for u in stats.attempted if u not in stored]
    unconfirmed_stored = [u for u in stats.attempted if u in stored and u not in stats.confirmed]
    shape = "default (runserver, SQLite, in-process tasks)" if args.default else (
        f"production (gunicorn x{args.workers}, PostgreSQL, Redis, 1 Celery worker)"
    )  # fmt: skip
    if args.proxy:
        shape = (
            f"scaled out (HAProxy, {args.nodes} web node(s) of gunicorn x{args.workers}, "
            "PgBouncer in transaction mode, PostgreSQL, Redis, recompute and jobs workers, beat)"
        )
    total = sum(len(v) for v in stats.times.values())
    print(f"Shape: {shape}; {args.raters} raters x {args.cases} cases, think {args.think} s")
    print(f"{total} requests in {wall:.1f} s: {total / wall:.1f} requests/s")
    print(f"{'page':<14}{'n':>6}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'errors':>8}")
    order = ["sign-in page", "sign in", "next case", "rating page", "autosave", "submit"]
    for page in order:
        values = stats.times.get(page)
        if not values:
            continue
        p50, p95, p99 = (percentile(values, s) * 1000 for s in (0.5, 0.95, 0.99))
        print(f"{page:<14}{len(values):>6}{p50:>9.0f}{p95:>9.0f}{p99:>9.0f}{stats.errors[page]:>8}")
    for sample in stats.error_samples:
        print(f"  error: {sample}")
    print(
        f"Submits sent {len(stats.attempted)}, confirmed {len(stats.confirmed)}, stored "
        f"{len(stats.attempted) - len(lost)}; ratings lost: {len(lost)}"
        + (f" (stored though the answer failed: {len(unconfirmed_stored)})" if unconfirmed_stored
           else "")
    )  # fmt: skip
    print(
        f"Last submission to fresh agreement: point estimates {point:.2f} s, intervals "
        f"{intervals:.2f} s (debounce included)"
    )
    requests_cpu = stats.cpu[0] / total * 1000 if stats.cpu else 0
    print(
        f"CPU of the web server: {stats.cpu[0]:.1f} s ({requests_cpu:.0f} ms per request)"
        + (f"; of the Celery worker: {stats.cpu[1]:.1f} s" if len(stats.cpu) > 1 else "")
    )
    if args.proxy:
        print(f"CPU of HAProxy: {stats.cpu[2]:.2f} s; of PgBouncer: {stats.cpu[3]:.2f} s")
    loop = total - stats.signed_in_requests
    if stats.loop_cpu and loop:
        print(
            f"Rating loop only (after every sign-in; {loop} requests: next case, rating page, "
            f"autosave, submit): web {stats.loop_cpu[0] / loop * 1000:.1f} ms CPU per request"
            + (f", worker {stats.loop_cpu[1]:.1f} s" if len(stats.loop_cpu) > 1 else "")
        )
    busy, available = stats.machine
    ours = sum(stats.run_cpu) + stats.client_cpu + stats.database_cpu
    print(
        f"CPU of this client (the {args.raters} simulated browsers): {stats.client_cpu:.1f} s"
        + (f"; of PostgreSQL for this database: {stats.database_cpu:.1f} s" if not args.default
           else "")
        + f". The machine was busy {busy:.0f} of {available:.0f} CPU seconds during the run, "
        f"{busy - ours:.0f} s of it on other work (Redis, other processes)"
    )  # fmt: skip
    print(f"Median submit {statistics.median(stats.times['submit']) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
