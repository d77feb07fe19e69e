"""Chaos run: raters submit through the scaled-out shape while its processes are killed.

    .venv/bin/python benchmarks/chaos.py --duration 180 --raters 12       # the long run
    .venv/bin/python benchmarks/chaos.py --duration 40 --raters 6         # the CI test's

The shape is brought up by deploy/hosts/shape.py, as docs/deployment.md has an operator do
it, on the loopback interface only, each part on a free port: HAProxy (deploy/haproxy.cfg,
plain HTTP) in front of two web nodes (gunicorn, two workers each, health-checked on
/healthz/ready), PgBouncer in transaction mode (as ``nobody`` when run as root, SCRAM, no
pidfile) in front of PostgreSQL, a Redis of its own, two Celery workers on separate queues
(recompute, jobs) and Celery beat. The database named by ``--database-url`` (default
``concord_bench_chaos``) is dropped and created again, owned by a role of its own
(``<database>_app``) with a password, and both are dropped at the end.

N raters sign in through the proxy and rate case after case as static/js/rating.js does (the
page, its autosave, the submit); a submit that gets no acknowledgment is sent again, the
same form (its version is its key), as a person resubmits after an error page; a rater
whose other request fails starts again from the study's next case, as a person would.
Meanwhile, at random moments (``--seed``), the script kills with SIGKILL one gunicorn
worker, a whole web node, the recompute worker, the jobs worker, beat, Redis and PgBouncer,
which shape.py starts again (the gunicorn master replaces its own worker), and ends every
PostgreSQL backend of the app's role (``pg_terminate_backend``). Every kind comes at least
once; ``--faults`` more are drawn at random. No fault comes in the last ``--quiet`` seconds
of the raters' run.

It reports the requests sent, the submits sent (and sent again), acknowledged (the rater
got the redirect to its next case) and stored, duplicates (a submit stored twice), submits
stored yet answered 500 by the app (stored while the request that got it was in flight),
the 5xx answers and whether each fell on a killed connection (its request was in flight while a
process on its path -- a web worker, a web node, PgBouncer, a backend -- was killed), and
the time from the last fault until the stored statistics equal a from-scratch recompute of
the final data. It exits 1 unless: every acknowledged submit is stored and every stored one
was sent and acknowledged, none was answered 500 though stored, no duplicates, no 5xx
outside the killed connections, and the statistics converged within 60 s of the last fault.

One run takes minutes, so the default is one: ``--repeat 5`` runs the whole shape again from
scratch each time and prints the median and spread of the convergence time (``--json`` then
writes the list of the runs' figures); it exits 1 if any run failed.
"""

import argparse
import json
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlsplit

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
from report import add_repeat, load_average, reported, runs_apart, spread

ROOT = Path(__file__).resolve().parents[1]
PG_URL = "postgres://postgres:postgres@127.0.0.1:5432/concord_bench_chaos"
KINDS = (
    "web-worker", "web-node", "recompute-worker", "jobs-worker", "beat", "redis", "pgbouncer",
    "pg-backends",
)  # fmt: skip
# The processes on a rater's request path: a 5xx on a request in flight when one of them was
# killed (PgBouncer: while it was down, or within GRACE seconds after it answered again)
# fell on a killed connection; so did one whose PostgreSQL backend was ended
# ("pg-backends": pg_terminate_backend of every connection of the app's role). Redis, the
# workers and beat are not on the path: a 5xx while one of them was down is a failure.
ON_PATH = {"web-worker", "web-node", "pgbouncer", "pg-backends"}
GRACE = 3.0
# A web worker or node killed: the requests it had taken (up to this long after the kill,
# those the proxy had already handed to it) are cut; later ones go to a live worker.
CUT = 0.5
CONVERGENCE_LIMIT = 60.0
# Bounds on the run: it must end, whatever it is asked.
MAX_RATERS, MAX_DURATION, MAX_FAULTS = 50, 1800, 200
# A submit that got no acknowledgment is sent again, as the rating screen's form is: the same
# answers and version (its key), this many times at most, this long apart.
SUBMIT_TRIES, SUBMIT_RETRY_SECONDS = 20, 0.5


def program(name: str) -> str | None:
    """Where ``name`` is installed; Debian puts the daemons in /usr/sbin, which a user's PATH
    may leave out."""
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")


