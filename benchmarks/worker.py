"""The recompute worker as docker-compose.yml starts it: its memory at rest and after
thousands of submissions, and the CPU of its first recompute from scratch against later ones.

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/concord_bench_worker \\
      .venv/bin/python benchmarks/worker.py [--ratings 20000] [--repeat 5] \\
      [--submissions 3000 30000] [--max-memory-per-child KB] [--redis-url URL]

The worker is the compose file's command line, `celery -A config worker -Q recompute
--loglevel=INFO --concurrency=2`, with the production settings and the compose file's
queues (RECOMPUTE_QUEUE=recompute, JOBS_QUEUE=jobs) on the Redis database named (use one of
your own: the queue's name is the compose file's). This script is the web: it builds
`recompute.py`'s study of ``--ratings`` ratings (reused if the database has it) and six
small studies (30 cases, 3 raters), then

1. reads the worker's memory at rest (each process's RSS, PSS and USS, from
   /proc/PID/smaps_rollup, and their sums) once it says it is ready;
2. announces a change of the large study's analysis inputs, as unblinding does (the tallies
   rebuilt: a run from scratch, its intervals included), ``--repeat`` times, one after the
   other, and prints each run's CPU seconds (the pool processes' user and system time, from
   /proc) and wall time: the first run beside the median;
3. submits ratings through the rating service, one at a time and each committed (as the
   rating screen does), to the small studies in turn, with no debounce (so the worker runs
   as many recomputes as it can keep up with), and reads the memory again after each
   number of ``--submissions`` (cumulative), once every study's result is fresh; with the
   worker's CPU per submission and the recompute runs so far.

The worker's pool processes are listed with their pids: one that was replaced
(``--max-memory-per-child``) shows as a new pid.
"""

import argparse
import os
import secrets
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if sys.path[0] == str(ROOT / "benchmarks"):
    sys.path[0] = str(ROOT)  # the repository, not this folder, first on the path
sys.path.insert(1, str(ROOT / "benchmarks"))

from processes import cpu_seconds, process_tree  # noqa: E402

from benchmarks.report import add_repeat, reported, spread  # noqa: E402

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/concord_bench_worker"
COMMAND = ["celery", "-A", "config", "worker", "-Q", "recompute", "--loglevel=INFO",
           "--concurrency=2"]  # fmt: skip
SMALL_STUDIES = 6


def _memory(pid: int) -> dict[str, float]:
    values = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        key, value = line.split(":", 1)
        values[key] = int(value.split()[0]) / 1024
    return {
        "pid": pid,
        "rss": values["Rss"],
        "pss": values["Pss"],
        "uss": values["Private_Clean"] + values["Private_Dirty"],
    }


def _show(what: str, leader: int) -> None:
    processes = [_memory(pid) for pid in process_tree(leader)]
    total = {key: sum(p[key] for p in processes) for key in ("rss", "pss", "uss")}
    print(
        f"  {what}: RSS {total['rss']:.0f} MB, PSS {total['pss']:.0f} MB, "
        f"USS {total['uss']:.0f} MB; "
        + ", ".join(f"pid {p['pid']} RSS {p['rss']:.0f}" for p in processes),
        flush=True,
    )


def _pool(leader: int) -> list[int]:
    return [pid for pid in process_tree(leader) if pid != leader]


def _start_worker(args, log: Path) -> subprocess.Popen:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DATABASE_URL": args.database_url,
        "REDIS_URL": args.redis_url,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "localhost",
        "RECOMPUTE_QUEUE": "recompute",
        "JOBS_QUEUE": "jobs",
        "JOBS_RUN": "celery",
        "CELERY_QUEUE": args.queue,
    }
    for name in ("AGREEMENT_FULL_SECONDS", "AGREEMENT_DEBOUNCE_SECONDS"):
        env.pop(name, None)  # the production defaults
    command = [sys.executable, "-m", *COMMAND]
    if args.max_memory_per_child:
        command.append(f"--max-memory-per-child={args.max_memory_per_child}")
    print(f"worker: {' '.join(COMMAND[:])}" + (
        f" --max-memory-per-child={args.max_memory_per_child}" if args.max_memory_per_child
        else ""
    ) + " (config.settings.production)", flush=True)  # fmt: skip
    process = subprocess.Popen(  # our own command
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=log.open("wb"),
        start_new_session=True,
    )  # fmt: skip
    began = time.perf_counter()
    while " ready." not in log.read_text(errors="replace"):
        if process.poll() is not None or time.perf_counter() - began > 300:
            raise RuntimeError(f"the worker did not become ready: see {log}")
        time.sleep(0.1)
    # "ready" is the main process's; each pool process then warms the statistics (a second
    # or more of CPU): at rest means once the pool's CPU stands still for two seconds.
    last = -1.0
    while (now := cpu_seconds(process_tree(process.pid))) - last > 0.05:
        last = now
        time.sleep(2)
    print(
        f"  ready and settled after {time.perf_counter() - began:.1f} s wall, "
        f"{cpu_seconds(process_tree(process.pid)):.2f} s CPU (all its processes)",
        flush=True,
    )
    return process


