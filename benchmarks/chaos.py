"""Chaos run: raters submit through the scaled-out shape while its processes are killed.

    .venv/bin/python benchmarks/chaos.py --duration 180 --raters 12       # the long run
    .venv/bin/python benchmarks/chaos.py --duration 40 --raters 6         # the CI test's

The shape, started by this script on the loopback interface only, each on a free port:
HAProxy in front of two web nodes (gunicorn, two workers each, health-checked on
/healthz/ready), PgBouncer in transaction mode in front of PostgreSQL, a Redis of its own,
two Celery workers on separate queues (recompute, jobs) and Celery beat. The database named
by ``--database-url`` (default ``concord_bench_chaos``) is dropped and created again, and
dropped at the end.

N raters sign in through the proxy and rate case after case as static/js/rating.js does (the
page, its autosave, the submit); a rater whose request fails starts again from the study's
next case, as a person would. Meanwhile, at random moments (``--seed``), the script kills
with SIGKILL: one gunicorn worker, a whole web node, the recompute worker, the jobs worker,
beat, Redis and PgBouncer; each is started again after a short outage (the gunicorn master
replaces its own worker). Every kind is killed at least once; ``--faults`` more are drawn
at random. No fault comes in the last ``--quiet`` seconds of the raters' run.

It reports the requests sent, the submits sent, acknowledged (the rater got the redirect to
its next case) and stored, duplicates (a submit stored twice), the 5xx answers and whether
each fell on a killed connection (its request was in flight while a process on its path --
a web worker, a web node, PgBouncer -- was down), and the time from the last fault until
the stored statistics equal a from-scratch recompute of the final data. It exits 1 unless:
every acknowledged submit is stored and every stored one was sent, no duplicates, no 5xx
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
KINDS = ("web-worker", "web-node", "recompute-worker", "jobs-worker", "beat", "redis", "pgbouncer")
# The processes on a rater's request path: a 5xx on a request in flight when one of them was
# killed (PgBouncer: while it was down, or within GRACE seconds after it answered again)
# fell on a killed connection. Redis, the workers and beat are not on the path: a 5xx while
# one of them was down is a failure.
ON_PATH = {"web-worker", "web-node", "pgbouncer"}
GRACE = 3.0
# A web worker or node killed: the requests it had taken (up to this long after the kill,
# those the proxy had already handed to it) are cut; later ones go to a live worker.
CUT = 0.5
CONVERGENCE_LIMIT = 60.0
# Bounds on the run: it must end, whatever it is asked.
MAX_RATERS, MAX_DURATION, MAX_FAULTS = 50, 1800, 200


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


class Service:
    """One process (and its children, in a process group of its own) the run started."""

    def __init__(self, name: str, command: list[str], env: dict, log: Path, ready):
        self.name, self.command, self.env, self.log, self.ready = name, command, env, log, ready
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 120) -> None:
        self.launch()
        self.wait_ready(timeout)

    def launch(self) -> None:
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(  # our own commands, on loopback only
                self.command, cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=log, start_new_session=True,
            )  # fmt: skip

    def wait_ready(self, timeout: float = 120) -> None:
        wait_for(self._ready_or_exited, timeout=timeout, what=f"{self.name} started")
        if self.process.poll() is not None:
            raise RuntimeError(f"{self.name} exited with {self.process.returncode}: {self.log}")

    def _ready_or_exited(self) -> bool:
        return self.process.poll() is not None or self.ready()

    def kill(self) -> None:
        """SIGKILL to the whole group: the process and every child, nothing left to tidy."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.kill()

    def children(self) -> list[int]:
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == self.process.pid:
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


@dataclass
class Tally:
    lock: threading.Lock = field(default_factory=threading.Lock)
    requests: list[Request] = field(default_factory=list)
    sent: dict[str, list[Request]] = field(default_factory=dict)  # submits per assignment
    acknowledged: set[str] = field(default_factory=set)
    last_submit: float = 0.0