def answers(port: int, probe: bytes | None = None, expect: bytes = b"") -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            if probe is None:
                return True
            sock.sendall(probe)
            return sock.recv(64).startswith(expect)
    except OSError:
        return False


def wait_for(predicate, *, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise TimeoutError(f"{what}: not within {timeout:.0f} s")


def node_ready(port: int) -> bool:
    """A web node's readiness, asked as the proxy asks it."""
    try:
        response = requests.get(
            f"http://127.0.0.1:{port}/healthz/ready",
            headers={"Host": "127.0.0.1", "X-Forwarded-Proto": "https"},
            timeout=2,
        )
    except requests.RequestException:
        return False
    return response.status_code == 200


def free_ports(count: int) -> int:
    """The first of ``count`` consecutive free ports (the shape's web nodes)."""
    for _ in range(100):
        first = free_port()
        if first + count > 65535:
            continue
        try:
            for port in range(first, first + count):
                with socket.socket() as sock:
                    sock.bind(("127.0.0.1", port))
        except OSError:
            continue
        return first
    raise RuntimeError("no run of free ports")


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


@dataclass
class Fault:
    kind: str
    at: float  # seconds into the raters' run
    killed: float = 0.0  # perf_counter
    back: float = 0.0
    target: str = ""


@dataclass
class Request:
    page: str
    start: float
    end: float
    status: int | None  # None: no answer (connection error or timeout)
    # The same moments by the wall clock, which the app stamps a submission with.
    wall_start: float = 0.0
    wall_end: float = 0.0


@dataclass
class Tally:
    lock: threading.Lock = field(default_factory=threading.Lock)
    requests: list[Request] = field(default_factory=list)
    sent: dict[str, list[Request]] = field(default_factory=dict)  # submits per assignment
    acknowledged: set[str] = field(default_factory=set)
    last_submit: float = 0.0


class Cluster:
    """The scaled-out shape on one machine, brought up by deploy/hosts/shape.py as
    docs/deployment.md says (its PgBouncer as ``nobody`` when run as root, SCRAM, no
    pidfile; its processes started again by it when they die), every port free and on
    127.0.0.1, with a Redis of its own and HAProxy on a plain loopback address."""

    def __init__(self, args, tmp: Path):
        self.tmp = tmp
        self.tag = secrets.token_hex(3)
        self.web_workers = args.web_workers
        self.restarting: set[str] = set()  # services killed and not answering yet
        self.nodes = [f"web{n}" for n in range(1, getattr(args, "nodes", 2) + 1)]
        first_web = free_ports(len(self.nodes))
        self.ports = {name: free_port() for name in ("redis", "pgbouncer", "proxy")}
        self.ports.update({node: first_web + n for n, node in enumerate(self.nodes)})
        database = urlsplit(args.database_url)
        self.database = database.path.lstrip("/")
        # The app's own role, with a password (PgBouncer checks its SCRAM), owning the
        # database; this process reads and builds as the URL's user, straight to PostgreSQL.
        self.role = f"{self.database}_app"[:63]
        self.admin_url = args.database_url.split("?")[0].rsplit("/", 1)[0] + "/postgres"
        self.role_password = secrets.token_hex(16)
        queues = {
            "CELERY_QUEUE": f"concord-chaos-{self.tag}",
            "RECOMPUTE_QUEUE": f"concord-chaos-{self.tag}-recompute",
            "JOBS_QUEUE": f"concord-chaos-{self.tag}-jobs",
        }
        self.queues = queues
        host, port = database.hostname or "127.0.0.1", database.port or 5432
        settings = {
            **queues,
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "127.0.0.1",
            "HEALTH_CHECK_HOST": "127.0.0.1",
            "POSTGRES_URL": f"postgres://{self.role}:{self.role_password}@{host}:{port}/"
            f"{self.database}",
            "CASE_UPLOAD_ROOT": str(tmp / "uploads"),
            "JOB_FILES_ROOT": str(tmp / "job-files"),
            "JOBS_RUN": "celery",
            "AGREEMENT_SWEEP_SECONDS": str(args.sweep),
            "AGREEMENT_BOOTSTRAP_RESAMPLES": str(args.resamples),
            "LOG_LEVEL": "WARNING",
            "AGREEMENT_LOG_LEVEL": "WARNING",
        }
        self.env_file = tmp / "concord.env"
        self.env_file.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        self.state = tmp / "shape"
        # What this process needs to build the study and read the results: the app's
        # settings, with PostgreSQL straight (PgBouncer gets killed) as the URL's user.
        self.env = {
            **{k: v for k, v in settings.items() if k != "POSTGRES_URL"},
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "REDIS_URL": f"redis://127.0.0.1:{self.ports['redis']}/0",
        }
        self.command = [
            sys.executable, str(ROOT / "deploy" / "hosts" / "shape.py"), "up",
            "--env-file", str(self.env_file), "--state", str(self.state),
            "--nodes", str(len(self.nodes)), "--web-workers", str(args.web_workers),
            "--web-port", str(first_web), "--pgbouncer-port", str(self.ports["pgbouncer"]),
            "--own-redis", str(self.ports["redis"]),
            "--proxy-bind", f"127.0.0.1:{self.ports['proxy']}",
            "--recompute-concurrency", "1", "--jobs-concurrency", "1",
            "--run-as", "nobody", "--restart-seconds", "1", "--log-level", "WARNING",
        ]  # fmt: skip
        self.process: subprocess.Popen | None = None
        self.checks = {
            "redis": lambda: answers(self.ports["redis"], b"PING\r\n", b"+PONG"),
            "pgbouncer": lambda: answers(self.ports["pgbouncer"]),
            "proxy": lambda: answers(self.ports["proxy"]),
            **{node: (lambda port=self.ports[node]: node_ready(port)) for node in self.nodes},
        }

    def database_create(self) -> None:
        """The database, dropped and made again, owned by the app's role (made again too)."""
        self.database_drop()
        password = f"'{self.role_password}'"  # hex: nothing to quote
        postgres(self.admin_url, f'CREATE ROLE "{self.role}" LOGIN PASSWORD {password}')
        postgres(self.admin_url, f'CREATE DATABASE "{self.database}" OWNER "{self.role}"')

    def database_drop(self) -> None:
        postgres(self.admin_url, f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
        postgres(self.admin_url, f'DROP ROLE IF EXISTS "{self.role}"')

    def group(self, name: str) -> SimpleNamespace:
        """A service's process group, as load.py counts its CPU: its leader's pid."""
        return SimpleNamespace(pid=self.pid(name))

    def status(self) -> dict:
        try:
            return json.loads((self.state / "run" / "services.json").read_text())
        except (OSError, ValueError):
            return {}

    def pid(self, name: str) -> int | None:
        return self.status().get("services", {}).get(name, {}).get("pid")

    def proxy_up(self, node: str) -> bool:
        """Does the proxy itself count ``node`` as up (its checks passed again)? A node that
        answers but is not yet back in the proxy leaves the other node alone in service."""
        try:
            with socket.socket(socket.AF_UNIX) as sock:
                sock.settimeout(2)
                sock.connect(str(self.state / "run" / "haproxy.sock"))
                sock.sendall(b"show stat\n")
                answer = b""
                while chunk := sock.recv(65536):
                    answer += chunk
        except OSError:
            return False
        for line in answer.decode().splitlines():
            fields = line.split(",")
            if len(fields) > 17 and fields[0] == "web" and fields[1] == node:
                return fields[17].startswith("UP")
        return False

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.ports['proxy']}"

    def start(self) -> None:
        """shape.py up: its files, migrate and collectstatic, then every process; returns
        once migrated (the study may be built while the processes start)."""
        log = self.tmp / "services.log"
        with log.open("ab") as output:
            self.process = subprocess.Popen(  # the repository's own deploy script
                self.command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=output,
                stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        wait_for(lambda: self.said("prepared"), timeout=400, what="the database migrated")

    def said(self, key: str) -> bool:
        if self.process.poll() is not None:
            raise RuntimeError(f"shape.py exited with {self.process.returncode}")
        return bool(self.status().get(key))

    def wait_ready(self) -> None:
        wait_for(lambda: self.said("ready"), timeout=400, what="the shape up (shape.py)")
        wait_for(
            lambda: self.proxied_ready(2) and all(self.proxy_up(node) for node in self.nodes),
            timeout=60, what="every node up in the proxy",
        )  # fmt: skip

    def proxied_ready(self, times: int) -> bool:
        for _ in range(times):
            try:
                if requests.get(self.base + "/healthz/ready", timeout=2).status_code != 200:
                    return False
            except requests.RequestException:
                return False
        return True

    def stop(self) -> None:
        """SIGTERM to shape.py, which stops every process it started."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def backends_end(self) -> int:
        """What an administrator's pg_terminate_backend does to every connection of the
        app's role (PgBouncer's to PostgreSQL, hence the requests' transactions)."""
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as connection:
            row = connection.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE usename = %s AND datname = %s",
                [self.role, self.database],
            ).fetchone()
        return row[0]

    def inflict(self, fault: Fault, rng: random.Random, errors: list) -> threading.Thread:
        """Kill what ``fault`` names; shape.py starts it again (a gunicorn worker: its
        master). The returned thread waits until it answers again (``fault.back``), so the
        next fault comes on time while a web node starts up. A web node or a web worker is
        chosen among the nodes up: one node always serves."""
        if fault.kind in ("web-worker", "web-node"):
            # A whole node only while another one is up; a worker of any node up.
            spare = 1 if fault.kind == "web-node" else 0
            wait_for(
                lambda: len([n for n in self.nodes if n not in self.restarting]) > spare,
                timeout=300, what="a web node up besides the one to kill",
            )  # fmt: skip
            name = rng.choice([node for node in self.nodes if node not in self.restarting])
        elif fault.kind == "pg-backends":
            name = "postgresql"
        else:
            wait_for(lambda: fault.kind not in self.restarting, timeout=300, what=fault.kind)
            name = fault.kind
        fault.target = name
        self.restarting.add(name)
        fault.killed = time.perf_counter()
        if fault.kind == "pg-backends":
            ended = self.backends_end()
            fault.target = f"postgresql ({ended} backends)"

            def back() -> None:
                return None
        elif fault.kind == "web-worker":
            workers = children(self.pid(name))
            if workers:
                os.kill(rng.choice(workers), signal.SIGKILL)

            def back() -> None:
                master = self.pid(name)
                wait_for(
                    lambda: len(children(master)) >= len(workers)
                    and node_ready(self.ports[name])
                    and self.proxy_up(name),
                    timeout=300, what=f"{name}'s worker replaced",
                )  # fmt: skip
        else:
            killed = self.pid(name)
            os.killpg(killed, signal.SIGKILL)  # shape.py starts it again, as systemd would

            def back() -> None:
                check = self.checks.get(name, lambda: True)
                wait_for(
                    lambda: self.pid(name) not in (None, killed) and check(),
                    timeout=300, what=f"{name} started again by shape.py",
                )  # fmt: skip
                if name in self.nodes:  # back when the proxy sends it requests again
                    wait_for(lambda: self.proxy_up(name), timeout=60, what=f"{name} in the proxy")

        def waiting() -> None:
            try:
                back()
                fault.back = time.perf_counter()
            except Exception as error:  # reported, and the run fails
                errors.append(f"{fault.kind}: {error!r}")
            finally:
                self.restarting.discard(name)

        thread = threading.Thread(target=waiting, daemon=True)
        thread.start()
        return thread


class Rater:
    """One browser through the proxy: cookies kept by hand (the production cookies are
    Secure, and the proxy stands in for the TLS end), CSRF token and Origin as a browser."""

    def __init__(self, base: str, username: str, password: str, slug: str, tally: Tally):
        self.base, self.username, self.password, self.slug = base, username, password, slug
        self.tally = tally
        self.http = requests.Session()
        self.cookies: dict[str, str] = {}
        self.count = 0

    def call(self, method, path, page, expect, **kwargs):
        headers = browser_headers(
            kwargs.pop("headers", {}),
            cookies=self.cookies,
            base=self.base,
            method=method,
            path=path,
        )
        start, wall_start = time.perf_counter(), time.time()
        try:
            response = self.http.request(
                method, self.base + path, headers=headers, allow_redirects=False, timeout=90,
                **kwargs,
            )  # fmt: skip
        except requests.RequestException:
            response = None
        status = response.status_code if response is not None else None
        record = Request(page, start, time.perf_counter(), status, wall_start, time.time())
        with self.tally.lock:
            self.tally.requests.append(record)
        if response is None:
            return None, record
        self.http.cookies.clear()
        for cookie in response.cookies:
            if cookie.value:
                self.cookies[cookie.name] = cookie.value
            else:
                self.cookies.pop(cookie.name, None)
        return (response if response.status_code in expect else None), record

    def run(self, until: float) -> None:
        while time.perf_counter() < until:
            if not self.cookies.get("sessionid") and not self.sign_in():
                time.sleep(0.3)
                continue
            outcome = self.rate_one()
            if outcome == "done":
                return
            if outcome == "failed":
                time.sleep(0.3)  # and start again from the next case

    def sign_in(self) -> bool:
        page, _ = self.call("GET", "/accounts/login/", "sign-in page", {200})
        if page is None:
            return False
        token = TOKEN.search(page.text).group(1)
        data = {"username": self.username, "password": self.password, "csrfmiddlewaretoken": token}
        answer, _ = self.call("POST", "/accounts/login/", "sign in", {302}, data=data)
        return answer is not None

    def rate_one(self) -> str:
        from tests.payloads import payload_for

        answer, _ = self.call("GET", f"/s/{self.slug}/next/", "next case", {302})
        if answer is None:
            return "failed"
        location = urlsplit(answer.headers["Location"]).path
        if location.startswith("/accounts/login/"):
            self.cookies.pop("sessionid", None)
            return "failed"
        if not location.startswith("/rate/"):
            return "done"
        page, _ = self.call("GET", location, "rating page", {200})
        if page is None:
            return "failed"
        token = TOKEN.search(page.text).group(1)
        version = int(VERSION.search(page.text).group(1))
        payload = payload_for(self.count + len(self.username))
        self.count += 1
        saved, _ = self.call(
            "POST", DRAFT_URL.search(page.text).group(1), "autosave", {200},
            data=json.dumps({"payload": payload, "version": version, "active_seconds": 5}),
            headers={"Content-Type": "application/json",
                     "X-CSRFToken": self.cookies.get("csrftoken", "")},
        )  # fmt: skip
        if saved is None:
            return "failed"
        form = {
            "csrfmiddlewaretoken": token,
            "payload": json.dumps(payload),
            "version": str(saved.json()["version"]),
            "active_seconds": "5",
        }
        uuid = location.split("/")[2]
        # Sent again until acknowledged, as a person resubmits the form after an error page:
        # the same version, so the server stores it once or finds it stored.
        for _ in range(SUBMIT_TRIES):
            submitted, record = self.call("POST", location, "submit", {302}, data=form)
            with self.tally.lock:
                self.tally.sent.setdefault(uuid, []).append(record)
                if submitted is not None:
                    self.tally.acknowledged.add(uuid)
                    self.tally.last_submit = record.end
            if submitted is not None:
                return "ok"
            if record.status is not None and record.status < 500:
                return "failed"  # refused: a person reads the page
            time.sleep(SUBMIT_RETRY_SECONDS)
        return "failed"


def plan_faults(args, rng: random.Random) -> list[Fault]:
    """Every kind once, then ``--faults`` drawn at random, at random moments between the
    warm-up and the quiet end; at least 2 s apart."""
    kinds = list(KINDS) + [rng.choice(KINDS) for _ in range(args.faults)]
    rng.shuffle(kinds)
    first, last = args.warmup, args.duration - args.quiet
    slot = (last - first) / len(kinds)
    return [
        Fault(kind, first + slot * n + rng.uniform(0, max(0.0, slot - 2.0)))
        for n, kind in enumerate(kinds)
    ]


def inflict_all(cluster: Cluster, faults: list[Fault], began: float, rng, errors: list) -> None:
    """Each fault at its time; returns once every process killed answers again."""
    restarts = []
    for fault in faults:
        delay = began + fault.at - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        try:
            restarts.append(cluster.inflict(fault, rng, errors))
        except Exception as error:  # reported, and the run fails
            errors.append(f"{fault.kind}: {error!r}")
            break
    for thread in restarts:
        thread.join()


def from_scratch(study_id: int) -> tuple[dict, int]:
    """The study's statistics and rating count computed now, from its data, every answer
    read again (the suite's oracle, tests/agreement/oracle.py)."""
    from django.core.serializers.json import DjangoJSONEncoder

    from agreement.selectors import ratings
    from studies.models import Study
    from tests.agreement.oracle import result_from_scratch

    ratings._ANSWER_VALUES.clear()
    result, n_ratings = result_from_scratch(study=Study.objects.get(pk=study_id))
    return json.loads(json.dumps(result, cls=DjangoJSONEncoder)), n_ratings


def converge(study_id: int, deadline: float) -> float | None:
    """perf_counter when the stored statistics are current and equal a from-scratch
    recompute of the data as they are now (the raters have stopped); None at ``deadline``."""
    from django.db import connection

    from agreement.models import StudyAgreement
    from agreement.selectors import agreement_is_stale

    expected, n_ratings = from_scratch(study_id)
    while time.perf_counter() < deadline:
        row = StudyAgreement.objects.select_related("study__rubric").get(study_id=study_id)
        if (
            row.computed >= row.requested
            and not agreement_is_stale(study=row.study, agreement=row)
            and row.result == expected
            and row.n_ratings == n_ratings
        ):
            return time.perf_counter()
        connection.close()
        time.sleep(0.25)
    return None


def stored_submits(study_id: int) -> tuple[dict[str, float], int]:
    """The study's submitted assignments with their ratings, each with the moment it was
    stored (the wall clock), and the submits stored twice (a revision kept because a later
    submit replaced a case's answer: no rater here submits a case twice on purpose)."""
    from annotation.models import Assignment, RatingRevision

    stored = {
        str(uuid): submitted_at.timestamp()
        for uuid, submitted_at in Assignment.objects.filter(
            test_case__study_id=study_id,
            status=Assignment.Status.SUBMITTED,
            ratings__isnull=False,
        )
        .values_list("uuid", "submitted_at")
        .distinct()
    }
    duplicates = RatingRevision.objects.filter(assignment__test_case__study_id=study_id).count()
    return stored, duplicates


def on_killed_connection(request: Request, faults: list[Fault]) -> bool:
    """Was ``request`` in flight while a process on its path died? A web worker's or a web
    node's death cuts the requests it had begun (the proxy sends no new one to a node that
    refuses connections); PgBouncer's, every query until it answers again."""
    for fault in faults:
        if fault.kind not in ON_PATH or not fault.killed:
            continue
        until = fault.back + GRACE if fault.kind == "pgbouncer" else fault.killed + CUT
        if request.start <= until and request.end >= fault.killed:
            return True
    return False


def untruthful(tally: Tally, stored: dict[str, float]) -> list[Request]:
    """Submits the app answered 500 though they stored the rating: it was stored while the
    request that got the 500 was in flight (a retry that finds it stored writes nothing).
    The proxy's 502 and 503 are no answer of the app's: its worker or node died with the
    request, which the rater then sends again."""
    return [
        record
        for uuid, moment in stored.items()
        for record in tally.sent.get(uuid, [])
        if record.status == 500 and record.wall_start <= moment <= record.wall_end
    ]


def verdict(args, tally: Tally, faults, stored, duplicates, converged, began, errors) -> dict:
    failed = [r for r in tally.requests if r.status is None or r.status >= 500]
    unexplained = [r for r in failed if not on_killed_connection(r, faults)]
    sent = set(tally.sent)
    lost = tally.acknowledged - set(stored)
    ghosts = set(stored) - sent
    # Stored, and never acknowledged however often the rater sent it again.
    silent = set(stored) - tally.acknowledged
    false_failures = untruthful(tally, stored)
    last = max((f.back for f in faults if f.back), default=began)
    figures = {
        "raters": args.raters,
        "duration": args.duration,
        "seed": args.seed,
        "requests": len(tally.requests),
        "submits_sent": len(sent),
        "acknowledged": len(tally.acknowledged),
        "stored": len(stored),
        "stored_unacknowledged": len(silent),
        "submits_resent": sum(len(records) - 1 for records in tally.sent.values()),
        "stored_answered_500": len(false_failures),
        "acknowledged_not_stored": len(lost),
        "stored_never_sent": len(ghosts),
        "duplicates": duplicates,
        "5xx": sum(1 for r in failed if r.status is not None),
        "no_answer": sum(1 for r in failed if r.status is None),
        "failed_on_killed_connections": len(failed) - len(unexplained),
        "failed_elsewhere": len(unexplained),
        "faults": [
            {
                "kind": f.kind,
                "target": f.target,
                "at": round(f.killed - began, 1),
                "down": round(f.back - f.killed, 1),
            }
            for f in faults
            if f.killed
        ],  # fmt: skip
        "convergence_after_last_fault": converged and round(converged - last, 1),
        "convergence_after_last_kill": converged
        and round(converged - max((f.killed for f in faults if f.killed), default=began), 1),
        "load_average": round(load_average(), 2),
    }
    problems = list(errors)
    if lost:
        problems.append(f"{len(lost)} acknowledged submits not stored")
    if ghosts:
        problems.append(f"{len(ghosts)} stored submits never sent")
    if silent:
        problems.append(f"{len(silent)} stored, never acknowledged though sent again")
    if false_failures:
        problems.append(f"{len(false_failures)} submits stored yet answered 500")
    if duplicates:
        problems.append(f"{duplicates} duplicates")
    if unexplained:
        problems.append(
            f"{len(unexplained)} failed requests outside the killed connections: "
            + ", ".join(f"{r.page} {r.status} at {r.start - began:.1f} s" for r in unexplained[:5])
        )
    if converged is None:
        problems.append(f"statistics not equal to a recompute within {CONVERGENCE_LIMIT:.0f} s")
    if len([f for f in faults if f.back]) < len(faults):
        problems.append("not every planned fault was inflicted and recovered from")
    figures["problems"] = problems
    return figures


def report(figures: dict) -> None:
    print(
        f"Shape (deploy/hosts/shape.py): HAProxy -> 2 web nodes (gunicorn) -> PgBouncer "
        f"(transaction) -> PostgreSQL; Redis; workers on queues recompute and jobs; beat. "
        f"{figures['raters']} raters for "
        f"{figures['duration']} s, seed {figures['seed']}"
    )
    for fault in figures["faults"]:
        print(f"  {fault['at']:>6.1f} s  killed {fault['kind']:<17} ({fault['target']}), "
              f"answering again after {fault['down']:.1f} s")  # fmt: skip
    print(
        f"Requests {figures['requests']}: 5xx {figures['5xx']}, no answer {figures['no_answer']}"
        f"; on killed connections {figures['failed_on_killed_connections']}, elsewhere "
        f"{figures['failed_elsewhere']}"
    )
    print(
        f"Submits sent {figures['submits_sent']} (sent again after no acknowledgment: "
        f"{figures['submits_resent']}), acknowledged {figures['acknowledged']}, stored "
        f"{figures['stored']} (never acknowledged: {figures['stored_unacknowledged']}); "
        f"acknowledged but not stored {figures['acknowledged_not_stored']}; stored yet "
        f"answered 500 {figures['stored_answered_500']}; duplicates {figures['duplicates']}"
    )
    print(
        "Statistics equal to a from-scratch recompute "
        + (f"{figures['convergence_after_last_fault']} s after the last fault's recovery "
           f"({figures['convergence_after_last_kill']} s after the last kill)"
           if figures["convergence_after_last_fault"] is not None else "NOT within the limit")
    )  # fmt: skip
    print(f"Load average at the end of the run: {figures['load_average']}")
    print("PASS" if not figures["problems"] else "FAIL: " + "; ".join(figures["problems"]))


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--raters", type=int, default=8)
    parser.add_argument("--duration", type=float, default=60, help="seconds the raters rate")
    parser.add_argument("--faults", type=int, default=0, help="faults beyond one of each kind")
    parser.add_argument("--warmup", type=float, default=4, help="seconds before the first fault")
    parser.add_argument("--quiet", type=float, default=8, help="seconds with no fault at the end")
    parser.add_argument("--cases", type=int, default=0, help="cases per rater (0: enough)")
    parser.add_argument("--web-workers", type=int, default=2, help="gunicorn workers per node")
    parser.add_argument("--sweep", type=int, default=5, help="beat's sweep interval, seconds")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    add_repeat(parser, default=1)
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", PG_URL))
    args = parser.parse_args()
    if not (1 <= args.raters <= MAX_RATERS and 10 <= args.duration <= MAX_DURATION):
        parser.error(f"1-{MAX_RATERS} raters, 10-{MAX_DURATION} s")
    if not 0 <= args.faults <= MAX_FAULTS:
        parser.error(f"0-{MAX_FAULTS} extra faults")
    if args.duration - args.quiet - args.warmup < 2 * (len(KINDS) + args.faults):
        parser.error("too many faults for the duration: 2 s at least between two")
    args.seed = args.seed if args.seed is not None else secrets.randbelow(10**6)
    args.cases = args.cases or min(2000, int(args.duration) + 20)
    for name in ("haproxy", "pgbouncer", "redis-server"):
        if program(name) is None:
            parser.error(f"{name} is not installed (apt-get install haproxy pgbouncer)")
    return args


def run(args, cluster: Cluster) -> dict:
    """Build the study, start the shape, run raters and faults; the figures."""
    progress("starting the shape (deploy/hosts/shape.py up)")
    cluster.start()
    progress(f"building the study ({args.raters} raters x {args.cases} cases)")
    study, usernames = build_study(args, "chaos")
    from django.db import connection

    connection.close()
    cluster.wait_ready()
    progress(f"{args.raters} raters for {args.duration:.0f} s, seed {args.seed}")
    from tests.factories import PASSWORD

    rng = random.Random(args.seed)
    faults = plan_faults(args, rng)
    tally = Tally()
    errors: list[str] = []
    began = time.perf_counter()
    until = began + args.duration
    raters = [Rater(cluster.base, name, PASSWORD, study.slug, tally) for name in usernames]
    threads = [threading.Thread(target=r.run, args=(until,), daemon=True) for r in raters]
    chaos = threading.Thread(
        target=inflict_all, args=(cluster, faults, began, rng, errors), daemon=True
    )
    for thread in [*threads, chaos]:
        thread.start()
    for thread in [*threads, chaos]:
        thread.join(timeout=max(1.0, until + 300 - time.perf_counter()))
    last = max((f.back for f in faults if f.back), default=began)
    progress("waiting for the statistics to converge")
    converged = converge(study.pk, deadline=last + CONVERGENCE_LIMIT)
    stored, duplicates = stored_submits(study.pk)
    return verdict(args, tally, faults, stored, duplicates, converged, began, errors)


def main() -> int:
    args = arguments()
    title = f"Chaos run: {args.raters} raters for {args.duration:.0f} s, seed {args.seed}"
    with reported(title, runs=args.repeat, why_fewer="minutes a run"):
        if args.repeat == 1:
            figures = one_run(args)
            runs = [figures] if figures is not None else []
        else:  # each run in a process of its own: Django is set up once per process
            runs = runs_apart(__file__, sys.argv[1:], args.repeat)
        converged = [f["convergence_after_last_fault"] for f in runs]
        if len(runs) > 1 and None not in converged:
            print(f"--- statistics equal to a recompute after the last fault: {spread(converged)}")
    if args.json and runs:
        args.json.write_text(json.dumps(runs[0] if args.repeat == 1 else runs, indent=2))
    failed = len(runs) < args.repeat or any(f["problems"] for f in runs)
    return 1 if failed else 0


def one_run(args) -> dict | None:
    """The shape started, the raters' run with its faults, everything stopped: the figures,
    or None when interrupted or broken."""
    # SIGTERM ends the run like Ctrl-C (the previous run's cleanup ignored both).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)

    tmp = Path(tempfile.mkdtemp(prefix="concord-chaos-"))
    tmp.chmod(0o755)  # PgBouncer, run as nobody, reads its files in it
    cluster = Cluster(args, tmp)
    # This process reads and builds through PostgreSQL directly: PgBouncer gets killed.
    for key in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE", "DATABASE_POOL_MODE"):
        os.environ.pop(key, None)
    os.environ.update(cluster.env, DATABASE_URL=args.database_url)
    sys.path.insert(0, str(ROOT))
    created = False
    figures = None
    try:
        created = True
        cluster.database_create()
        figures = run(args, cluster)
        report(figures)
    except KeyboardInterrupt:
        print("\nInterrupted: stopping what was started.", file=sys.stderr)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        cluster.stop()
        if figures is None or figures["problems"]:
            kept = Path(tempfile.gettempdir()) / f"concord-chaos-{cluster.tag}"
            if (tmp / "shape" / "logs").exists():
                shutil.copytree(tmp / "shape" / "logs", kept, dirs_exist_ok=True)
                shutil.copy(tmp / "services.log", kept / "shape.log")
                print(f"The services' logs: {kept}", file=sys.stderr)
        from django.db import connections

        connections.close_all()
        if created:
            cluster.database_drop()
        shutil.rmtree(tmp, ignore_errors=True)
    return figures


if __name__ == "__main__":
    sys.exit(main())
