"""Memory of Concord's processes at rest, and the warm start of `make run`.

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/concord_bench_memory \\
      .venv/bin/python benchmarks/memory.py --repeat 5
    .venv/bin/python benchmarks/memory.py --repeat 5 --no-preload   # GUNICORN_PRELOAD=false
    .venv/bin/python benchmarks/memory.py --repeat 5 --preload-statistics  # and numpy
    .venv/bin/python benchmarks/memory.py --repeat 5 --make-run-only  # the warm start alone
    .venv/bin/python benchmarks/memory.py --repeat 5 --python /tmp/runtime/bin/python

``--python`` runs the servers with another interpreter: a virtualenv with the runtime lock
only, as the image (Dockerfile) and `make run` install it. The development lock adds
packages that libraries import when they find them (Django REST framework imports
``requests``, about 16 MB in every process), so figures taken in `.venv` overstate
production's. Such a virtualenv::

    python3.11 -m venv /tmp/runtime
    /tmp/runtime/bin/pip install --no-deps -r requirements/runtime.txt

Each run starts, one after the other:
- the web: gunicorn with config/gunicorn.py (``--workers``, 4 by default; the app preloaded
  in the master unless ``--no-preload``) and the production settings; after /healthz
  answers, a warm start of 10 sign-in pages per worker; then the memory of every gunicorn
  process (the master and its workers); then again once every worker has computed a
  statistic for a coordinator (the sample-size calculator through the API, 16 times per
  worker), which loads numpy in each: "web after statistics";
- the worker: ``celery -A config worker --concurrency 1`` (as benchmarks/load.py starts it),
  at rest once it says it is ready (the main process and its pool process);
- `make run`'s server: ``manage.py runserver`` with the local settings on a migrated SQLite
  file, with its autoreloader as `make run` starts it. Warm start: from the command to the
  first sign-in page answered, the Python files already compiled and in the page cache; in
  wall seconds, and in CPU seconds of its processes (which the machine's load barely moves).

Memory per process from /proc/PID/smaps_rollup: RSS (every page it maps, shared ones
included, as ``ps`` and the peer harness count it), PSS (shared pages divided among the
processes that share them: the sum over processes is what they cost the machine together)
and USS (the pages only that process has). It prints each process's figures for the first
run, then the median and spread (min-max) of the sums over ``--repeat`` runs, with the commit
and the load average before and after (benchmarks/report.py). The database named is made
and migrated at the start and dropped at the end; Redis db from ``--redis-url`` (the Celery
queue has a name of its own).
"""

import argparse
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests
from processes import free_port, postgres

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.report import add_repeat, reported, spread  # noqa: E402

PG_URL = "postgres://postgres@127.0.0.1:5432/concord_bench_memory"
REDIS_URL = "redis://127.0.0.1:6379/13"


