"""Concord's scaled-out shape on one Debian host, without Docker, from the files in deploy/
(docs/deployment.md, "On a Debian host").

    .venv/bin/python deploy/hosts/shape.py config --env-file /etc/concord/concord.env \\
        --state /var/lib/concord/shape
    .venv/bin/python deploy/hosts/shape.py up --env-file /etc/concord/concord.env \\
        --state /var/lib/concord/shape
    .venv/bin/python deploy/hosts/shape.py manage --env-file /etc/concord/concord.env \\
        --state /var/lib/concord/shape -- createsuperuser

``config`` writes into the state directory: PgBouncer's settings (deploy/pgbouncer.ini with
this host's database, address, port and user list, and no pidfile), its user list (the
database role's SCRAM verifier: the same verifier is set on the role in PostgreSQL, so
PgBouncer passes the client's SCRAM proof through and no password is stored in a file of
its own), and HAProxy's settings (deploy/haproxy.cfg with one ``server`` line per web node
and HEALTH_CHECK_HOST), for Debian's haproxy service.

``up`` does the same, migrates the database (straight to PostgreSQL), collects the static
files, then starts and keeps running: PgBouncer, the web nodes (gunicorn), a Celery worker
on the recompute queue and one on the jobs queue, beat, and, when asked, HAProxy on a plain
address (``--proxy-bind``, a trial or a test) and a Redis of its own (``--own-redis``). A
process that exits is started again after ``--restart-seconds`` (as systemd's
``Restart=always`` would do): PgBouncer killed with -9 comes back by itself, with no pidfile
to refuse it. Each one's output goes to ``STATE/logs/NAME.log``; ``STATE/run/services.json``
says which process is which, and ``"ready": true`` once every one answered. SIGTERM or
Ctrl-C stops them all. ``manage`` runs a manage.py command with the app's settings.

Run as root, PgBouncer (which refuses root) runs as ``--run-as`` (default ``postgres``),
which is given its two files; run as an ordinary user (the systemd unit
deploy/hosts/concord-shape.service runs it as ``concord``), everything runs as that user.

The environment file holds the app's settings as ``NAME=value`` lines: SECRET_KEY,
ALLOWED_HOSTS, HEALTH_CHECK_HOST (one of ALLOWED_HOSTS), POSTGRES_URL (PostgreSQL itself, as
the app's role, with its password: letters, digits, ``-`` and ``_``), REDIS_URL (unless
``--own-redis``), and any other setting of the README's table, given to every process. The
app is given DATABASE_URL through PgBouncer, in transaction mode, never POSTGRES_URL.
"""

import argparse
import base64
import hashlib
import hmac
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
REQUIRED = ("SECRET_KEY", "ALLOWED_HOSTS", "HEALTH_CHECK_HOST", "POSTGRES_URL")
# Names of the shape's own, never handed to the app as they are.
SHAPE_ONLY = ("POSTGRES_URL",)
SCRAM_ITERATIONS = 4096
# A process that stayed up this long had started well: its next exit waits the shortest time.
STEADY_SECONDS = 30
MAX_RESTART_SECONDS = 10


class ShapeError(Exception):
    """The shape cannot be brought up as asked; ``str(error)`` says why and what to do."""


# --- Settings --------------------------------------------------------------------------------


def env_file_read(path: Path) -> dict[str, str]:
    """``NAME=value`` lines; blank lines and ``#`` comments skipped, quotes around a value
    taken off."""
    values = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.partition("=")
        name = name.strip().removeprefix("export ").strip()
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ShapeError(f"{path}, line {number}: not NAME=value")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[name] = value
    missing = [name for name in REQUIRED if not values.get(name)]
    if missing:
        raise ShapeError(f"{path} does not set {', '.join(missing)} (docs/deployment.md)")
    return values


