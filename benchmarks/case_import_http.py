"""The case import end to end over HTTP: upload, preview, confirm, the job, until imported.

Run (PostgreSQL; the database is dropped and made afresh, so give it one of its own):

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/concord_bench_http \\
      .venv/bin/python benchmarks/case_import_http.py [--repeat 5] [--workers 2] [10000 100000]

Starts gunicorn (``config/gunicorn.py``, ``--workers`` workers) and a Celery worker (one
process) with ``benchmarks/http_settings.py`` (the production shape: one Redis cache, jobs
run by Celery; REDIS_URL names the Redis database) on a free port, signs in as a
coordinator and, per run, in a fresh draft study: POSTs the CSV file to the test cases
page (the upload's check), follows the redirect to the preview, POSTs the confirmation,
and polls the status until the import is done, then checks the study holds every case.
Prints per run the seconds of each stage and cases/s for the whole (upload to imported),
the CPU seconds of gunicorn's processes and of the Celery worker's over the run (from
/proc: the figure that holds on a busy machine; PostgreSQL's is not counted), the peak
RSS of the gunicorn workers and of the Celery worker's processes (each process's VmHWM,
read from /proc while the runs go), and at the end the median and the spread (min-max)
of the ``--repeat`` runs, with the commit and the load average before and after
(benchmarks/report.py).
"""

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from case_import import write_file  # noqa: E402
from processes import cpu_seconds, process_tree  # noqa: E402

from benchmarks.report import add_repeat, reported, spread  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env(url: str, upload_root: str) -> dict:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "benchmarks.http_settings",
        "DATABASE_URL": url,
        "CASE_UPLOAD_ROOT": upload_root,
        "GUNICORN_TIMEOUT": "300",
    }


