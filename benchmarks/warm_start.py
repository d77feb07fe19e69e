"""The warm start of `make run`'s server: from the command to the first page answered.

    .venv/bin/python benchmarks/warm_start.py --repeat 5
    .venv/bin/python benchmarks/warm_start.py --repeat 5 --profile   # where the CPU goes

`make run` starts ``manage.py runserver`` with the local settings (SQLite, in-process tasks)
and its autoreloader, once ``prepare_demo`` has migrated the database and run the system
checks (so runserver skips them, as the Makefile says). This starts the same command on a
SQLite file migrated in a temporary directory, waits until the sign-in page answers 200
(polled every 20 ms), and stops it; one start first, not counted, compiles the bytecode and
fills the page cache, so each counted start is a second start. Each start is measured in
wall seconds and in CPU seconds of its processes (the autoreloader's parent and the server
it starts): the CPU figure barely moves with the machine's load, the wall figure does.

``--checks``: without ``--skip-checks`` (runserver runs the system checks itself, as a bare
``manage.py runserver`` does). ``--profile``: then one start of the server's own work in a
single process under cProfile (``django.setup()``, the checks unless skipped, the URL
configuration, the migration check and the first page), its CPU seconds per step and the
functions with the most cumulative time.
"""

import argparse
import json
import os
import pstats
import subprocess
import sys
import tempfile
from pathlib import Path

from memory import cpu_seconds, group, start, stop, wait_for
from processes import free_port
from report import add_repeat, reported, spread

ROOT = Path(__file__).resolve().parents[1]

# The server's own work, step by step, in one process (what runserver's child does).
STEPS = """
import json, time
steps = {}
began = time.process_time()
import django
django.setup()
steps["django.setup()"] = time.process_time() - began
from django.core.management import call_command
from django.core.management.commands.runserver import Command
from django.test import Client
from django.urls import get_resolver
if CHECKS:
    began = time.process_time()
    Command().check(display_num_errors=False)
    steps["system checks"] = time.process_time() - began
began = time.process_time()
get_resolver().url_patterns
steps["URL configuration"] = time.process_time() - began
began = time.process_time()
Command().check_migrations()
steps["migration check"] = time.process_time() - began
began = time.process_time()
assert Client(HTTP_HOST="127.0.0.1").get("/accounts/login/").status_code == 200
steps["first page"] = time.process_time() - began
"""


def warm_start(env: dict, log: Path, checks: bool) -> tuple[float, float]:
    """Wall and CPU seconds of one start of runserver, until the sign-in page answers."""
    port = free_port()
    command = [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}"]
    if not checks:
        command.append("--skip-checks")
    process = start(command, env, log)
    try:
        seconds = wait_for(f"http://127.0.0.1:{port}/accounts/login/", process)
        return seconds, cpu_seconds(group(process.pid))
    finally:
        stop(process)


def profile(env: dict, folder: Path, checks: bool) -> None:
    """One start's steps in one process under cProfile: CPU seconds per step, top functions."""
    script = folder / "steps.py"
    stats = folder / "steps.prof"
    script.write_text(f"CHECKS = {checks!r}\n{STEPS}\nprint(json.dumps(steps))\n", encoding="utf-8")
    subprocess.run(  # our own script, in our own interpreter
        [sys.executable, "-m", "cProfile", "-o", str(stats), str(script)],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    plain = subprocess.run(  # the same steps without the profiler's overhead
        [sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True, text=True,
        check=True,
    )  # fmt: skip
    print("one process, CPU seconds per step (without the profiler):")
    for step, seconds in json.loads(plain.stdout.strip().splitlines()[-1]).items():
        print(f"  {step}: {seconds:.3f} s")
    print("\nunder cProfile, the 25 functions with the most cumulative time:")
    pstats.Stats(str(stats)).sort_stats("cumulative").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_repeat(parser)
    parser.add_argument("--checks", action="store_true", help="runserver runs the checks")
    parser.add_argument("--profile", action="store_true", help="then profile one start")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="concord-warm-start-"))
    log = folder / "runserver.log"
    # A second start finds the project's bytecode compiled, as on a developer's machine (a
    # shell with PYTHONDONTWRITEBYTECODE would compile every module again at each start).
    skipped = ("DJANGO_", "REDIS_", "PYTHONDONTWRITEBYTECODE")
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
    shape = "runserver running the system checks" if args.checks else "runserver --skip-checks"
    title = f"`make run` warm start ({shape}, autoreloader on, SQLite)"
    with reported(title, runs=args.repeat):
        warm_start(env, log, args.checks)  # compiles the bytecode, fills the page cache
        walls, cpus = [], []
        for _ in range(args.repeat):
            wall, cpu = warm_start(env, log, args.checks)
            walls.append(wall)
            cpus.append(cpu)
        print(f"warm start, wall: {spread(walls)}")
        print(f"warm start, CPU of its processes: {spread(cpus)}")
        if args.profile:
            print()
            profile(env, folder, args.checks)


if __name__ == "__main__":
    main()