@dataclass(frozen=True)
class Database:
    """PostgreSQL as POSTGRES_URL names it."""

    user: str
    password: str
    host: str
    port: int
    name: str

    @classmethod
    def from_url(cls, url: str) -> "Database":
        parts = urlsplit(url)
        if parts.scheme not in ("postgres", "postgresql") or not parts.username:
            raise ShapeError("POSTGRES_URL must be postgres://ROLE:PASSWORD@HOST:PORT/DATABASE")
        if not parts.password:
            raise ShapeError("POSTGRES_URL has no password: PgBouncer checks the app's SCRAM")
        return cls(
            user=unquote(parts.username),
            password=unquote(parts.password),
            host=parts.hostname or "127.0.0.1",
            port=parts.port or 5432,
            name=parts.path.lstrip("/") or unquote(parts.username),
        )

    def url(self, host: str, port: int) -> str:
        return (
            f"postgres://{quote(self.user, safe='')}:{quote(self.password, safe='')}"
            f"@{host}:{port}/{self.name}"
        )


@dataclass
class Shape:
    """What ``config`` writes and ``up`` runs, from the command line and the env file."""

    args: argparse.Namespace
    settings: dict[str, str]
    database: Database = field(init=False)

    def __post_init__(self):
        self.database = Database.from_url(self.settings["POSTGRES_URL"])

    @property
    def state(self) -> Path:
        return self.args.state

    def web_ports(self) -> list[int]:
        return [self.args.web_port + n for n in range(self.args.nodes)]

    def app_environment(self) -> dict[str, str]:
        """What every Concord process is given: the env file's settings, through PgBouncer."""
        base = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("DJANGO_", "DATABASE_", "CELERY_", "REDIS_", "GUNICORN_"))
        }
        settings = {k: v for k, v in self.settings.items() if k not in SHAPE_ONLY}
        defaults = {
            "RECOMPUTE_QUEUE": "recompute",
            "JOBS_QUEUE": "jobs",
            "CASE_UPLOAD_ROOT": str(self.state / "data" / "case-uploads"),
            "JOB_FILES_ROOT": str(self.state / "data" / "job-files"),
        }
        return {
            **base,
            **defaults,
            **settings,
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "DATABASE_URL": self.database.url("127.0.0.1", self.args.pgbouncer_port),
            "DATABASE_POOL_MODE": "transaction",
            "GUNICORN_WORKERS": str(self.args.web_workers),
            **(
                {"REDIS_URL": f"redis://127.0.0.1:{self.args.own_redis}/0"}
                if self.args.own_redis
                else {}
            ),
        }

    def direct_environment(self) -> dict[str, str]:
        """For ``migrate``: PostgreSQL itself (a migration may need a session of its own)."""
        env = self.app_environment()
        env["DATABASE_URL"] = self.database.url(self.database.host, self.database.port)
        env.pop("DATABASE_POOL_MODE")
        return env


# --- PgBouncer ---------------------------------------------------------------------------


def scram_verifier(password: str, *, salt: bytes | None = None) -> str:
    """PostgreSQL's SCRAM-SHA-256 verifier of ``password`` (RFC 5802 and 7677: the salted
    password by PBKDF2, the stored key the SHA-256 of its client key, and its server key).
    The password is taken as it is: SASLprep changes nothing in letters, digits, - and _."""
    salt = salt or secrets.token_bytes(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, SCRAM_ITERATIONS)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
    stored_key = hashlib.sha256(client_key).digest()

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    return f"SCRAM-SHA-256${SCRAM_ITERATIONS}:{b64(salt)}${b64(stored_key)}:{b64(server_key)}"


def role_verifier_set(database: Database, verifier: str) -> None:
    """Give the role ``verifier`` in PostgreSQL, as the role itself (no superuser needed):
    PgBouncer passes a client's SCRAM proof on only when both hold the same verifier."""
    import psycopg
    from psycopg import sql

    url = database.url(database.host, database.port)
    with psycopg.connect(url, autocommit=True, connect_timeout=10) as connection:
        statement = sql.SQL("ALTER ROLE {} PASSWORD {}").format(
            sql.Identifier(database.user), sql.Literal(verifier)
        )
        connection.execute(statement)


