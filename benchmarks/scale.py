"""A study at scale: 10,000 cases, 100 raters, 3 per case; what the coordinator waits for.

Run: DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/concord_scale \
     .venv/bin/python benchmarks/scale.py  [--cases 10000] [--raters 100] [--repeat 15]

The database named in DATABASE_URL is dropped and created again: give it one of its own.
Builds the study through the real services (the case import, one file per import limit;
rater membership; Assign as its job runs it, in this process), then prints the import
time and peak memory, the assignment's time (and the plan's CPU time alone), and p50/p95
of the coordinator's pages through Django's test client, signed in as the study lead: the
case list, the results page, the overview, the raters page, the confirmation page before
opening, and opening itself (each run rolled back, so it can be repeated). For each page
also the web process's own CPU time (p50) and its number of queries: the machine is
shared, and those move less with its load than the wall time does. The build (import and
assign) is one run: it takes minutes at 10,000 cases; the pages are --repeat runs each.

The database is analysed and vacuumed after it is built, as autovacuum would do on a
production database (it is off on the machine these figures come from).
"""

import argparse
import io
import os
import random
import resource
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

sys.path[0] = str(Path(__file__).resolve().parents[1])

from benchmarks.report import RUNS, reported, spread  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

WORDS = [
    "the",
    "plan",
    "staged",
    "release",
    "risk",
    "model",
    "weights",
    "budget",
    "office",
    "hiring",
    "review",
    "evidence",
    "trade-off",
    "option",
    "value",
    "misuse",
    "monitoring",
    "access",
    "research",
    "team",
    "project",
    "benchmark",
    "replication",
    "interview",
    "reserve",
    "trigger",
    "months",
    "cost",
    "talent",
    "remote",
    "decision",
]
# One response in FLAGGED says which model wrote it: the blinding check has findings.
FLAGGED = 500
SELF_DESCRIPTION = "As an AI developed by OpenAI, I would add: "


def recreate_database(url: str) -> None:
    import psycopg

    parts = urlparse(url)
    name = parts.path.lstrip("/")
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        connection.execute(f'CREATE DATABASE "{name}"')


def text(rng: random.Random, chars: int) -> str:
    words = []
    length = 0
    while length < chars:
        word = rng.choice(WORDS)
        words.append(word)
        length += len(word) + 1
    return " ".join(words).capitalize() + "."


def case_files(cases: int, limit_cases: int, limit_bytes: int):
    """JSONL files of about 2 KB per case, each within the import's limits."""
    import json

    rng = random.Random(7)
    lines = []
    for number in range(1, cases + 1):
        responses = {"baseline": text(rng, 900), "improved": text(rng, 900)}
        if number % FLAGGED == 0:
            responses["improved"] = SELF_DESCRIPTION + responses["improved"]
        line = json.dumps(
            {
                "id": f"TC-{number:05d}",
                "prompt": text(rng, 200),
                "stratum": f"s{number % 5}",
                "responses": responses,
            }
        )
        lines.append(line.encode() + b"\n")
    chunk, size = [], 0
    for line in lines:
        if chunk and (len(chunk) >= limit_cases or size + len(line) > limit_bytes - 1024):
            yield b"".join(chunk)
            chunk, size = [], 0
        chunk.append(line)
        size += len(line)
    if chunk:
        yield b"".join(chunk)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build(cases: int, raters: int):
    from django.contrib.auth import get_user_model

    from annotation.assignment_jobs import assignment_job_start
    from annotation.services.assignment import plan_balanced
    from jobs.models import Job
    from studies import services
    from studies.importing import cases as importing
    from studies.importing.identity_check import find_identity_mentions
    from studies.models import Membership, Response

    User = get_user_model()
    lead = User.objects.create_user(username="lead", password="x")
    study = services.study_create(
        slug="scale", name="Scale", lead=lead, raters_per_item=3, actor=lead
    )
    files = list(case_files(cases, importing.MAX_CASES, importing.MAX_FILE_BYTES))
    rss_before = peak_rss_mb()
    start = time.perf_counter()
    for number, data in enumerate(files, 1):
        services.test_cases_import(
            study=study, actor=lead, filename=f"cases-{number}.jsonl", data=data
        )
    seconds = time.perf_counter() - start
    scan = time.perf_counter()
    find_identity_mentions(
        responses=Response.objects.filter(test_case__study=study)
        .values_list("test_case__case_id", "system__name", "text")
        .iterator(chunk_size=2000),
        systems=["baseline", "improved"],
    )
    scan = time.perf_counter() - scan
    print(
        f"import: {cases} cases in {len(files)} file(s), {sum(map(len, files)) / 1e6:.1f} MB: "
        f"{seconds:.1f} s ({cases / seconds:,.0f} cases/s); process peak RSS "
        f"{rss_before:.0f} -> {peak_rss_mb():.0f} MB; of which the blinding check's scan, "
        f"alone: about {scan:.1f} s"
    )
    users = User.objects.bulk_create(User(username=f"rater{n:03d}") for n in range(raters))
    for user in users:
        services.membership_add(study=study, user=user, role=Membership.Role.RATER)
    start, cpu = time.perf_counter(), time.process_time()
    job = assignment_job_start(study=study, actor=lead, inline=True)  # as the job runs it
    assert job.state == Job.State.DONE, job.error
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    plan_cpu = time.process_time()
    plan_balanced(
        raters=sorted(study.memberships.filter(role=Membership.Role.RATER).values_list(
            "pseudonym", flat=True
        )),
        cases=list(study.test_cases.order_by("position").values_list("case_id", flat=True)),
        k=study.raters_per_item,
        seed=study.blinding_seed,
    )  # fmt: skip
    plan_cpu = time.process_time() - plan_cpu
    assigned = sum(job.result["created"].values())
    print(
        f"assign: {assigned} assignments to {raters} raters in {seconds:.1f} s "
        f"(this process's CPU {cpu:.1f} s; the plan alone: {plan_cpu:.2f} s of CPU)"
    )
    return study, lead