class Cluster:
    """The scaled-out shape on one machine, every port free and on 127.0.0.1."""

    def __init__(self, args, tmp: Path):
        self.tmp = tmp
        self.tag = secrets.token_hex(3)
        self.web_workers = args.web_workers
        self.restarting: set[str] = set()  # services killed and not answering yet
        self.nodes = [f"web{n}" for n in range(1, getattr(args, "nodes", 2) + 1)]
        self.ports = {name: free_port() for name in ("redis", "pgbouncer", *self.nodes, "proxy")}
        database = urlsplit(args.database_url)
        self.database = database.path.lstrip("/")
        python = sys.executable
        bin_dir = Path(python).parent
        log = tmp / "services.log"
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("DJANGO_", "DATABASE_", "CELERY_", "JOBS_", "REDIS_"))
        }
        queues = {
            "CELERY_QUEUE": f"concord-chaos-{self.tag}",
            "RECOMPUTE_QUEUE": f"concord-chaos-{self.tag}-recompute",
            "JOBS_QUEUE": f"concord-chaos-{self.tag}-jobs",
        }
        self.queues = queues
        user = database.username or "postgres"
        password = f":{database.password}" if database.password else ""
        env.update(
            queues,
            DJANGO_SETTINGS_MODULE="config.settings.production",
            DATABASE_URL=f"postgres://{user}{password}@127.0.0.1:{self.ports['pgbouncer']}/"
            f"{self.database}",
            DATABASE_POOL_MODE="transaction",
            REDIS_URL=f"redis://127.0.0.1:{self.ports['redis']}/0",
            SECRET_KEY=secrets.token_urlsafe(50),
            ALLOWED_HOSTS="127.0.0.1",
            HEALTH_CHECK_HOST="127.0.0.1",
            CASE_UPLOAD_ROOT=str(tmp / "uploads"),
            JOBS_RUN="celery",
            GUNICORN_WORKERS=str(args.web_workers),
            AGREEMENT_SWEEP_SECONDS=str(args.sweep),
            AGREEMENT_BOOTSTRAP_RESAMPLES=str(args.resamples),
            LOG_LEVEL="WARNING",
            AGREEMENT_LOG_LEVEL="WARNING",
        )
        self.env = env
        ports = self.ports
        self.services = {
            "redis": Service(
                "redis",
                [
                    program("redis-server"),
                    "--port",
                    str(ports["redis"]),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                ],
                env,
                log,
                lambda: answers(ports["redis"], b"PING\r\n", b"+PONG"),
            ),  # fmt: skip
            "pgbouncer": Service(
                "pgbouncer",
                [
                    program("pgbouncer"),
                    *(["-u", "nobody"] if os.geteuid() == 0 else []),
                    str(self.pgbouncer_config(args)),
                ],
                env,
                log,
                lambda: answers(ports["pgbouncer"]),
            ),  # fmt: skip
        }
        for node in self.nodes:
            self.services[node] = Service(
                node,
                [
                    str(bin_dir / "gunicorn"),
                    "-c",
                    "config/gunicorn.py",
                    "--no-control-socket",
                    "config.wsgi:application",
                ],
                {**env, "GUNICORN_BIND": f"127.0.0.1:{ports[node]}"},
                log,
                lambda port=ports[node]: node_ready(port),
            )
        self.services["proxy"] = Service(
            "proxy",
            [program("haproxy"), "-db", "-f", str(self.haproxy_config())],
            env, log, lambda: answers(ports["proxy"]),
        )  # fmt: skip
        for kind in ("recompute", "jobs"):
            self.services[f"{kind}-worker"] = Service(
                f"{kind}-worker",
                [python, "-m", "celery", "-A", "config", "worker", "-Q",
                 queues[f"{kind.upper()}_QUEUE"], "--concurrency", "1", "--without-gossip",
                 "--without-mingle", "--without-heartbeat", "--loglevel", "WARNING",
                 "-n", f"{kind}-{self.tag}@%h"],
                env, log, lambda: True,
            )  # fmt: skip
        self.services["beat"] = Service(
            "beat",
            [python, "-m", "celery", "-A", "config", "beat", "--loglevel", "WARNING",
             "--schedule", str(tmp / "beat-schedule")],
            env, log, lambda: True,
        )  # fmt: skip

    def pgbouncer_config(self, args) -> Path:
        """deploy/pgbouncer.ini's settings, on this run's ports; trust on loopback only."""
        database = urlsplit(args.database_url)
        upstream = (
            f"host={database.hostname or '127.0.0.1'} port={database.port or 5432} "
            f"dbname={self.database} user={database.username or 'postgres'}"
            + (f" password={database.password}" if database.password else "")
        )
        users = self.tmp / "pgbouncer-users.txt"
        users.write_text(f'"{database.username or "postgres"}" ""\n')
        path = self.tmp / "pgbouncer.ini"
        path.write_text(
            f"[databases]\n{self.database} = {upstream}\n\n"
            "[pgbouncer]\nlisten_addr = 127.0.0.1\n"
            f"listen_port = {self.ports['pgbouncer']}\nunix_socket_dir =\n"
            f"auth_type = trust\nauth_file = {users}\npool_mode = transaction\n"
            "max_client_conn = 200\ndefault_pool_size = 12\nserver_reset_query =\n"
            "ignore_startup_parameters = extra_float_digits\n"
        )
        for item in (self.tmp, users, path):
            item.chmod(0o755 if item.is_dir() else 0o644)  # pgbouncer runs as nobody
        return path

    def haproxy_config(self) -> Path:
        """deploy/haproxy.cfg's settings, on this run's ports, TLS left out (loopback)."""
        path = self.tmp / "haproxy.cfg"
        path.write_text(
            (ROOT / "deploy" / "haproxy.cfg")
            .read_text()
            .replace(
                "    log stdout format raw local0\n",
                f"    stats socket {self.tmp / 'haproxy.sock'} mode 600 level user\n",
            )
            .replace("    option httplog\n", "")
            .replace(
                "resolvers docker\n    nameserver dns 127.0.0.11:53\n    hold valid 5s\n\n", ""
            )
            .replace(
                "frontend plain\n    bind :80\n    http-request redirect scheme https code 301\n\n",
                "",
            )
            .replace(
                "bind :443 ssl crt /etc/haproxy/certs/", f"bind 127.0.0.1:{self.ports['proxy']}"
            )
            .replace(" maxconn 3 ", f" maxconn {self.web_workers} ")
            .replace(
                "    server-template web 1-20 web:8000 check resolvers docker init-addr none\n",
                "".join(
                    f"    server {node} 127.0.0.1:{self.ports[node]} check\n" for node in self.nodes
                ),
            )
        )
        return path

    def proxy_up(self, node: str) -> bool:
        """Does the proxy itself count ``node`` as up (its checks passed again)? A node that
        answers but is not yet back in the proxy leaves the other node alone in service."""
        try:
            with socket.socket(socket.AF_UNIX) as sock:
                sock.settimeout(2)
                sock.connect(str(self.tmp / "haproxy.sock"))
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
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--no-input", "--verbosity", "0"],
            cwd=ROOT, env=self.env, check=True,
        )  # fmt: skip
        for name in ("redis", "pgbouncer"):
            self.services[name].start()
        # The Django processes start side by side: most of their start-up is imports.
        for name in (*self.nodes, "proxy", "recompute-worker", "jobs-worker", "beat"):
            self.services[name].launch()
        for service in self.services.values():
            service.wait_ready()
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
        for service in reversed(list(self.services.values())):
            service.stop()

    def inflict(self, fault: Fault, rng: random.Random, errors: list) -> threading.Thread:
        """Kill what ``fault`` names and start it again after a short outage (a gunicorn
        worker: its master replaces it). The returned thread waits until it answers again
        (``fault.back``), so the next fault comes on time while a web node starts up. A web
        node or a web worker is chosen among the nodes up: one node always serves."""
        if fault.kind in ("web-worker", "web-node"):
            # A whole node only while another one is up; a worker of any node up.
            spare = 1 if fault.kind == "web-node" else 0
            wait_for(
                lambda: len([n for n in self.nodes if n not in self.restarting]) > spare,
                timeout=300, what="a web node up besides the one to kill",
            )  # fmt: skip
            name = rng.choice([node for node in self.nodes if node not in self.restarting])
        else:
            wait_for(lambda: fault.kind not in self.restarting, timeout=300, what=fault.kind)
            name = fault.kind
        service = self.services[name]
        fault.target = name
        self.restarting.add(name)
        fault.killed = time.perf_counter()
        if fault.kind == "web-worker":
            workers = service.children()
            if workers:
                os.kill(rng.choice(workers), signal.SIGKILL)

            def back() -> None:
                port = self.ports[name]
                wait_for(
                    lambda: len(service.children()) >= len(workers)
                    and node_ready(port)
                    and self.proxy_up(name),
                    timeout=300, what=f"{name}'s worker replaced",
                )  # fmt: skip
        else:
            service.kill()
            time.sleep({"web-node": 3.0, "redis": 2.0, "pgbouncer": 0.5}.get(fault.kind, 1.0))
            service.launch()

            def back() -> None:
                service.wait_ready(timeout=300)
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
        start = time.perf_counter()
        try:
            response = self.http.request(
                method, self.base + path, headers=headers, allow_redirects=False, timeout=90,
                **kwargs,
            )  # fmt: skip
        except requests.RequestException:
            response = None
        status = response.status_code if response is not None else None
        record = Request(page, start, time.perf_counter(), status)
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
        submitted, record = self.call("POST", location, "submit", {302}, data=form)
        with self.tally.lock:
            self.tally.sent.setdefault(uuid, []).append(record)
            if submitted is not None:
                self.tally.acknowledged.add(uuid)
                self.tally.last_submit = record.end
        if submitted is None:
            return "failed"
        return "ok"


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