def pgbouncer_ini(shape: Shape, userlist: Path) -> str:
    """deploy/pgbouncer.ini with this host's database, address, port and user list. It sets
    no pidfile: PgBouncer runs in the foreground under this script (or systemd), which
    starts it again after a crash; a pidfile left by a killed PgBouncer would stop that."""
    database = shape.database
    replace = {
        "listen_addr": "127.0.0.1",
        "listen_port": str(shape.args.pgbouncer_port),
        "auth_file": str(userlist),
    }
    lines, section = [], ""
    for line in (DEPLOY / "pgbouncer.ini").read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped
        key = stripped.split("=", 1)[0].strip()
        if section == "[databases]" and "=" in stripped and not stripped.startswith(";"):
            upstream = f"host={database.host} port={database.port} dbname={database.name}"
            line = f"{database.name} = {upstream}"
        elif section == "[pgbouncer]" and key in replace and not stripped.startswith(";"):
            line = f"{key} = {replace[key]}"
        elif key in ("pidfile", "logfile") and not stripped.startswith(";"):
            raise ShapeError(
                f"deploy/pgbouncer.ini sets {key}: the shape runs it in the foreground"
            )
        lines.append(line)
    return "\n".join(lines) + "\n"


def pgbouncer_files(shape: Shape) -> tuple[Path, Path]:
    """The settings and the user list, readable by the user PgBouncer runs as alone (the
    list) or by anyone (the settings)."""
    userlist, ini = shape.state / "pgbouncer-users.txt", shape.state / "pgbouncer.ini"
    verifier = scram_verifier(shape.database.password)
    role_verifier_set(shape.database, verifier)
    userlist.write_text(f'"{shape.database.user}" "{verifier}"\n')
    ini.write_text(pgbouncer_ini(shape, userlist))
    userlist.chmod(0o600)
    ini.chmod(0o644)
    if os.geteuid() == 0:
        account = pwd.getpwnam(shape.args.run_as)
        for path in (userlist, ini):
            os.chown(path, account.pw_uid, account.pw_gid)
    return ini, userlist


# --- HAProxy -----------------------------------------------------------------------------


def haproxy_cfg(shape: Shape) -> str:
    """deploy/haproxy.cfg for this host: its ``server`` lines, one per web node, and the
    Host of the health checks. TLS as the file says (certificates in /etc/haproxy/certs/);
    the environment's CONCORD_PLAIN_BIND replaces it (``--proxy-bind``)."""
    text = (DEPLOY / "haproxy.cfg").read_text()
    servers = "".join(
        f"    server web{n} {shape.args.web_host}:{port} check\n"
        for n, port in enumerate(shape.web_ports(), 1)
    )
    hosts_block = re.compile(r"(\.else\n)(    # On hosts:[^\n]*\n(?:    [^\n]*\n)*?)(\.endif\n)")
    if not hosts_block.search(text):
        raise ShapeError("deploy/haproxy.cfg has no block of server lines for hosts")
    text = hosts_block.sub(
        lambda m: m.group(1) + m.group(2).split("\n", 1)[0] + "\n" + servers + m.group(3), text
    )
    host = shape.settings["HEALTH_CHECK_HOST"]
    if not re.fullmatch(r"[A-Za-z0-9.:\[\]-]+", host):
        raise ShapeError(f"HEALTH_CHECK_HOST {host!r} is not a host name")
    return text.replace(
        "    presetenv CONCORD_NODE_MAXCONN 3\n",
        f"    presetenv CONCORD_NODE_MAXCONN {shape.args.web_workers}\n"
        f"    setenv HEALTH_CHECK_HOST {host}\n",
    )


def haproxy_file(shape: Shape) -> Path:
    path = shape.state / "haproxy.cfg"
    path.write_text(haproxy_cfg(shape))
    path.chmod(0o644)
    return path


# --- Processes -----------------------------------------------------------------------------


def program(name: str) -> str:
    """Where ``name`` is installed; Debian puts the daemons in /usr/sbin."""
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    if found is None:
        raise ShapeError(f"{name} is not installed: apt-get install haproxy pgbouncer redis-server")
    return found


def answers(port: int, probe: bytes | None = None, expect: bytes = b"") -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            if probe is None:
                return True
            sock.sendall(probe)
            return sock.recv(64).startswith(expect)
    except OSError:
        return False


