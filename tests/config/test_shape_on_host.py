"""deploy/hosts/shape.py, the scaled-out shape on one Debian host (docs/deployment.md): the
files it writes are ones PgBouncer and HAProxy accept; PgBouncer runs as an unprivileged
user, checks the app's password by SCRAM, and starts again after kill -9 (no pidfile). The
whole shape under faults, brought up by the same script: tests/chaos."""

import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from tests.processes import ROOT

pytestmark = pytest.mark.django_db

SHAPE = ROOT / "deploy" / "hosts" / "shape.py"


def program(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    if found is None:
        pytest.fail(f"{name} is not installed (.ci/run installs it)")
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def role():
    """A login role with a password, as docs/deployment.md has the operator make."""
    name, password = f"shape_{secrets.token_hex(4)}", secrets.token_hex(12)
    settings = connection.settings_dict
    admin = f"postgres://{settings.get('USER') or 'postgres'}@{settings['HOST'] or '127.0.0.1'}"
    admin += f":{settings['PORT'] or 5432}/postgres"
    with psycopg.connect(admin, autocommit=True) as db:
        db.execute(f"CREATE ROLE \"{name}\" LOGIN PASSWORD '{password}'")
    yield name, password, admin
    with psycopg.connect(admin, autocommit=True) as db:
        db.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", [name]
        )
        db.execute(f'DROP ROLE IF EXISTS "{name}"')


def shape_config(tmp_path, role, **options) -> subprocess.CompletedProcess:
    name, password, _ = role
    settings = connection.settings_dict
    host, port = settings["HOST"] or "127.0.0.1", settings["PORT"] or 5432
    env_file = tmp_path / "concord.env"
    env_file.write_text(
        "# as /etc/concord/concord.env\n"
        "SECRET_KEY=not-a-real-secret-but-long-enough-for-the-check-0123456789\n"
        "ALLOWED_HOSTS=concord.example.org\nHEALTH_CHECK_HOST=concord.example.org\n"
        f"POSTGRES_URL=postgres://{name}:{password}@{host}:{port}/{settings['NAME']}\n"
        "REDIS_URL=redis://127.0.0.1:6379/0\n"
    )
    arguments = [f"--{key.replace('_', '-')}={value}" for key, value in options.items()]
    return subprocess.run(  # the repository's own deploy script
        [sys.executable, str(SHAPE), "config", "--env-file", str(env_file),
         "--state", str(tmp_path / "state"), "--run-as", "nobody", *arguments],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_pgbouncer_runs_unprivileged_checks_scram_and_comes_back_after_kill_9(tmp_path, role):
    tmp_path.chmod(0o755)  # PgBouncer, dropped to nobody, reads its files through it
    port = free_port()
    done = shape_config(tmp_path, role, pgbouncer_port=port)
    assert done.returncode == 0, done.stderr
    state = tmp_path / "state"
    ini = (state / "pgbouncer.ini").read_text()
    assert not re.search(r"^\s*(pidfile|logfile)\s*=", ini, re.M)  # no pidfile trap
    assert re.search(rf"^listen_port = {port}$", ini, re.M)
    assert re.search(r"^pool_mode = transaction$", ini, re.M)
    users = state / "pgbouncer-users.txt"
    assert users.stat().st_mode & 0o777 == 0o600
    name, password, admin = role
    listed = users.read_text().split()[1].strip('"')
    assert listed.startswith("SCRAM-SHA-256$4096:")
    with psycopg.connect(admin) as db:  # PostgreSQL holds the same verifier
        stored = db.execute("SELECT rolpassword FROM pg_authid WHERE rolname = %s", [name])
        assert stored.fetchone()[0] == listed

    run_as = ["-u", "nobody"] if os.geteuid() == 0 else []
    command = [program("pgbouncer"), *run_as, str(state / "pgbouncer.ini")]
    database = connection.settings_dict["NAME"]
    through = f"postgres://{name}:{{}}@127.0.0.1:{port}/{database}?connect_timeout=5"

    def started() -> subprocess.Popen:
        process = subprocess.Popen(command, stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + 20
        while process.poll() is None and time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    return process
            except OSError:
                time.sleep(0.1)
        pytest.fail(f"PgBouncer did not start: {process.stderr.read().decode()[-2000:]}")

    process = started()
    try:
        status = (Path("/proc") / str(process.pid) / "status").read_text()
        assert re.search(r"^Uid:\s+(\d+)", status, re.M).group(1) != "0"  # never root
        with psycopg.connect(through.format(password)) as app:
            assert app.execute("SELECT current_user").fetchone()[0] == name
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(through.format("wrong-password"))
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        process = started()  # as shape.py or systemd would, at once
        with psycopg.connect(through.format(password)) as app:
            assert app.execute("SELECT 1").fetchone()[0] == 1
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def test_haproxy_accepts_its_hosts_config_with_a_line_per_node(tmp_path, role):
    done = shape_config(tmp_path, role, nodes=3, web_port=9101, web_host="10.0.0.5")
    assert done.returncode == 0, done.stderr
    cfg = (tmp_path / "state" / "haproxy.cfg").read_text()
    servers = re.findall(r"^    server (web\d) (\S+) check$", cfg, re.M)
    assert servers == [
        ("web1", "10.0.0.5:9101"),
        ("web2", "10.0.0.5:9102"),
        ("web3", "10.0.0.5:9103"),
    ]
    assert "setenv HEALTH_CHECK_HOST concord.example.org" in cfg
    assert "presetenv CONCORD_NODE_MAXCONN 3" in cfg
    checked = subprocess.run(  # HAProxy's own check of the file, TLS left out (no certificate)
        [program("haproxy"), "-c", "-f", str(tmp_path / "state" / "haproxy.cfg")],
        env={**os.environ, "CONCORD_PLAIN_BIND": "127.0.0.1:9"},
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_missing_setting_is_named_and_nothing_is_written(tmp_path, role):
    env_file = tmp_path / "concord.env"
    env_file.write_text("SECRET_KEY=x\nALLOWED_HOSTS=a\n")
    done = subprocess.run(  # the repository's own deploy script
        [sys.executable, str(SHAPE), "config", "--env-file", str(env_file),
         "--state", str(tmp_path / "state")],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "does not set HEALTH_CHECK_HOST, POSTGRES_URL" in done.stderr
    assert not (tmp_path / "state").exists()