def stored_submits(study_id: int) -> tuple[set[str], int]:
    """The study's submitted assignments with their ratings, and the submits stored twice
    (a revision kept because a later submit replaced a case's answer: no rater here submits
    a case twice on purpose)."""
    from annotation.models import Assignment, RatingRevision

    stored = {
        str(uuid)
        for uuid in Assignment.objects.filter(
            test_case__study_id=study_id,
            status=Assignment.Status.SUBMITTED,
            ratings__isnull=False,
        )
        .values_list("uuid", flat=True)
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


def verdict(args, tally: Tally, faults, stored, duplicates, converged, began, errors) -> dict:
    failed = [r for r in tally.requests if r.status is None or r.status >= 500]
    unexplained = [r for r in failed if not on_killed_connection(r, faults)]
    sent = set(tally.sent)
    lost = tally.acknowledged - stored
    ghosts = stored - sent
    # Stored though the rater got no acknowledgment: every one must have had its answer cut.
    cut = {
        uuid
        for uuid in stored - tally.acknowledged
        if any(on_killed_connection(r, faults) for r in tally.sent.get(uuid, []))
    }
    last = max((f.back for f in faults if f.back), default=began)
    figures = {
        "raters": args.raters,
        "duration": args.duration,
        "seed": args.seed,
        "requests": len(tally.requests),
        "submits_sent": len(sent),
        "acknowledged": len(tally.acknowledged),
        "stored": len(stored),
        "stored_unacknowledged": len(stored - tally.acknowledged),
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
    if stored - tally.acknowledged - cut:
        problems.append(f"{len(stored - tally.acknowledged - cut)} stored, unacknowledged, not cut")
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
        f"Shape: HAProxy -> 2 web nodes (gunicorn) -> PgBouncer (transaction) -> PostgreSQL; "
        f"Redis; workers on queues recompute and jobs; beat. {figures['raters']} raters for "
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
        f"Submits sent {figures['submits_sent']}, acknowledged {figures['acknowledged']}, "
        f"stored {figures['stored']} (of which unacknowledged, their answer cut: "
        f"{figures['stored_unacknowledged']}); acknowledged but not stored "
        f"{figures['acknowledged_not_stored']}; duplicates {figures['duplicates']}"
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
    progress(f"building the study ({args.raters} raters x {args.cases} cases)")
    study, usernames = build_study(args, "chaos")
    from django.db import connection

    connection.close()
    progress("starting the services")
    cluster.start()
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
    cluster = Cluster(args, tmp)
    # This process reads and builds through PostgreSQL directly: PgBouncer gets killed.
    for key in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"):
        os.environ.pop(key, None)
    os.environ.update(
        {k: v for k, v in cluster.env.items() if k not in ("DATABASE_URL", "DATABASE_POOL_MODE")},
        DATABASE_URL=args.database_url,
    )
    sys.path.insert(0, str(ROOT))
    created = False
    figures = None
    try:
        postgres(args.database_url, f'DROP DATABASE IF EXISTS "{cluster.database}" WITH (FORCE)')
        postgres(args.database_url, f'CREATE DATABASE "{cluster.database}"')
        created = True
        figures = run(args, cluster)
        report(figures)
    except KeyboardInterrupt:
        print("\nInterrupted: stopping what was started.", file=sys.stderr)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        cluster.stop()
        log = tmp / "services.log"
        if figures is None or figures["problems"]:
            kept = Path(tempfile.gettempdir()) / f"concord-chaos-{cluster.tag}.log"
            if log.exists():
                shutil.copy(log, kept)
                print(f"The services' log: {kept}", file=sys.stderr)
        from django.db import connections

        connections.close_all()
        if created:
            postgres(
                args.database_url, f'DROP DATABASE IF EXISTS "{cluster.database}" WITH (FORCE)'
            )
        shutil.rmtree(tmp, ignore_errors=True)
    return figures


if __name__ == "__main__":
    sys.exit(main())