def node_ready(host: str, port: int, health_host: str) -> bool:
    """A web node's readiness, asked as the proxy asks it."""
    request = urllib.request.Request(
        f"http://{host}:{port}/healthz/ready",
        headers={"Host": health_host, "X-Forwarded-Proto": "https"},
    )
    try:
        with urllib.request.urlopen(request, timeout=3) as response:  # noqa: S310 - http only
            return response.status == 200
    except (OSError, urllib.error.URLError):
        return False


@dataclass
class Service:
    """One long-running process, started again whenever it exits."""

    name: str
    command: list[str]
    env: dict[str, str]
    ready: object  # a callable: does it answer?
    process: subprocess.Popen | None = None
    started: float = 0.0
    restarts: int = 0
    due: float | None = None  # when to start it again after an exit
    failures: int = 0

    def launch(self, logs: Path) -> None:
        with open(logs / f"{self.name}.log", "ab") as log:
            self.process = subprocess.Popen(  # noqa: S603 - the shape's own programs
                self.command, cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL,
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        self.started, self.due = time.monotonic(), None

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=20)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


def services(shape: Shape, ini: Path, haproxy: Path) -> list[Service]:
    """Every process of the shape, in the order they start."""
    args, env, python = shape.args, shape.app_environment(), sys.executable
    found: list[Service] = []
    if args.own_redis:
        found.append(
            Service(
                "redis",
                [
                    program("redis-server"),
                    "--port",
                    str(args.own_redis),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                ],
                env,
                lambda: answers(args.own_redis, b"PING\r\n", b"+PONG"),
            )  # fmt: skip
        )
    run_as = ["-u", args.run_as] if os.geteuid() == 0 else []
    found.append(
        Service(
            "pgbouncer",
            [program("pgbouncer"), *run_as, str(ini)],
            env,
            lambda: answers(args.pgbouncer_port),
        )
    )
    health_host = shape.settings["HEALTH_CHECK_HOST"]
    for n, port in enumerate(shape.web_ports(), 1):
        found.append(
            Service(
                f"web{n}",
                [
                    python,
                    "-m",
                    "gunicorn",
                    "-c",
                    "config/gunicorn.py",
                    "--no-control-socket",
                    "config.wsgi:application",
                ],
                {**env, "GUNICORN_BIND": f"{args.web_host}:{port}"},
                lambda port=port: node_ready(args.web_host, port, health_host),
            )  # fmt: skip
        )
    for kind, queue, concurrency in (
        ("recompute", env["RECOMPUTE_QUEUE"], args.recompute_concurrency),
        ("jobs", env["JOBS_QUEUE"], args.jobs_concurrency),
    ):
        found.append(
            Service(
                f"{kind}-worker",
                [
                    python,
                    "-m",
                    "celery",
                    "-A",
                    "config",
                    "worker",
                    "-Q",
                    queue,
                    "--concurrency",
                    str(concurrency),
                    "--loglevel",
                    args.log_level,
                    "-n",
                    f"{kind}-{args.pgbouncer_port}@%h",
                ],
                env,
                lambda: True,
            )  # fmt: skip
        )
    found.append(
        Service(
            "beat",
            [
                python,
                "-m",
                "celery",
                "-A",
                "config",
                "beat",
                "--loglevel",
                args.log_level,
                "--schedule",
                str(shape.state / "run" / "beat-schedule"),
            ],
            env,
            lambda: True,
        )  # fmt: skip
    )
    if args.proxy_bind:
        proxy_port = int(args.proxy_bind.rsplit(":", 1)[1])
        found.append(
            Service(
                "proxy",
                [program("haproxy"), "-db", "-f", str(haproxy)],
                {
                    **env,
                    "CONCORD_PLAIN_BIND": args.proxy_bind,
                    "CONCORD_STATS_SOCKET": str(shape.state / "run" / "haproxy.sock"),
                },
                lambda: answers(proxy_port),
            )  # fmt: skip
        )
    return found


