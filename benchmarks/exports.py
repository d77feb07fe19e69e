"""The exports and the report bundle of a study at 6,000 / 20,000 / 100,000 ratings.

Needs PostgreSQL. Uses the studies of `recompute.py` (the same database, BENCH_DATABASE_URL,
default `concord_bench`; built there if missing, which takes a few minutes at 100,000):
    .venv/bin/python benchmarks/exports.py [--repeat 5] [--only NAME,...] [--jobs] \
        [6000 20000 100000]

It prints the commit and the load average first (benchmarks/report.py). For each size it
prints, per export (the worksheet as CSV and as Excel, the long table) and for the report
bundle (the zip the report page offers: report, results, the CSV exports, the data
dictionary): the median and spread (min-max) of the runs' wall and CPU seconds, the size
written, and the peak memory Python traced while writing it (one more, untimed run), all
written to a temporary file; then the load average after. A request still running after
gunicorn's timeout (60 s in `config/gunicorn.py`) is killed, so these are the figures to
keep well below it. The machine may be shared: read the figures beside the load averages.
With --jobs, also the same exports prepared as a job (`annotation.export_jobs`, run inline:
the job's rows, the file written under a temporary name, its SHA-256 read back, the
rename): `<export>-job`.
"""

import argparse
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not this folder, first on the path
sys.path.insert(1, str(ROOT / "benchmarks"))

from recompute import SIZES, build_study, setup_django  # noqa: E402

from benchmarks.report import add_repeat, reported, spread  # noqa: E402


def _export(study, fmt):
    from annotation import exports

    def write(file):
        exports.export_write(study=study, fmt=fmt, file=file)

    return write


def _bundle(study):
    from django.template.loader import render_to_string

    from agreement.report.bundle import report_bundle_chunks
    from agreement.report.figures import report_charts
    from agreement.report.sections import study_report

    def write(file):
        report = study_report(study=study)
        html = render_to_string(
            "agreement/report_file.html",
            {"study": study, "report": report, "charts": report_charts(report), "css": ""},
        )
        for chunk in report_bundle_chunks(study=study, report=report, report_html=html):
            file.write(chunk)

    return write


def _job(study, key):
    """The export prepared as a job: inline (``setup_django``), its file in the test
    settings' JOB_FILES_ROOT (a temporary folder)."""
    from annotation import export_jobs

    def write(file):
        job = export_jobs.export_job_start(study=study, key=key, actor=None)
        assert job.state == "done", job.error
        file.seek(job.file_size)  # the size written, for the report

    return write


def measure(write, repeat: int) -> tuple[list[float], list[float], int, float]:
    """Wall and CPU seconds of each run, bytes written, traced peak MB (one more run)."""
    walls, cpus = [], []
    size = 0
    for _ in range(repeat):
        with tempfile.TemporaryFile() as file:
            wall, cpu = time.perf_counter(), time.process_time()
            write(file)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
            size = file.tell()
    with tempfile.TemporaryFile() as file:
        tracemalloc.start()
        write(file)
        peak = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
    return walls, cpus, size, peak


def main(sizes: list[int], repeat: int, only: set[str] | None, jobs: bool) -> None:
    print("peak: Python's traced memory while writing, one more run")
    for ratings in sizes:
        study = build_study(ratings)
        runs = [
            ("worksheet-csv", _export(study, "worksheet-csv")),
            ("worksheet-xlsx", _export(study, "worksheet-xlsx")),
            ("long-csv", _export(study, "long-csv")),
            ("bundle", _bundle(study)),
        ]
        if jobs:
            keys = ("worksheet-csv", "worksheet-xlsx", "long-csv", "bundle")
            runs += [(f"{key}-job", _job(study, key)) for key in keys]
        for name, write in runs:
            if only and name not in only:
                continue
            walls, cpus, size, peak = measure(write, repeat)
            print(
                f"{ratings:>8} ratings {name:<14} wall {spread(walls)}, CPU {spread(cpus)}, "
                f"{size / 1e6:.1f} MB out, peak {peak:.1f} MB",
                flush=True,
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=list(SIZES))
    parser.add_argument("--only", help="comma-separated: worksheet-csv, worksheet-xlsx, ...")
    parser.add_argument("--jobs", action="store_true", help="also each export as a job")
    add_repeat(parser)
    args = parser.parse_args()
    setup_django()
    with reported("Exports and the report bundle", runs=args.repeat):
        only = set(args.only.split(",")) if args.only else None
        main(args.sizes, args.repeat, only, args.jobs)
