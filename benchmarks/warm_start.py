"""The warm start of `make run`'s server: from the command to the first page answered.

    .venv/bin/python benchmarks/warm_start.py --repeat 5
    .venv/bin/python benchmarks/warm_start.py --repeat 5 --profile   # where the CPU goes

`make run` starts ``manage.py runserver`` with the local settings (SQLite, in-process tasks)
and its autoreloader, once ``prepare_demo`` has migrated the database. This starts the same
command on a SQLite file migrated in a temporary directory, waits until the sign-in page
answers 200 (polled every 20 ms), and stops it. One start first, not counted, compiles the
bytecode and fills the page cache, so each counted start is a second start (the servers
are started without ``PYTHONDONTWRITEBYTECODE``, which would make every start compile the
project again). Each start is measured in wall seconds and in CPU seconds of its processes,
the autoreloader's and the server's apart: CPU seconds barely move with the machine's load,
wall seconds do. Then the memory (RSS) of the two processes once the page has answered.

``--skip-checks``: runserver without its system checks (what they cost, for comparison;
`make run` runs them). ``--profile``: then the server's own work, step by step, in one
process (``django.setup()``, the system checks, which import the URL configuration, the
migration check, the first page): CPU seconds per step, and under cProfile the functions
with the most cumulative time.
"""

import argparse
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memory import cpu_seconds, group, memory, start, stop, wait_for
from processes import free_port
from report import add_repeat, reported, spread

ROOT = Path(__file__).resolve().parents[1]

# The server's own work, step by step, in one process (what runserver's server process does).
STEPS = """
import json, time
steps = {}
began = time.process_time()
import django
django.setup()
steps["django.setup()"] = time.process_time() - began
from django.core.management.commands.runserver import Command
from django.test import Client
from django.urls import get_resolver
if CHECKS:
    began = time.process_time()
    Command().check(display_num_errors=False)
    steps["system checks (the URL configuration's import included)"] = time.process_time() - began
began = time.process_time()
get_resolver().url_patterns
steps["URL configuration (if the checks did not import it)"] = time.process_time() - began
began = time.process_time()
Command().check_migrations()
steps["migration check"] = time.process_time() - began
began = time.process_time()
assert Client(HTTP_HOST="127.0.0.1").get("/accounts/login/").status_code == 200
steps["first page"] = time.process_time() - began
steps["the whole process (interpreter start included)"] = time.process_time()
"""


def warm_start(env: dict, log: Path, checks: bool) -> dict[str, float]:
    """One start of runserver until the sign-in page answers: wall seconds, CPU seconds of
    the autoreloader and of the server, and their RSS in MB."""
    port = free_port()
    command = [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}"]
    if not checks:
        command.append("--skip-checks")
    process = start(command, env, log)
    try:
        seconds = wait_for(f"http://127.0.0.1:{port}/accounts/login/", process)
        pids = group(process.pid)
        servers = [pid for pid in pids if pid != process.pid]
        return {
            "wall": seconds,
            "cpu": cpu_seconds(pids),
            "cpu reloader": cpu_seconds([process.pid]),
            "cpu server": cpu_seconds(servers),
            "rss reloader": memory(process.pid)["rss"],
            "rss server": sum(memory(pid)["rss"] for pid in servers),
        }
    finally:
        stop(process)


def profile(env: dict, folder: Path, checks: bool) -> None:
    """The server's steps in one process: CPU seconds per step, then the top functions."""
    script = folder / "steps.py"
    stats = folder / "steps.prof"
    script.write_text(f"CHECKS = {checks!r}\n{STEPS}\nprint(json.dumps(steps))\n")
    plain = subprocess.run(  # our own script, in our own interpreter
        [sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True, text=True,
        check=True,
    )  # fmt: skip
    print("the server's work in one process, CPU seconds per step (no profiler):")
    for step, seconds in json.loads(plain.stdout.strip().splitlines()[-1]).items():
        print(f"  {step}: {seconds:.3f} s")
    subprocess.run(  # the same steps under the profiler
        [sys.executable, "-m", "cProfile", "-o", str(stats), str(script)],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    print("\nunder cProfile (its own overhead included), the 30 most cumulative functions:")
    pstats.Stats(str(stats)).sort_stats("cumulative").print_stats(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_repeat(parser)
    parser.add_argument("--skip-checks", action="store_true", help="runserver --skip-checks")
    parser.add_argument("--profile", action="store_true", help="then profile the steps")
    args = parser.parse_args()
    checks = not args.skip_checks
    folder = Path(tempfile.mkdtemp(prefix="concord-warm-start-"))
    log = folder / "runserver.log"
    skipped = ("DJANGO_", "REDIS_", "DATABASE_", "JOBS_", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(skipped)}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.local",
        DATABASE_URL=f"sqlite:///{folder / 'warm-start.sqlite3'}",
        PYTHONPATH=str(ROOT),
    )
    subprocess.run(  # make run's prepare_demo migrates first
        [sys.executable, "manage.py", "migrate", "--no-input", "--verbosity", "0"],
        cwd=ROOT, env=env, check=True,
    )  # fmt: skip
    shape = "with the system checks" if checks else "--skip-checks"
    title = f"`make run` warm start (runserver {shape}, its autoreloader on, SQLite)"
    with reported(title, runs=args.repeat):
        warm_start(env, log, checks)  # compiles the bytecode, fills the page cache
        runs = []
        for _ in range(args.repeat):
            runs.append(warm_start(env, log, checks))
            time.sleep(0.5)  # the stopped server's port and files released
        print(f"warm start, wall: {spread([r['wall'] for r in runs])}")
        print(f"warm start, CPU of its processes: {spread([r['cpu'] for r in runs])}")
        print(f"  of which the autoreloader: {spread([r['cpu reloader'] for r in runs])}")
        print(f"  of which the server: {spread([r['cpu server'] for r in runs])}")
        for name in ("rss reloader", "rss server"):
            values = [r[name] for r in runs]
            print(f"{name.replace('rss', 'RSS,')}: {spread(values, unit='MB', digits=0)}")
        if args.profile:
            print()
            profile(env, folder, checks)


if __name__ == "__main__":
    main()