def prepare(url: str, env: dict) -> None:
    """The database (made afresh, migrated) and the coordinator who signs in."""
    import psycopg

    name, admin = url.rsplit("/", 1)[1], url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')
    python = str(ROOT / ".venv" / "bin" / "python")
    subprocess.run([python, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    script = (
        "from django.contrib.auth import get_user_model\n"
        "User = get_user_model()\n"
        "user, _ = User.objects.get_or_create(username='bench-import')\n"
        "user.set_password('bench-import-password'); user.save()\n"
    )
    subprocess.run([python, "manage.py", "shell", "-c", script], cwd=ROOT, env=env, check=True)


def study_create(env: dict, slug: str) -> None:
    python = str(ROOT / ".venv" / "bin" / "python")
    script = (
        "from django.contrib.auth import get_user_model\n"
        "from studies import services\n"
        "lead = get_user_model().objects.get(username='bench-import')\n"
        f"services.study_create(slug='{slug}', name='Bench import', lead=lead)\n"
    )
    subprocess.run([python, "manage.py", "shell", "-c", script], cwd=ROOT, env=env, check=True)


def vacuum(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("VACUUM ANALYZE")


class RssWatch(threading.Thread):
    """The highest resident set of the server's worker processes, sampled every 50 ms."""

    def __init__(self, master: int):
        super().__init__(daemon=True)
        self.master, self.peak_kb, self.running = master, 0, True

    def run(self) -> None:
        while self.running:
            for pid in self.children():
                try:
                    status = Path(f"/proc/{pid}/status").read_text()
                except OSError:
                    continue
                match = re.search(r"VmHWM:\s+(\d+)", status)
                if match:
                    self.peak_kb = max(self.peak_kb, int(match.group(1)))
            time.sleep(0.05)

    def children(self) -> list[int]:
        try:
            text = Path(f"/proc/{self.master}/task/{self.master}/children").read_text()
        except OSError:
            return []
        return [int(pid) for pid in text.split()]


def sign_in(base: str) -> requests.Session:
    session = requests.Session()
    session.get(f"{base}/accounts/login/")
    response = session.post(
        f"{base}/accounts/login/",
        data={
            "username": "bench-import",
            "password": "bench-import-password",
            "csrfmiddlewaretoken": session.cookies["csrftoken"],
        },
        headers={"Referer": f"{base}/accounts/login/"},
    )
    response.raise_for_status()
    assert "sessionid" in session.cookies, "sign-in failed"
    return session


def one_run(base: str, session: requests.Session, slug: str, path: Path, count: int) -> dict:
    token = session.cookies["csrftoken"]
    page = f"{base}/s/{slug}/test-cases/"
    started = time.perf_counter()
    with path.open("rb") as stream:
        upload = session.post(
            page,
            data={"csrfmiddlewaretoken": token},
            files={"file": (path.name, stream, "text/csv")},
            headers={"Referer": page},
            allow_redirects=False,
        )
    assert upload.status_code == 302, (upload.status_code, upload.text[:2000])
    preview_url = base + upload.headers["Location"]
    uploaded = time.perf_counter()
    preview = session.get(preview_url)
    assert preview.status_code == 200, preview.status_code
    previewed = time.perf_counter()
    confirm = session.post(
        preview_url,
        data={"csrfmiddlewaretoken": token},
        headers={"Referer": preview_url},
        allow_redirects=False,
    )
    assert confirm.status_code in (200, 302), confirm.status_code
    confirmed = time.perf_counter()
    status_url = preview_url + "status.json"
    while True:
        state = session.get(status_url).json()
        if state["state"] == "done":
            break
        assert state["state"] == "running", state
        time.sleep(0.05)
    done = time.perf_counter()
    listing = session.get(preview_url)  # as the poller does: the test cases, with a message
    assert f"Imported {count} test cases" in listing.text, "no import message"
    return {
        "upload": uploaded - started,
        "preview": previewed - uploaded,
        "confirm": confirmed - previewed,
        "job": done - confirmed,
        "total": done - started,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("counts", nargs="*", type=int, default=[10_000])
    parser.add_argument("--workers", type=int, default=2)
    add_repeat(parser)
    # The option's earlier name.
    parser.add_argument(
        "--runs", dest="repeat", type=int, default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    url = os.environ.get(
        "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/concord_bench_http"
    )
    title = f"Case import over HTTP, upload to imported ({args.workers} gunicorn workers)"
    with reported(title, runs=args.repeat), tempfile.TemporaryDirectory() as directory:
        env = server_env(url, str(Path(directory) / "uploads"))
        prepare(url, env)
        vacuum(url)
        port = free_port()
        env["GUNICORN_BIND"] = f"127.0.0.1:{port}"
        env["GUNICORN_WORKERS"] = str(args.workers)
        server = subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "gunicorn"), "-c", "config/gunicorn.py"]
            + ["--access-logfile", "/dev/null", "config.wsgi:application"],
            cwd=ROOT,
            env=env,
        )
        worker = subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "celery"), "-A", "config", "worker"]
            + ["--concurrency", "1", "--loglevel", "WARNING"],
            cwd=ROOT,
            env=env,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            for _ in range(200):
                try:
                    requests.get(f"{base}/accounts/login/", timeout=5)
                    break
                except (requests.ConnectionError, requests.Timeout):
                    time.sleep(0.1)
            session = sign_in(base)
            for count in args.counts:
                path = Path(directory) / f"cases-{count}.csv"
                write_file(path, count)
                size = path.stat().st_size / 2**20
                results = []
                watch, job_watch = RssWatch(server.pid), RssWatch(worker.pid)
                watch.start()
                job_watch.start()
                for run in range(args.repeat):
                    slug = f"bench-import-{count}-{run}"
                    study_create(env, slug)
                    trees = [process_tree(server.pid), process_tree(worker.pid)]
                    cpu = [cpu_seconds(tree) for tree in trees]
                    result = one_run(base, session, slug, path, count)
                    result["web CPU"] = cpu_seconds(process_tree(server.pid)) - cpu[0]
                    result["worker CPU"] = cpu_seconds(process_tree(worker.pid)) - cpu[1]
                    results.append(result)
                    print(
                        f"{count:>7,} cases ({size:.0f} MB) run {run + 1}: "
                        + ", ".join(f"{k} {v:.2f} s" for k, v in result.items())
                        + f" -> {count / result['total']:,.0f} cases/s",
                        flush=True,
                    )
                    vacuum(url)  # each run's study stays: the next imports beside it
                watch.running = job_watch.running = False
                rates = [count / r["total"] for r in results]
                print(
                    f"{count:>7,} cases: {spread(rates, unit='cases/s', digits=0)}, "
                    f"first run {rates[0]:,.0f} cases/s; "
                    + "; ".join(
                        f"{k} {spread([r[k] for r in results])}"
                        for k in ("upload", "preview", "confirm", "job", "total")
                        + ("web CPU", "worker CPU")
                    )
                    + f"; peak RSS over the runs: web worker {watch.peak_kb / 1024:.0f} MB, "
                    f"job worker {job_watch.peak_kb / 1024:.0f} MB",
                    flush=True,
                )
                path.unlink()
        finally:
            for process in (server, worker):
                process.send_signal(signal.SIGTERM)
            for process in (server, worker):
                process.wait(timeout=60)


if __name__ == "__main__":
    main()
