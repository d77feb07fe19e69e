"""The test case import's reading and checking: seconds and peak memory per file.

Run: .venv/bin/python benchmarks/case_import.py
Times ``studies.importing.parse_cases`` (what the upload page and the import run before
anything is written) on CSV and JSONL files of 1,000 and 10,000 cases and on a file of 10 MB,
the upload limit. A file of more than MAX_CASES cases is refused once the limit is passed,
so the 10,000-case line is the cost of that refusal. Prints one line per file.

With ``--db`` it also times the whole import of the 10 MB files as the pages run it (the
check at upload, keeping the upload, the check for the preview, and the import with its
writes), in a PostgreSQL database of its own (``concord_bench_cases``, or
BENCH_DATABASE_URL), inside a transaction that is rolled back.
"""

import io
import json
import os
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

from studies.importing import MAX_CASES, MAX_FILE_BYTES, parse_cases  # noqa: E402

SYSTEMS = ("baseline", "improved")


def case(number: int, text_chars: int) -> dict:
    body = ("The response weighs the options, cites the data and says what to do. " * 64)[
        :text_chars
    ]
    return {
        "id": f"TC-{number:05d}",
        "prompt": f"Question {number}: should the lab release the model?",
        "context": "",
        "stratum": ("policy", "science", "ethics")[number % 3],
        "responses": {system: f"{system} {number}: {body}" for system in SYSTEMS},
    }


def csv_file(cases: list[dict]) -> bytes:
    import csv

    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(["id", "prompt", "context", "stratum", *[f"response:{s}" for s in SYSTEMS]])
    for c in cases:
        writer.writerow(
            [c["id"], c["prompt"], c["context"], c["stratum"], *c["responses"].values()]
        )
    return out.getvalue().encode()


def jsonl_file(cases: list[dict]) -> bytes:
    return "\n".join(json.dumps(c) for c in cases).encode()


def sized(make, limit: int) -> bytes:
    """As many cases of ~1 KB responses as fit in ``limit`` bytes (at most MAX_CASES)."""
    text_chars = 64
    while True:
        data = make([case(n, text_chars) for n in range(1, MAX_CASES + 1)])
        if len(data) > limit * 0.97:
            break
        text_chars = int(text_chars * limit / len(data))
    while len(data) > limit:
        text_chars -= 16
        data = make([case(n, text_chars) for n in range(1, MAX_CASES + 1)])
    return data


def files():
    for make, ext in ((csv_file, "csv"), (jsonl_file, "jsonl")):
        for count in (1_000, 10_000):
            yield (
                f"{ext}: {count:,} cases",
                f"cases.{ext}",
                make([case(n, 200) for n in range(1, count + 1)]),
            )
        yield f"{ext}: a 10 MB file", f"cases.{ext}", sized(make, MAX_FILE_BYTES)


def measure(filename: str, data: bytes) -> tuple[str, float, int]:
    started = time.perf_counter()
    parsed = parse_cases(filename=filename, data=data)
    seconds = time.perf_counter() - started
    outcome = f"{len(parsed.cases):,} cases" if parsed.ok else f"refused: {parsed.problems[0]}"
    del parsed
    tracemalloc.start()
    try:
        parse_cases(filename=filename, data=data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return outcome[:70], seconds, peak


def traced(run) -> tuple[float, int]:
    """Seconds of one run, and the peak memory of another under tracemalloc."""
    started = time.perf_counter()
    run()
    seconds = time.perf_counter() - started
    tracemalloc.start()
    try:
        run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return seconds, peak


def database_section() -> None:
    url = os.environ.get(
        "BENCH_DATABASE_URL", "postgres://postgres:postgres@127.0.0.1:5432/concord_bench_cases"
    )
    os.environ["DATABASE_URL"] = url
    import psycopg

    name, admin = url.rsplit("/", 1)[1], url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        if not connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [name]
        ).fetchone():
            connection.execute(f'CREATE DATABASE "{name}"')
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import transaction

    from studies import selectors, services

    User = get_user_model()  # noqa: N806

    call_command("migrate", verbosity=0)

    class Rollback(Exception):
        pass

    def whole_import(filename: str, data: bytes) -> None:
        try:
            with transaction.atomic():
                lead = User.objects.create(username="bench-lead")
                study = services.study_create(slug="bench", name="Bench", lead=lead)
                assert selectors.test_cases_preview(study=study, filename=filename, data=data).ok
                upload = services.case_upload_create(
                    study=study, actor=lead, filename=filename, data=data
                )
                stored = bytes(upload.content)
                selectors.test_cases_preview(study=study, filename=filename, data=stored)
                services.test_cases_import(
                    study=study, actor=lead, filename=filename, data=stored, upload=upload
                )
                raise Rollback
        except Rollback:
            pass

    print(f"\n{'whole import (database)':26} {'size':>8} {'seconds':>8} {'peak MB':>8}")
    for make, ext in ((csv_file, "csv"), (jsonl_file, "jsonl")):
        data = sized(make, MAX_FILE_BYTES)
        seconds, peak = traced(lambda: whole_import(f"cases.{ext}", data))  # noqa: B023
        print(f"{ext + ': a 10 MB file':26} {len(data) / 2**20:7.2f}M {seconds:8.2f} "
              f"{peak / 2**20:8.1f}")  # fmt: skip


def main():
    print(f"{'file':26} {'size':>8} {'seconds':>8} {'peak MB':>8}  outcome")
    for name, filename, data in files():
        outcome, seconds, peak = measure(filename, data)
        print(f"{name:26} {len(data) / 2**20:7.2f}M {seconds:8.2f} {peak / 2**20:8.1f}  {outcome}")
    if "--db" in sys.argv:
        database_section()


if __name__ == "__main__":
    main()
