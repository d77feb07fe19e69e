"""The test case import: seconds, cases per second and peak memory, up to 100,000 cases.

Run: .venv/bin/python benchmarks/case_import.py [--db] [--repeat 5] [10000 100000]

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

Each measurement is ``--repeat`` runs, each in a process of its own; it prints the median
and spread (min-max) of the runs' seconds, cases/s and peak RSS.
"""

import argparse
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

from benchmarks.report import add_repeat, reported, spread  # noqa: E402

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


def check_only(path: Path) -> dict:
    from studies.importing.cases import parse_cases

    started_rss = peak_mb()
    started = time.perf_counter()
    parsed = parse_cases(filename=path.name, data=path, sink=lambda case: None)
    seconds = time.perf_counter() - started
    assert parsed.ok, parsed.problem_lines()[:3]
    return figures(parsed.case_count, seconds, started_rss)


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


def whole_import(path: Path) -> dict:
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
    return {
        **figures(parsed.case_count, imported - started, started_rss),
        "check and keep": checked - started,
        "preview": previewed - checked,
        "import": imported - previewed,
        "import cases/s": parsed.case_count / (imported - previewed),
    }


def figures(count: int, seconds: float, started_rss: float) -> dict:
    return {
        "cases": count,
        "seconds": seconds,
        "cases/s": count / seconds,
        "peak RSS": peak_mb(),
        "RSS at start": started_rss,
    }


def show(what: str, path: Path, runs: list[dict]) -> None:
    """One measurement's runs: their medians and spreads."""
    size = path.stat().st_size / 2**20

    def of(key: str, **options) -> str:
        return spread([run[key] for run in runs], **options)

    print(
        f"{what:13} {path.suffix[1:]:5} {runs[0]['cases']:>8,} cases {size:7.1f} MB: "
        f"{of('seconds')}; {of('cases/s', unit='cases/s', digits=0)}; "
        f"peak RSS {of('peak RSS', unit='MB', digits=0)} (from {runs[0]['RSS at start']:.0f} MB)",
        flush=True,
    )
    if "import" in runs[0]:
        print(
            f"    upload check and keep {of('check and keep')}; preview {of('preview')}; "
            f"import {of('import')}, {of('import cases/s', unit='cases/s', digits=0)}",
            flush=True,
        )


def measured(what: str, path: Path, runs: int, with_db: bool) -> list[dict]:
    """``runs`` runs of one measurement, each in a process of its own (its peak RSS alone)."""
    found = []
    for _ in range(runs):
        if with_db:
            vacuum()
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            command = [sys.executable, __file__, "--one", what, str(path), out.name]
            subprocess.run(command, check=True)
            found.append(json.loads(Path(out.name).read_text()))
    return found


def main() -> None:
    if sys.argv[1:2] == ["--one"]:
        what, path, out = sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
        found = (check_only if what == "check" else whole_import)(path)
        out.write_text(json.dumps(found))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("counts", nargs="*", type=int, default=[10_000, 100_000])
    parser.add_argument("--db", action="store_true", help="the whole import, into PostgreSQL")
    add_repeat(parser)
    args = parser.parse_args()
    if args.db:
        prepare_database()
    title = "Test case import" + (": check, and the whole import" if args.db else ": check")
    with reported(title, runs=args.repeat), tempfile.TemporaryDirectory() as directory:
        for count in args.counts:
            for ext in ("csv", "jsonl"):
                path = Path(directory) / f"cases-{count}.{ext}"
                write_file(path, count)
                show("check", path, measured("check", path, args.repeat, with_db=False))
                if args.db:
                    runs = measured("import", path, args.repeat, with_db=True)
                    show("whole import", path, runs)
                path.unlink()
        if args.db:
            vacuum()  # the last run's rows


if __name__ == "__main__":
    main()
