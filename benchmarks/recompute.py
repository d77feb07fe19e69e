"""A study's recompute at 6,000 / 20,000 / 100,000 ratings: load, point estimate, intervals.

Needs PostgreSQL (as `make test` does). Uses the database in BENCH_DATABASE_URL
(default `concord_bench`), created and migrated if missing; the studies it builds are kept
there and reused by later runs (slugs `bench-recompute-<ratings>`).
    .venv/bin/python benchmarks/recompute.py [--repeat 3] [--no-analyze] [--point-only]
        [6000 20000 100000]
    .venv/bin/python benchmarks/recompute.py --incremental [--repeat 5] [100000 1000000]

The cases and assignments are made by the services (`test_cases_add`,
`assignments_create_all`), a few answers submitted through `rating_submit`; every other
answer is a copy of one of those, written by two SQL statements inside the database
(at 1,000,000 ratings the cases take most of the build).

Studies use the reference rubric, 3 raters, two responses per case. A few cases are
submitted through `annotation.services.rating_submit`; the rest copy those stored answers
in bulk (the same stored shape, made quickly), with raters mostly agreeing.
`--incremental` prints the commit, the load average before and after, and the median and
spread (min, max) of ``--repeat`` runs of the point stage from scratch and from the tallies.

For each size it prints the best of a few runs of: loading the data (the ratings' one
read, laid out for agreement and for QC), the point estimate (loaded, analysed without
intervals, QC, stored: what the page shows first), and the full result with intervals (the
whole `agreement_recompute`), then the peak memory traced during one untimed full
recompute; then the point stage's split into its parts (`--point-only`: no full result).
"""

import logging
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not this folder, first on the path

DEFAULT_URL = "postgres://postgres:postgres@127.0.0.1:5432/concord_bench"
SIZES = (6_000, 20_000, 100_000)
RATERS = 3
TEMPLATES = 28  # distinct answers submitted through the service, then copied


def setup_django() -> None:
    url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL)
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": url,
            "JOBS_RUN": "inline",
        }
    )
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as connection:
        if not connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [name]
        ).fetchone():
            connection.execute(f'CREATE DATABASE "{name}"')
    import django

    django.setup()
    logging.disable(logging.INFO)  # the runs log each stage
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _payload(n: int) -> dict:
    def items(what, count):
        return {"items": [{"text": f"{what} {i}", "half": False} for i in range(count)]}

    def scores(depth, evidence, alternatives, actions):
        return {
            "depth": items("factor", depth),
            "evidence": {"checked": list(evidence)},
            "alternatives": items("alt", alternatives),
            "structure": {"checked": [n % 2 == 0, True, n % 3 == 0]},
            "actionability": items("rec", actions),
        }

    return {
        "responses": {
            "A": scores(n % 7, (True, n % 2 == 0, n % 3 == 0), n % 4, n % 4),
            "B": scores((n + 3) % 7, (n % 2 == 0, True, False), (n + 1) % 4, (n + 2) % 4),
        },
        "confidence": "medium",
        "notes": "",
    }