def group(leader: int) -> list[int]:
    """The live processes of ``leader``'s process group (each server leads its own)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == leader:
            found.append(int(entry.name))
    return sorted(found)


def cpu_seconds(pids: list[int]) -> float:
    """User and system CPU seconds of the processes ``pids`` so far."""
    total = 0.0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def memory(pid: int) -> dict[str, float]:
    """RSS, PSS and USS of one process, in MB."""
    values = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        key, value = line.split(":", 1)
        values[key] = int(value.split()[0]) / 1024
    command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    return {
        "rss": values["Rss"],
        "pss": values["Pss"],
        "uss": values["Private_Clean"] + values["Private_Dirty"],
        "command": command[:60],
    }


def start(command: list[str], env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen(  # our own commands
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
        stderr=log.open("ab"), start_new_session=True,
    )  # fmt: skip


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def wait_for(url: str, process: subprocess.Popen, timeout: float = 120) -> float:
    """Seconds until ``url`` answers 200 (polled every 20 ms)."""
    began = time.perf_counter()
    while time.perf_counter() - began < timeout:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[:3]} exited with {process.returncode}")
        try:
            if requests.get(url, timeout=5).status_code == 200:
                return time.perf_counter() - began
        except requests.RequestException:
            pass
        time.sleep(0.02)
    raise TimeoutError(f"{url} did not answer")


def measured(process: subprocess.Popen) -> list[dict]:
    return [memory(pid) for pid in group(process.pid)]


# A study and a lead's API token, made once per database (``measure_all``), for the step
# after the warm start: a statistic computed in every worker.
STUDY_SETUP = """
import django
django.setup()
from studies.services.tokens import api_token_create
from tests.factories import UserFactory, make_study
lead = UserFactory(username="memory-lead")
make_study(lead=lead, slug="memory", cases=5, raters=[UserFactory()])
print(api_token_create(user=lead, name="memory")[1])
"""


def statistics_everywhere(base: str, token: str, workers: int) -> None:
    """A coordinator's computed statistic (the sample-size calculator, which loads numpy)
    asked 16 times per worker, 8 at a time, so that every worker has served it."""
    headers = {"Authorization": f"Bearer {token}"}
    url = base + "/api/v1/studies/memory/sample-size/"

    def ask(_):
        answer = requests.post(url, json={"which": "win"}, headers=headers, timeout=60)
        answer.raise_for_status()

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(ask, range(16 * workers)))


def web(args, env: dict, log: Path, token: str) -> tuple[list[dict], list[dict]]:
    """The web's processes after a warm start on sign-in pages, then after every worker has
    computed a statistic: with numpy loaded on first use (tests/config/test_lean_imports.py),
    the first is the web as raters meet it, the second after coordinators' pages."""
    port = free_port()
    gunicorn = str(Path(args.python).parent / "gunicorn")
    process = start(
        [gunicorn, "-c", "config/gunicorn.py", "config.wsgi:application"],
        {
            **env,
            "GUNICORN_BIND": f"127.0.0.1:{port}",
            "GUNICORN_WORKERS": str(args.workers),
            "GUNICORN_PRELOAD": "false" if args.no_preload else "true",
            "GUNICORN_PRELOAD_STATISTICS": "true" if args.preload_statistics else "false",
        },
        log,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for(base + "/healthz", process)
        for _ in range(10 * args.workers):
            requests.get(base + "/accounts/login/", timeout=10).raise_for_status()
        time.sleep(1)
        warm = measured(process)
        statistics_everywhere(base, token, args.workers)
        time.sleep(1)
        return warm, measured(process)
    finally:
        stop(process)


def worker(args, env: dict, log: Path) -> list[dict]:
    worker_log = log.with_name("worker.log")
    worker_log.unlink(missing_ok=True)
    process = start(
        [args.python, "-m", "celery", "-A", "config", "worker", "--concurrency", "1",
         "-Q", f"concord-memory-{secrets.token_hex(4)}", "--without-gossip",
         "--without-mingle", "--without-heartbeat", "--loglevel", "INFO"],
        env, worker_log,
    )  # fmt: skip
    try:
        began = time.perf_counter()
        while " ready." not in worker_log.read_text(errors="replace"):
            if process.poll() is not None or time.perf_counter() - began > 120:
                raise RuntimeError("the worker did not become ready")
            time.sleep(0.1)
        time.sleep(1)
        return measured(process)
    finally:
        stop(process)


def make_run(args, env: dict, log: Path) -> tuple[float, float, list[dict]]:
    """Warm start (wall and CPU seconds: the CPU figure barely moves with the machine's load)
    and memory of `make run`'s server."""
    port = free_port()
    process = start([args.python, "manage.py", "runserver", f"127.0.0.1:{port}"], env, log)
    try:
        seconds = wait_for(f"http://127.0.0.1:{port}/accounts/login/", process)
        cpu = cpu_seconds(group(process.pid))
        time.sleep(1)
        return seconds, cpu, measured(process)
    finally:
        stop(process)


def show(name: str, processes: list[dict]) -> None:
    print(f"  {name}:")
    for p in processes:
        print(f"    RSS {p['rss']:6.1f}  PSS {p['pss']:6.1f}  USS {p['uss']:6.1f}  {p['command']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_repeat(parser)
    # The option's earlier name.
    parser.add_argument(
        "--runs", dest="repeat", type=int, default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers")
    parser.add_argument("--no-preload", action="store_true", help="GUNICORN_PRELOAD=false")
    parser.add_argument(
        "--preload-statistics", action="store_true", help="GUNICORN_PRELOAD_STATISTICS=true"
    )
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", PG_URL))
    parser.add_argument("--redis-url", default=REDIS_URL)
    parser.add_argument(
        "--python", default=sys.executable, help="the servers' interpreter (default: this one)"
    )
    parser.add_argument(
        "--make-run-only", action="store_true", help="only make run's warm start and memory"
    )
    args = parser.parse_args()
    with reported("Memory of the processes at rest, and make run's warm start", runs=args.repeat):
        measure_all(args)


def measure_all(args: argparse.Namespace) -> None:
    database = args.database_url.split("?")[0].rsplit("/", 1)[1]
    postgres(args.database_url, f'DROP DATABASE IF EXISTS "{database}"')
    postgres(args.database_url, f'CREATE DATABASE "{database}"')
    tmp = Path(tempfile.mkdtemp(prefix="concord-memory-"))
    log = tmp / "servers.log"
    # Without PYTHONDONTWRITEBYTECODE, so the servers load compiled bytecode as the image's
    # do (its Dockerfile compiles the code at build): with it, every server start compiles
    # the project again and keeps what the compiler leaves behind (about 1 MB more per
    # process).
    base = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        "REDIS_URL": args.redis_url,
        "CASE_UPLOAD_ROOT": str(tmp / "uploads"),
        "PYTHONPATH": str(ROOT),
    }
    production = {
        **base,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DATABASE_URL": args.database_url,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "false",
        "JOBS_RUN": "celery",
    }
    local = {
        **base,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "DATABASE_URL": f"sqlite:///{tmp / 'memory.sqlite3'}",
    }
    local.pop("REDIS_URL")
    try:
        for env in (production, local):
            for step in (["migrate", "--no-input"], ["collectstatic", "--no-input"]):
                subprocess.run(
                    [sys.executable, "manage.py", *step, "--verbosity", "0"],
                    cwd=ROOT, env=env, check=True,
                )  # fmt: skip
        token = subprocess.run(
            [sys.executable, "-c", STUDY_SETUP],
            cwd=ROOT, env=production, check=True, capture_output=True, text=True,
        ).stdout.split()[-1]  # fmt: skip
        figures: dict[str, list[float]] = {}
        for run in range(args.repeat):
            results = {}
            if not args.make_run_only:
                results["web"], results["web after statistics"] = web(args, production, log, token)
                results["worker"] = worker(args, production, log)
            seconds, cpu, results["make run"] = make_run(args, local, log)
            figures.setdefault("make run warm start", []).append(seconds)
            figures.setdefault("make run warm start, CPU", []).append(cpu)
            if run == 0:
                print("run 1, each process (MB):")
                for name, processes in results.items():
                    show(name, processes)
            for name, processes in results.items():
                for key in ("rss", "pss", "uss"):
                    total = sum(p[key] for p in processes)
                    figures.setdefault(f"{name} {key.upper()}", []).append(total)
        shape = f"{args.workers} workers, {'not ' if args.no_preload else ''}preloaded" + (
            ", numpy preloaded" if args.preload_statistics else ""
        )
        print(f"servers' interpreter: {args.python}")
        print(f"sums over each server's processes, {args.repeat} runs (web: gunicorn, {shape}):")
        for name, values in figures.items():
            if "start" in name:
                print(f"  {name}: {spread(values)}")
            else:
                print(f"  {name}: {spread(values, unit='MB', digits=0)}")
    finally:
        postgres(args.database_url, f'DROP DATABASE IF EXISTS "{database}"')


if __name__ == "__main__":
    main()