def timings(function, repeat: int) -> tuple[float, float, float, int]:
    """Wall times (s), p95 wall ms, p50 CPU ms of this process, queries of one run."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    times, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        function()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    with CaptureQueriesContext(connection) as queries:
        function()
    times.sort()
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    return times, p95 * 1000, statistics.median(cpu) * 1000, len(queries)


def get(client, url: str):
    def run():
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)

    return run


def open_rolled_back(client, url: str):
    from django.db import transaction

    def run():
        with transaction.atomic():
            response = client.post(url, {"acknowledge": "yes"})
            assert response.status_code == 302, response.content[:2000]
            transaction.set_rollback(True)

    return run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--raters", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    with reported(
        f"A study at scale: {args.cases:,} cases, {args.raters} raters; the coordinator's pages",
        runs=args.repeat,
    ):
        print("The build (import, assign) is one run: minutes at 10,000 cases.")
        measure(args)


def measure(args) -> None:
    url = os.environ.get("DATABASE_URL")
    if not url or not url.startswith("postgres"):
        sys.exit("Set DATABASE_URL to a PostgreSQL database of the benchmark's own.")
    recreate_database(url)

    import django

    django.setup()
    import logging

    logging.disable(logging.INFO)  # the recompute's per-run lines
    from django.core.management import call_command
    from django.test import Client
    from django.urls import reverse

    call_command("migrate", verbosity=0, stdout=io.StringIO())
    study, lead = build(args.cases, args.raters)
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    client = Client()
    client.force_login(lead)
    slug = study.slug
    pages = [
        ("case list, page 1", reverse("studies:cases", args=[slug])),
        ("case list, page 100", reverse("studies:cases", args=[slug]) + "?page=100"),
        ("results page", reverse("annotation:results", args=[slug])),
        ("overview", reverse("annotation:overview", args=[slug])),
        ("raters page", reverse("annotation:raters", args=[slug])),
        ("open: confirmation page", reverse("studies:status", args=[slug, "open"])),
    ]
    print(f"{'page':<28} {'p50 ms (min-max, runs)':>28} {'p95 ms':>8} {'CPU ms':>8} {'queries':>8}")
    opening = open_rolled_back(client, reverse("studies:status", args=[slug, "open"]))
    runs = [(name, get(client, page), args.repeat) for name, page in pages]
    runs.append(("open: POST (rolled back)", opening, max(RUNS, args.repeat // 3)))
    for name, run, repeat in runs:
        if repeat == args.repeat:
            run()  # warm
        times, p95, cpu, queries = timings(run, repeat)
        p50 = spread(times, unit="", scale=1000, digits=0)
        print(f"{name:<28} {p50:>28} {p95:8.0f} {cpu:8.0f} {queries:8d}")


if __name__ == "__main__":
    main()