def build_study(ratings: int):
    """A study with `ratings` submitted ratings (3 raters x cases x 2 responses)."""
    from django.contrib.auth import get_user_model

    from annotation.models import Assignment
    from annotation.services import assignments_create_all, rating_submit
    from studies.models import Membership, Study
    from studies.services import membership_add, study_create, test_cases_add

    slug = f"bench-recompute-{ratings}"
    study = Study.objects.filter(slug=slug).first()
    if study is not None:
        return study
    n_cases = -(-ratings // (RATERS * 2))
    began = time.perf_counter()
    users = get_user_model()
    lead, _ = users.objects.get_or_create(username="bench-lead")
    study = study_create(slug=slug, name=f"Recompute {ratings}", lead=lead)
    cases = [
        {
            "id": f"TC-{n:06d}",
            "prompt": f"Prompt {n}",
            "context": "",
            "stratum": "policy" if n % 2 else "operations",
            "responses": {"baseline": f"First answer {n}.", "improved": f"Second answer {n}."},
        }
        for n in range(n_cases)
    ]
    for start in range(0, n_cases, 2000):
        test_cases_add(
            study=study, systems=["baseline", "improved"], cases=cases[start : start + 2000]
        )
    print(f"  (cases: {time.perf_counter() - began:.0f} s)", flush=True)
    for r in range(RATERS):
        user, _ = users.objects.get_or_create(username=f"bench-rater-{r}")
        rater = membership_add(study=study, user=user, role=Membership.Role.RATER)
        assignments_create_all(study=study, rater=rater)
    study.status = Study.Status.OPEN
    study.save(update_fields=["status"])
    print(f"  (cases and assignments: {time.perf_counter() - began:.0f} s)", flush=True)

    # The stored shape of each template answer, written by the one service.
    first = list(
        Assignment.objects.filter(rater__study=study, rater__pseudonym="R-01").order_by("pk")[
            :TEMPLATES
        ]
    )
    # Each submission still asks for a recompute (the counter), but none is run or sent
    # while the study is half built: the first measured run does it (at 1,000,000 ratings
    # the 28 inline recomputes took about 4 minutes).
    with mock.patch("agreement.services.recompute.agreement_enqueue", return_value=False):
        for n, assignment in enumerate(first):
            rating_submit(assignment=assignment, payload=_payload(n), any_version=True)
    stored = {}
    for assignment in first:
        assignment.refresh_from_db()
        stored[first.index(assignment)] = (
            assignment.case_scores,
            {r.label: (r.scores, r.total) for r in assignment.ratings.all()},
        )
    _copy_answers(study, stored, done={a.pk for a in first})
    # The copies bypass the services' announcement: the tallies the template answers built
    # are invalid, and the next run from scratch rebuilds them (without logging a mismatch).
    from agreement.services.tallies import tallies_invalidate

    tallies_invalidate(study_id=study.pk)
    return study


def _copy_answers(study, stored: dict, done: set) -> None:
    """Every other assignment submitted with a copy of a template answer, in two SQL
    statements run inside the database (no row passes through Python): at 1,000,000 ratings
    a few minutes in all, against an hour and more for model instances in batches."""
    import json

    from django.db import connection, transaction
    from django.utils import timezone

    from annotation.models import Assignment, Rating
    from studies.models import BlindedLabel, Membership

    # Raters mostly agree: the case picks the answer, one time in five the rater differs.
    template = (
        f"CASE WHEN (a.test_case_id + a.rater_id) %% 5 = 0 "
        f"THEN (a.test_case_id %% {TEMPLATES} + a.rater_id) %% {TEMPLATES} "
        f"ELSE a.test_case_id %% {TEMPLATES} END"
    )
    answers = [(n, json.dumps(case_scores)) for n, (case_scores, _) in stored.items()]
    responses = [
        (n, label, json.dumps(scores), total)
        for n, (_, by_label) in stored.items()
        for label, (scores, total) in by_label.items()
    ]
    assignment, rating = Assignment._meta.db_table, Rating._meta.db_table
    membership, labels = Membership._meta.db_table, BlindedLabel._meta.db_table
    now = timezone.now()
    with transaction.atomic(), connection.cursor() as cursor:
        # The joins of a million rows hash in memory rather than in batches on disk.
        cursor.execute("SET LOCAL work_mem = '256MB'")
        cursor.execute("CREATE TEMPORARY TABLE bench_answer (n int, case_scores jsonb)")
        cursor.executemany("INSERT INTO bench_answer VALUES (%s, %s::jsonb)", answers)
        cursor.execute(
            "CREATE TEMPORARY TABLE bench_response (n int, label text, scores jsonb, total int)"
        )
        cursor.executemany("INSERT INTO bench_response VALUES (%s, %s, %s::jsonb, %s)", responses)
        cursor.execute(
            f"CREATE TEMPORARY TABLE bench_todo AS SELECT a.id, a.test_case_id, a.flipped, "
            f"{template} AS n FROM {assignment} a JOIN {membership} m ON m.id = a.rater_id "
            f"WHERE m.study_id = %s AND NOT (a.id = ANY(%s))",
            [study.pk, sorted(done)],
        )
        cursor.execute("ANALYZE bench_todo")
        cursor.execute(
            f"INSERT INTO {rating} (assignment_id, label, shown_label, response_id, scores, "
            f"total, submitted_at) "
            f"SELECT t.id, r.label, CASE WHEN t.flipped THEN "
            f"(CASE r.label WHEN 'A' THEN 'B' ELSE 'A' END) ELSE r.label END, "
            f"l.response_id, r.scores, r.total, %s "
            f"FROM bench_todo t JOIN bench_response r ON r.n = t.n "
            f"JOIN {labels} l ON l.test_case_id = t.test_case_id AND l.label = r.label",
            [now],
        )
        cursor.execute(
            f"UPDATE {assignment} a SET status = %s, case_scores = s.case_scores, "
            f"submitted_at = %s, active_seconds = 30 + a.id %% 90 "
            f"FROM bench_todo t JOIN bench_answer s ON s.n = t.n WHERE a.id = t.id",
            [Assignment.Status.SUBMITTED, now],
        )
        cursor.execute("DROP TABLE bench_todo, bench_answer, bench_response")


def best(function, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


# The parts of the point stage, as `agreement.services` calls them (the rest is the
# study's row, the counters and the store).
SPLIT = {
    "inputs": ("analysis_inputs_but_ratings",),
    "rows": ("study_submitted_ratings",),
    "layout": ("study_ratings",),
    "qc rows": ("qc_case_records",),
    "analysis": ("analyse_study_point",),
    "qc checks": ("rater_checks", "quality_checks", "qc_quality_answers", "qc_rules"),
    "gold pause": ("quality_enforce",),
}


def point_split(point, repeat: int) -> dict:
    """Seconds per part of the point stage, wall and this process's CPU, of the run with the
    least CPU time of ``repeat`` runs (on a shared machine the wall times vary with the
    other work; the CPU times much less)."""
    from agreement.services import recompute as services

    spent: dict[str, list[float]] = {}
    originals = {}

    def timed(part, function):
        def wrapper(*args, **kwargs):
            start, cpu = time.perf_counter(), time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                wall_cpu = spent.setdefault(part, [0.0, 0.0])
                wall_cpu[0] += time.perf_counter() - start
                wall_cpu[1] += time.process_time() - cpu

        return wrapper

    for part, names in SPLIT.items():
        for name in names:
            originals[name] = getattr(services, name)
            setattr(services, name, timed(part, originals[name]))
    runs = []
    try:
        for _ in range(repeat):
            spent.clear()
            start, cpu = time.perf_counter(), time.process_time()
            point()
            total, cpu = time.perf_counter() - start, time.process_time() - cpu
            runs.append({**spent, "total": [total, cpu]})
    finally:
        for name, function in originals.items():
            setattr(services, name, function)
    # quality_enforce calls qc_rules and qc_quality_answers again: counted in both.
    return min(runs, key=lambda run: run["total"][1])


def measure(study, repeat: int, point_only: bool = False) -> dict:
    nan = float("nan")
    from agreement import selectors, services
    from agreement.models import StudyAgreement

    def load():
        # One read of the submitted ratings, laid out for agreement and for QC.
        submitted = selectors.study_submitted_ratings(study=study)
        selectors.study_ratings(study=study, pilot=False, submitted=submitted)
        selectors.qc_case_records(study=study, submitted=submitted)

    def full():
        StudyAgreement.objects.get_or_create(study=study)
        StudyAgreement.objects.filter(study=study).update(requested=1, computed=0)
        services.agreement_recompute(study_id=study.pk)

    point_stage = getattr(services, "agreement_point_stage", None)

    def point():
        StudyAgreement.objects.get_or_create(study=study)
        StudyAgreement.objects.filter(study=study).update(requested=1, computed=0)
        point_stage(study_id=study.pk)

    figures = {"load": best(load, repeat), "full": nan, "peak_mb": nan}
    if not point_only:
        figures["full"] = best(full, repeat)
    figures["point"] = best(point, repeat) if point_stage else nan
    figures["split"] = point_split(point, repeat)
    if not point_only:
        tracemalloc.start()
        full()
        figures["peak_mb"] = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
    figures["n_ratings"] = StudyAgreement.objects.get(study=study).n_ratings
    return figures


def _spread(times: list[float]) -> str:
    times = sorted(times)
    return f"median {statistics.median(times):.3f} s (min {times[0]:.3f}, max {times[-1]:.3f})"


def measure_incremental(study, repeat: int) -> None:
    """The point stage from scratch, then updated from the alpha tallies after one
    revision (one rater's case resubmitted through the service): ``repeat`` runs each."""
    from django.conf import settings
    from django.db import transaction
    from django.db.models import F

    from agreement.models import StudyAgreement
    from agreement.services import recompute as services
    from annotation.models import Assignment
    from annotation.services import rating_submit

    def request():
        row, _ = StudyAgreement.objects.get_or_create(study=study)
        StudyAgreement.objects.filter(pk=row.pk).update(requested=F("requested") + 1)

    settings.AGREEMENT_FULL_SECONDS = 0
    full = []
    for _ in range(repeat):
        request()
        start = time.perf_counter()
        services.agreement_point_stage(study_id=study.pk)
        full.append(time.perf_counter() - start)
    settings.AGREEMENT_FULL_SECONDS = 3600
    assignments = list(
        Assignment.objects.filter(rater__study=study, status="submitted").order_by("pk")[:repeat]
    )
    incremental = []
    for n, assignment in enumerate(assignments):
        with transaction.atomic():
            rating_submit(assignment=assignment, payload=_payload(n + 3), any_version=True)
        request()
        start = time.perf_counter()
        services.agreement_point_stage(study_id=study.pk)
        incremental.append(time.perf_counter() - start)
        assert "incremental" in StudyAgreement.objects.get(study=study).result
    n_ratings = StudyAgreement.objects.get(study=study).n_ratings
    print(f"  {n_ratings} ratings, point stage from scratch: {_spread(full)}", flush=True)
    print(f"  {n_ratings} ratings, point stage from the tallies: {_spread(incremental)}")


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def _commit() -> str:
    import subprocess

    result = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return result.stdout.strip()


def main() -> None:
    args = sys.argv[1:]
    repeat = 3
    if args[:1] == ["--repeat"]:
        repeat, args = int(args[1]), args[2:]
    if "--incremental" in args:
        sizes = [int(arg) for arg in args if arg != "--incremental"] or [100_000]
        setup_django()
        print(f"commit {_commit()}; load average before {_load()}", flush=True)
        for size in sizes:
            start = time.perf_counter()
            study = build_study(size)
            print(f"  ({size}-rating study ready in {time.perf_counter() - start:.0f} s)")
            from django.db import connection

            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
            measure_incremental(study, repeat)
        print(f"load average after {_load()}")
        return
    analyze = "--no-analyze" not in args
    point_only = "--point-only" in args
    args = [arg for arg in args if arg not in ("--no-analyze", "--point-only")]
    sizes = [int(arg) for arg in args] or list(SIZES)
    setup_django()
    from django.conf import settings

    resamples = settings.AGREEMENT_BOOTSTRAP_RESAMPLES
    print(f"bootstrap resamples: {resamples}; best of {repeat} runs")
    print(f"{'ratings':>8} {'load s':>8} {'point s':>8} {'full s':>8} {'peak MB':>8}")
    for size in sizes:
        start = time.perf_counter()
        study = build_study(size)
        built = time.perf_counter() - start
        if built > 1:
            print(f"  (built the {size}-rating study in {built:.0f} s)", flush=True)
        if analyze:
            # Planner statistics, as autovacuum keeps them on a production database. Without
            # them (autovacuum off, or right after a bulk write) PostgreSQL guesses a few rows
            # per table and the QC rows' query ran 1.3 s instead of 28 ms at 20,000 ratings.
            from django.db import connection

            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
        f = measure(study, repeat, point_only)
        print(
            f"{f['n_ratings']:>8} {f['load']:>8.2f} {f['point']:>8.2f} {f['full']:>8.2f} "
            f"{f['peak_mb']:>8.1f}",
            flush=True,
        )
        split = f["split"]
        for column, name in enumerate(("wall", "CPU")):
            parts = ", ".join(f"{part} {split.get(part, [0, 0])[column]:.2f}" for part in SPLIT)
            print(f"  point stage {name} s: {split['total'][column]:.2f} = {parts}", flush=True)
        print(f"  load average {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
