"""The test case import: seconds, cases per second and peak memory, up to 100,000 cases.

Run: .venv/bin/python benchmarks/case_import.py [--db] [--cases 10000 100000]

Writes CSV and JSONL files of cases of about 2 KB (a prompt and two responses of about
1 KB) to a temporary directory, then measures each in a process of its own, so that the
peak resident memory (``ru_maxrss``) is that file's alone:

- **check**: ``studies.importing.parse_cases`` on the file's path (what the upload runs);
- with ``--db``, **whole import**: as the pages run it, the check of the upload (with its
  blinding check), keeping it (copied to the upload store) with its preview, the preview
  (read from the cache), and the import (which stores the upload's blinding check) with its
  writes, in a PostgreSQL database of its own (``concord_bench_cases``, or
  BENCH_DATABASE_URL), inside a transaction that is rolled back. The database is vacuumed
  before each import and at the end, so that the rolled-back rows of earlier runs neither
  pile up nor change the tables each import starts from.
"""

import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

SYSTEMS = ("baseline", "improved")
BODY = "The response weighs the options, cites the data and says what to do. " * 15


def case(number: int) -> dict:
    return {
        "id": f"TC-{number:06d}",
        "prompt": f"Question {number}: should the lab release the model? " * 2,
        "context": "",
        "stratum": ("policy", "science", "ethics")[number % 3],
        # Texts that do not name their system: the blinding check finds nothing to store.
        "responses": {system: f"{number}, {index}: {BODY}" for index, system in enumerate(SYSTEMS)},
    }


def write_file(path: Path, count: int) -> None:
    with path.open("w", encoding="utf-8", newline="") as out:
        if path.suffix == ".csv":
            writer = csv.writer(out)
            writer.writerow(
                ["id", "prompt", "context", "stratum"] + [f"response:{s}" for s in SYSTEMS]
            )
            for n in range(1, count + 1):
                c = case(n)
                writer.writerow(
                    [c["id"], c["prompt"], c["context"], c["stratum"], *c["responses"].values()]
                )
        else:
            for n in range(1, count + 1):
                out.write(json.dumps(case(n)) + "\n")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def check_only(path: Path) -> None:
    from studies.importing.cases import parse_cases

    started_rss = peak_mb()
    started = time.perf_counter()
    parsed = parse_cases(filename=path.name, data=path, sink=lambda case: None)
    seconds = time.perf_counter() - started
    assert parsed.ok, parsed.problem_lines()[:3]
    report("check", path, parsed.case_count, seconds, started_rss)


def database_url() -> str:
    url = os.environ.get(
        "BENCH_DATABASE_URL", "postgres://postgres:postgres@127.0.0.1:5432/concord_bench_cases"
    )
    os.environ["DATABASE_URL"] = url
    return url


def prepare_database() -> None:
    import psycopg

    url = database_url()
    name, admin = url.rsplit("/", 1)[1], url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        if not connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [name]
        ).fetchone():
            connection.execute(f'CREATE DATABASE "{name}"')
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def vacuum() -> None:
    """Clear the rows of earlier runs: each rolls its writes back, which leaves them as dead
    rows (about 1 GB at 100,000 cases) until a vacuum, and autovacuum may be off (it is, on
    the shared benchmark machine): the database grew by that much at every run, and each
    import started from tables and indexes of another size."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM")


def whole_import(path: Path) -> None:
    database_url()
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.files import File
    from django.db import transaction

    from studies import selectors, services

    class Rollback(Exception):
        pass

    started_rss = peak_mb()
    started = time.perf_counter()
    try:
        with transaction.atomic():
            lead = get_user_model().objects.create(username="bench-lead")
            study = services.study_create(slug="bench", name="Bench", lead=lead)
            checked_file, check = selectors.test_cases_check(
                study=study, filename=path.name, data=path
            )
            assert checked_file.ok
            with path.open("rb") as stream:
                upload = services.case_upload_create(
                    study=study, actor=lead, filename=path.name, data=File(stream)
                )
            services.case_upload_preview_keep(
                study=study, upload=upload, parsed=checked_file, check=check
            )
            stored = Path(upload.file.path)
            checked = time.perf_counter()
            selectors.case_upload_preview(study=study, upload=upload)
            previewed = time.perf_counter()
            parsed = services.test_cases_import(
                study=study,
                actor=lead,
                filename=path.name,
                data=stored,
                upload=upload,
                scanned=selectors.case_upload_kept_mentions(study=study, upload=upload),
            )
            imported = time.perf_counter()
            assert study.test_cases.count() == parsed.case_count
            upload.file.delete(save=False)
            raise Rollback
    except Rollback:
        pass
    report("whole import", path, parsed.case_count, imported - started, started_rss)
    print(
        f"    upload check and keep {checked - started:.2f} s, "
        f"preview {previewed - checked:.2f} s, "
        f"import {imported - previewed:.2f} s ({parsed.case_count / (imported - previewed):,.0f} "
        "cases/s)"
    )


def report(what: str, path: Path, count: int, seconds: float, started_rss: float) -> None:
    size = path.stat().st_size / 2**20
    print(
        f"{what:13} {path.suffix[1:]:5} {count:>8,} cases {size:7.1f} MB {seconds:7.2f} s "
        f"{count / seconds:>8,.0f} cases/s   peak RSS {peak_mb():6.0f} MB "
        f"(from {started_rss:.0f} MB)"
    )


def main() -> None:
    if sys.argv[1:2] == ["--one"]:
        what, path = sys.argv[2], Path(sys.argv[3])
        (check_only if what == "check" else whole_import)(path)
        return
    counts = [int(a) for a in sys.argv[1:] if a.isdigit()] or [10_000, 100_000]
    with_db = "--db" in sys.argv
    if with_db:
        prepare_database()
    print(f"load average: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as directory:
        for count in counts:
            for ext in ("csv", "jsonl"):
                path = Path(directory) / f"cases-{count}.{ext}"
                write_file(path, count)
                for what in ("check", "import") if with_db else ("check",):
                    if what == "import":
                        vacuum()
                    subprocess.run([sys.executable, __file__, "--one", what, str(path)], check=True)
                path.unlink()
    if with_db:
        vacuum()  # the last run's rows


if __name__ == "__main__":
    main()