def _wait_fresh(study_ids: list[int], *, intervals: bool = False, timeout: float = 1800) -> None:
    """Until every study's result is current; every 10 s, what beat's sweep does (a claim
    left by an earlier, interrupted run of this script holds back a request)."""
    from agreement.models import StudyAgreement
    from agreement.services.recompute import agreement_enqueue_if_stale

    began = swept = time.perf_counter()
    while time.perf_counter() - began < timeout:
        if time.perf_counter() - swept > 10:
            swept = time.perf_counter()
            for study_id in study_ids:
                agreement_enqueue_if_stale(study_id=study_id)
        rows = StudyAgreement.objects.filter(study_id__in=study_ids).values(
            "requested", "computed", "result"
        )
        fresh = [r for r in rows if r["computed"] >= r["requested"] > 0]
        if len(fresh) == len(study_ids) and not (
            intervals and any(r["result"].get("intervals_pending") for r in rows)
        ):
            return
        time.sleep(0.02)
    raise TimeoutError("the worker did not catch up")


def _first_analysis(study, leader: int, repeat: int) -> None:
    """A change of the study's analysis inputs, as unblinding announces it: the tallies
    rebuilt, a run from scratch with its intervals; ``repeat`` times, one after the other."""
    from django.db import transaction

    from studies.signals import analysis_inputs_announce

    cpu, wall = [], []
    for _ in range(repeat):
        pool = _pool(leader)
        before, began = cpu_seconds(pool), time.perf_counter()
        with transaction.atomic():
            analysis_inputs_announce(study_id=study.pk, reason="benchmark")
        _wait_fresh([study.pk], intervals=True)
        wall.append(time.perf_counter() - began)
        cpu.append(cpu_seconds(_pool(leader)) - before)
    print(
        f"  recompute from scratch with intervals: CPU first {cpu[0]:.2f} s, then "
        + ", ".join(f"{c:.2f}" for c in cpu[1:])
        + f"; median of the later runs {statistics.median(cpu[1:] or cpu):.2f} s; wall "
        f"first {wall[0]:.2f} s, {spread(wall[1:] or wall, digits=2)}",
        flush=True,
    )


def _small_studies() -> list:
    from studies.models import Study
    from tests.factories import UserFactory, make_study

    studies = list(Study.objects.filter(slug__startswith="bench-worker-").order_by("pk"))
    for n in range(len(studies), SMALL_STUDIES):
        users = [UserFactory() for _ in range(3)]
        studies.append(make_study(slug=f"bench-worker-{n}", cases=30, raters=users, consented=True))
    return studies


def _runs(study_ids: list[int]) -> int:
    from django.db.models import Sum

    from agreement.models import StudyAgreement

    found = StudyAgreement.objects.filter(study_id__in=study_ids).aggregate(Sum("runs"))
    return found["runs__sum"] or 0


def _submissions(studies: list, leader: int, checkpoints: list[int]) -> None:
    from django.db import transaction

    from annotation.models import Assignment
    from annotation.services import rating_submit
    from tests.payloads import payload_for

    queues = [
        list(
            Assignment.objects.filter(test_case__study=study)
            .select_related("test_case__study", "rater")
            .order_by("pk")
        )
        for study in studies
    ]
    ids = [study.pk for study in studies]
    pool = _pool(leader)
    cpu_before = cpu_seconds(pool)
    runs_before = _runs(ids)
    done = 0
    for checkpoint in checkpoints:
        while done < checkpoint:
            queue = queues[done % len(queues)]
            assignment = queue[(done // len(queues)) % len(queue)]
            with transaction.atomic():
                rating_submit(assignment=assignment, payload=payload_for(done), any_version=True)
            done += 1
        _wait_fresh(ids)
        time.sleep(2)
        runs = _runs(ids) - runs_before
        pool = _pool(leader)
        cpu = cpu_seconds(pool) - cpu_before
        _show(f"after {done:,} submissions ({runs:,} recompute runs)", leader)
        print(
            f"    worker CPU since the first submission {cpu:.1f} s: "
            f"{1000 * cpu / done:.1f} ms per submission",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ratings", type=int, default=20_000, help="the large study's ratings")
    parser.add_argument("--submissions", type=int, nargs="+", default=[3_000, 30_000])
    parser.add_argument("--max-memory-per-child", type=int, help="KB, Celery's option")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL))
    add_repeat(parser)
    args = parser.parse_args()
    args.queue = f"concord-worker-{secrets.token_hex(4)}"
    os.environ.update(
        {
            "BENCH_DATABASE_URL": args.database_url,
            "REDIS_URL": args.redis_url,
            "RECOMPUTE_QUEUE": "recompute",
            "JOBS_QUEUE": "jobs",
            "CELERY_QUEUE": args.queue,
        }
    )
    from recompute import build_study, setup_django

    setup_django()  # the test settings, jobs inline while the studies are built
    from django.conf import settings

    large = build_study(args.ratings)
    small = _small_studies()
    # From here on the recomputes are the worker's, queued with no debounce.
    settings.JOBS_RUN = "celery"
    settings.AGREEMENT_DEBOUNCE_SECONDS = 0
    log = Path("/tmp") / f"concord-{args.queue}.log"
    with reported("The recompute worker as docker-compose.yml starts it", runs=args.repeat):
        process = _start_worker(args, log)
        try:
            time.sleep(2)
            _show("at rest", process.pid)
            _first_analysis(large, process.pid, args.repeat)
            _show(f"after {args.repeat} recomputes from scratch", process.pid)
            _submissions(small, process.pid, sorted(args.submissions))
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=60)
            import redis

            redis.Redis.from_url(args.redis_url).delete("recompute", "jobs", args.queue)


if __name__ == "__main__":
    main()