class Supervisor:
    """Starts the services, starts again any that exits, stops them all on SIGTERM."""

    def __init__(self, shape: Shape, running: list[Service]):
        self.shape, self.services = shape, running
        self.logs = shape.state / "logs"
        self.status = shape.state / "run" / "services.json"
        self.stopping = False
        self.prepared = self.ready = False

    def write_status(self) -> None:
        status = {
            "prepared": self.prepared,  # migrated: the schema may be used
            "ready": self.ready,
            "supervisor": os.getpid(),
            "services": {
                s.name: {"pid": s.process.pid if s.process else None, "restarts": s.restarts}
                for s in self.services
            },
        }
        part = self.status.with_suffix(".part")
        part.write_text(json.dumps(status, indent=2))
        os.replace(part, self.status)

    def wait_ready(self, service: Service, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not service.ready():
            if service.process.poll() is not None:
                raise ShapeError(
                    f"{service.name} exited with {service.process.returncode}: see "
                    f"{self.logs / (service.name + '.log')}"
                )
            if time.monotonic() > deadline or self.stopping:
                raise ShapeError(f"{service.name} did not answer within {timeout:.0f} s")
            time.sleep(0.2)

    def start(self, prepare) -> None:
        """The pooler (and Redis) first, then ``prepare()`` (migrate, collect static), then
        the rest side by side: most of their start-up is imports."""
        first = [s for s in self.services if s.name in ("redis", "pgbouncer")]
        rest = [s for s in self.services if s not in first]
        for service in first:
            service.launch(self.logs)
            self.write_status()
            self.wait_ready(service, timeout=60)
        prepare()
        self.prepared = True
        for service in rest:
            service.launch(self.logs)
        self.write_status()
        for service in rest:
            self.wait_ready(service, timeout=self.shape.args.start_timeout)
        self.ready = True
        self.write_status()

    def keep_running(self) -> None:
        delay = self.shape.args.restart_seconds
        while not self.stopping:
            now = time.monotonic()
            for service in self.services:
                if service.process.poll() is None:
                    continue
                if service.due is None:
                    steady = now - service.started >= STEADY_SECONDS
                    service.failures = 0 if steady else service.failures + 1
                    wait = min(MAX_RESTART_SECONDS, delay * 2 ** max(0, service.failures - 1))
                    service.due = now + wait
                    say(f"{service.name} exited ({service.process.returncode}); "
                        f"starting it again in {wait:.0f} s")  # fmt: skip
                elif now >= service.due:
                    service.launch(self.logs)
                    service.restarts += 1
                    self.write_status()
            time.sleep(0.1)

    def stop(self) -> None:
        self.stopping = True
        for service in reversed(self.services):
            service.stop()


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- Commands ------------------------------------------------------------------------------


def configure(shape: Shape) -> tuple[Path, Path]:
    for directory in (shape.state, shape.state / "logs", shape.state / "run"):
        directory.mkdir(parents=True, exist_ok=True)
    # PgBouncer, when dropped to --run-as, reads its files through this directory.
    shape.state.chmod(0o755)
    ini, _ = pgbouncer_files(shape)
    haproxy = haproxy_file(shape)
    return ini, haproxy


def manage_start(shape: Shape, *arguments: str) -> subprocess.Popen:
    say("manage.py " + " ".join(arguments))
    return subprocess.Popen(  # noqa: S603 - the project's own manage.py
        [sys.executable, "manage.py", *arguments], cwd=ROOT, env=shape.app_environment()
    )


def manage(shape: Shape, *arguments: str, env: dict[str, str]) -> None:
    say("manage.py " + " ".join(arguments))
    done = subprocess.run(  # noqa: S603 - the project's own manage.py
        [sys.executable, "manage.py", *arguments], cwd=ROOT, env=env, check=False
    )
    if done.returncode:
        raise ShapeError(f"manage.py {arguments[0]} failed ({done.returncode})")


def command_config(shape: Shape) -> int:
    ini, haproxy = configure(shape)
    print(f"PgBouncer: {ini}\nHAProxy:   {haproxy}  (install it as /etc/haproxy/haproxy.cfg)")
    return 0


def command_up(shape: Shape) -> int:
    ini, haproxy = configure(shape)
    for directory in ("CASE_UPLOAD_ROOT", "JOB_FILES_ROOT"):
        Path(shape.app_environment()[directory]).mkdir(parents=True, exist_ok=True)
    supervisor = Supervisor(shape, services(shape, ini, haproxy))

    def stop(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)

    def prepare() -> None:
        # Side by side: collecting the static files needs no database.
        static = manage_start(shape, "collectstatic", "--no-input", "--verbosity", "0")
        manage(shape, "migrate", "--no-input", env=shape.direct_environment())
        if static.wait():
            raise ShapeError(f"manage.py collectstatic failed ({static.returncode})")

    try:
        supervisor.start(prepare)
        say(f"Concord is up: {len(supervisor.services)} processes, logs in {supervisor.logs}")
        supervisor.keep_running()
    except KeyboardInterrupt:
        say("stopping")
    except ShapeError as error:
        say(str(error))
        return 1
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        supervisor.stop()
    return 0


def arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("config", "up", "manage"))
    parser.add_argument("--env-file", type=Path, required=True)
    parser.add_argument("--state", type=Path, required=True, help="its files, logs, run info")
    parser.add_argument("--nodes", type=int, default=2, help="web nodes (gunicorn masters)")
    parser.add_argument("--web-workers", type=int, default=3, help="gunicorn workers per node")
    parser.add_argument("--web-host", default="127.0.0.1", help="the nodes' address")
    parser.add_argument("--web-port", type=int, default=8001, help="the first node's port")
    parser.add_argument("--pgbouncer-port", type=int, default=6432)
    parser.add_argument("--recompute-concurrency", type=int, default=2)
    parser.add_argument("--jobs-concurrency", type=int, default=2)
    parser.add_argument("--proxy-bind", help="run HAProxy here, plain HTTP (ADDRESS:PORT)")
    parser.add_argument("--own-redis", type=int, metavar="PORT", help="run a Redis of its own")
    parser.add_argument("--run-as", default="postgres", help="PgBouncer's user, when root")
    parser.add_argument("--restart-seconds", type=float, default=1.0)
    parser.add_argument("--start-timeout", type=float, default=180.0)
    parser.add_argument("--log-level", default="INFO", help="the workers' and beat's")
    # manage: the manage.py command and its arguments follow ``--``.
    args, rest = parser.parse_known_args(argv)
    args.manage_args = rest[1:] if rest[:1] == ["--"] else rest
    if args.command != "manage" and args.manage_args:
        parser.error(f"unrecognized arguments: {' '.join(args.manage_args)}")
    if args.command == "manage" and not args.manage_args:
        parser.error("manage: name a manage.py command after -- (createsuperuser, ...)")
    if not 1 <= args.nodes <= 20 or not 1 <= args.web_workers <= 64:
        parser.error("1-20 nodes of 1-64 workers")
    if args.proxy_bind and not re.fullmatch(r"[\w.\[\]:-]*:\d+", args.proxy_bind):
        parser.error("--proxy-bind is ADDRESS:PORT")
    args.state = args.state.resolve()
    return args


def main(argv=None) -> int:
    args = arguments(argv)
    try:
        settings = env_file_read(args.env_file)
        if not args.own_redis and not settings.get("REDIS_URL"):
            raise ShapeError(f"{args.env_file} does not set REDIS_URL (or pass --own-redis)")
        if os.geteuid() == 0:
            try:
                pwd.getpwnam(args.run_as)
            except KeyError:
                raise ShapeError(f"--run-as {args.run_as}: no such user") from None
        shape = Shape(args=args, settings=settings)
        if args.command == "config":
            return command_config(shape)
        if args.command == "manage":
            # With the app's settings, straight to PostgreSQL: createsuperuser, a command of
            # docs/admin.md, anything an operator runs by hand.
            done = subprocess.run(  # noqa: S603 - the project's own manage.py
                [sys.executable, "manage.py", *args.manage_args],
                cwd=ROOT, env=shape.direct_environment(), check=False,
            )  # fmt: skip
            return done.returncode
        return command_up(shape)
    except ShapeError as error:
        say(str(error))
        return 2


if __name__ == "__main__":
    sys.exit(main())
