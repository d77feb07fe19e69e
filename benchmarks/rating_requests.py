"""CPU time and queries of a rater's three requests, one at a time, in the production settings.

    BENCH_DATABASE_URL=postgres://postgres:postgres@127.0.0.1:5432/concord_bench_requests \\
      .venv/bin/python benchmarks/rating_requests.py [--cases 20] [--repeat 15]

The database named is dropped and created again. The script builds a study through the
services (tests/factories.py: reference rubric, two responses per case, three raters, all
consented), then one rater, through Django's test client with the production settings
(PostgreSQL, Redis cache, WhiteNoise, secure cookies), opens the rating page, autosaves and
submits, case after case. It prints per request the median and spread of the process's CPU
time (the first round, which fills per-process caches, left out) and its queries, and
``--profile page|autosave|submit`` prints cProfile's view of the last such request. No
server, no concurrency: what one request costs, not how requests queue (see load.py).
"""

import argparse
import contextlib
import cProfile
import io
import json
import os
import pstats
import re
import secrets
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.report import reported, spread  # noqa: E402

VERSION = re.compile(r'name="version" id="version" value="(\d+)"')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=15, help="cases rated (at most --cases)")
    parser.add_argument("--profile", choices=["page", "autosave", "submit"])
    parser.add_argument(
        "--sql", choices=["page", "autosave", "submit"], help="print the last such request's SQL"
    )
    parser.add_argument(
        "--database-url",
        default=os.environ.get(
            "BENCH_DATABASE_URL",
            "postgres://postgres:postgres@127.0.0.1:5432/concord_bench_requests",
        ),
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/13")
    args = parser.parse_args()
    queue = f"concord-requests-{secrets.token_hex(4)}"
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "DATABASE_URL": args.database_url,
            "REDIS_URL": args.redis_url,
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "testserver",
            "SECURE_SSL_REDIRECT": "false",
            "CELERY_QUEUE": queue,
            "LOG_LEVEL": "WARNING",
        }
    )
    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    import psycopg

    name = args.database_url.split("?")[0].rsplit("/", 1)[1]
    admin = args.database_url.split("?")[0].rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        with reported("A rater's three requests, one at a time", runs=args.repeat - 1):
            run(args)
    finally:
        import redis
        from django.db import connections

        from agreement import coalescing

        connections.close_all()
        # No worker takes this queue: the submits' recompute claim (study 1, the only one of
        # the fresh database) would otherwise hold back, for a minute, load.py's study of the
        # same id on this Redis db.
        claim = coalescing._pending_key(1)
        redis.Redis.from_url(args.redis_url).delete(queue, claim)
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _origin_recorder(origins: list[str]):
    """A database execute wrapper that notes, for each query, the innermost frames of the
    project's own code that led to it (``--sql``)."""
    import traceback

    def wrapper(execute, sql, params, many, context):
        frames = [
            f"{Path(f.filename).relative_to(ROOT)}:{f.lineno} {f.name}"
            for f in traceback.extract_stack()
            if f.filename.startswith(str(ROOT))
            and "/.venv/" not in f.filename
            and "benchmarks/" not in f.filename
        ]
        origins.append(" < ".join(reversed(frames[-3:])) or "(framework)")
        return execute(sql, params, many, context)

    return wrapper


def run(args) -> None:
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from tests.factories import UserFactory, make_study
    from tests.payloads import payload_for

    call_command("migrate", verbosity=0)
    call_command("collectstatic", "--no-input", verbosity=0)
    raters = [UserFactory(username=f"rater-{n}") for n in range(3)]
    make_study(slug="requests", cases=args.cases, raters=raters, consented=True)
    client = Client()
    client.force_login(raters[0])
    location = client.get("/s/requests/next/", secure=True)["Location"]
    cpu = {"page": [], "autosave": [], "submit": []}
    queries = {}

    def measured(name, method, *request_args, **request_kwargs):
        profiler = cProfile.Profile(time.process_time) if args.profile == name else None
        origins: list[str] = []
        tracing = contextlib.nullcontext()
        if args.sql == name:
            tracing = connection.execute_wrapper(_origin_recorder(origins))
        with CaptureQueriesContext(connection) as captured, tracing:
            start = time.process_time()
            if profiler:
                profiler.enable()
            response = method(*request_args, secure=True, **request_kwargs)
            if profiler:
                profiler.disable()
                out = io.StringIO()
                pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(40)
                measured.profile = out.getvalue()
            cpu[name].append(time.process_time() - start)
        queries[name] = len(captured)
        if args.sql == name:
            sqls = [q["sql"] for q in captured.captured_queries]
            measured.sql = list(zip(sqls, origins, strict=True))
        return response

    for n in range(min(args.repeat, args.cases - 1)):
        page = measured("page", client.get, location)
        assert page.status_code == 200, page.status_code
        payload = payload_for(n)
        body = {"payload": payload, "version": int(VERSION.search(page.text).group(1))}
        saved = measured(
            "autosave",
            client.post,
            location + "draft/",
            json.dumps({**body, "active_seconds": 5}),
            content_type="application/json",
        )
        assert saved.status_code == 200, saved.content
        form = _submit_form(location, payload=payload, version=saved.json()["version"])
        sent = measured("submit", client.post, location, form)
        assert sent.status_code == 302, sent.status_code
        location = sent["Location"]
    _print(args, cpu=cpu, queries=queries, profile=getattr(measured, "profile", ""))
    for n, (sql, origin) in enumerate(getattr(measured, "sql", []), 1):
        print(f"{n:>3} {sql[:100]}\n      from {origin}")


def _submit_form(location: str, *, payload: dict, version: int) -> dict:
    """The submit's form as the page sends it: it claims the seconds since the autosave,
    credited to the rater's day (one more write) when that much time has passed."""
    from django.utils import timezone

    from annotation.models import Assignment

    Assignment.objects.filter(uuid=location.rstrip("/").rsplit("/", 1)[1]).update(
        last_saved_at=timezone.now() - timedelta(minutes=1)
    )
    return {"payload": json.dumps(payload), "version": version, "active_seconds": "5"}


def _print(args, *, cpu: dict, queries: dict, profile: str) -> None:
    print(f"One rater, {args.cases} cases, production settings")
    print(f"{'request':<10}{'CPU ms, median (min-max, runs)':>32}{'queries':>9}")
    for name, values in cpu.items():
        warm = spread(values[1:], unit="", scale=1000, digits=1)
        print(f"{name:<10}{warm:>32}{queries[name]:>9}")
    if args.profile:
        print(profile)


if __name__ == "__main__":
    main()
