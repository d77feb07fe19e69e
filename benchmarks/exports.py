"""The exports and the report bundle of a study at 6,000 / 20,000 / 100,000 ratings.

Needs PostgreSQL. Uses the studies of `recompute.py` (the same database, BENCH_DATABASE_URL,
default `concord_bench`; built there if missing, which takes a few minutes at 100,000):
    .venv/bin/python benchmarks/exports.py [--repeat 3] [6000 20000 100000]

For each size it prints, per export (the worksheet as CSV and as Excel, the long table) and
for the report bundle (the zip the report page offers: report, results, the CSV exports,
the data dictionary): the best wall and CPU seconds of a few runs, the size written, and
the peak memory Python traced while writing it, all written to a temporary file. A request
still running after gunicorn's timeout (60 s in `config/gunicorn.py`) is killed, so these
are the figures to keep well below it.
"""

import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not this folder, first on the path
sys.path.insert(1, str(ROOT / "benchmarks"))

from recompute import SIZES, build_study, setup_django  # noqa: E402


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


def measure(write, repeat: int) -> tuple[float, float, int, float]:
    """Best wall and CPU seconds, bytes written, traced peak MB (one more, untimed run)."""
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
    return min(walls), min(cpus), size, peak


def main() -> None:
    args = sys.argv[1:]
    repeat = 3
    if args[:1] == ["--repeat"]:
        repeat, args = int(args[1]), args[2:]
    sizes = [int(arg) for arg in args] or list(SIZES)
    setup_django()
    print(f"best of {repeat} runs; peak: Python's traced memory while writing")
    print(f"{'ratings':>8} {'export':<14} {'wall s':>7} {'CPU s':>7} {'MB out':>7} {'peak MB':>8}")
    for ratings in sizes:
        study = build_study(ratings)
        for name, write in (
            ("worksheet-csv", _export(study, "worksheet-csv")),
            ("worksheet-xlsx", _export(study, "worksheet-xlsx")),
            ("long-csv", _export(study, "long-csv")),
            ("bundle", _bundle(study)),
        ):
            wall, cpu, size, peak = measure(write, repeat)
            print(
                f"{ratings:>8} {name:<14} {wall:>7.2f} {cpu:>7.2f} {size / 1e6:>7.1f} {peak:>8.1f}",
                flush=True,
            )
        print(f"  load average {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
