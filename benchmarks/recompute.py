"""A study's recompute at 6,000 / 20,000 / 100,000 (up to 1,000,000) ratings: load, point
estimate, intervals; and the point stage from scratch against the update from the tallies.

Needs PostgreSQL (as `make test` does). Uses the database in BENCH_DATABASE_URL
(default `concord_bench`), created and migrated if missing; the studies it builds are kept
there and reused by later runs (slugs `bench-recompute-<ratings>`).
    .venv/bin/python benchmarks/recompute.py [--repeat 5] [--no-analyze] [--point-only]
        [6000 20000 100000]
    .venv/bin/python benchmarks/recompute.py --incremental [--repeat 5] [100000 1000000]
    .venv/bin/python benchmarks/recompute.py --build-only 1000000   # the build alone
    .venv/bin/python benchmarks/recompute.py --check [600]   # the build's copy, checked

The build: the study, its cases, raters and assignments by the services (`study_create`,
`test_cases_add`, `membership_add`, `assignments_create_all`: the blinding, the orders and
the sides are theirs); 28 answers submitted through `rating_submit`; every other answer a
copy of one of those in the shape the service stores it (the assignment's answer and state,
a rating per response under its blinded label), written by a few SQL statements inside the
database; then the derived state by the app's own code from scratch (one run of the point
stage: the stored result, the QC and the alpha tallies). It prints each step's seconds.
Before building a study it checks the copy against the service on a small study (600
ratings, rolled back): written both ways, then the same run from scratch, every stored
answer, rating, point figure and tally must be the same (`--check` alone: only that).

Studies use the reference rubric, 3 raters, two responses per case, raters mostly agreeing.
Every figure is the median and spread (min-max) of ``--repeat`` runs (benchmarks/report.py,
which prints the commit and the load average before and after): loading the data (the
ratings' one read, laid out for agreement and for QC), the point stage from scratch (loaded,
analysed without intervals, QC, stored: what the page shows first) with its parts, wall and
CPU, and the full result with intervals (the whole `agreement_recompute`), then the peak
memory traced during one untimed full recompute (`--point-only`: no full result).
`--incremental`: the point stage from scratch, and from the tallies after one revision.
"""

import argparse
import logging
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
if sys.path[0] == str(ROOT / "benchmarks"):
    sys.path[0] = str(ROOT)  # the repository, not this folder, first on the path

from benchmarks.report import add_repeat, reported, spread, timed  # noqa: E402

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


def _cases(n_cases: int):
    for n in range(n_cases):
        yield {
            "id": f"TC-{n:06d}",
            "prompt": f"Prompt {n}",
            "context": "",
            "stratum": "policy" if n % 2 else "operations",
            "responses": {"baseline": f"First answer {n}.", "improved": f"Second answer {n}."},
        }


def _structure(*, slug: str, ratings: int, step):
    """The study, its cases and its raters' assignments, by the services (the blinding, the
    order and the sides are theirs); open."""
    from django.contrib.auth import get_user_model

    from annotation.services import assignments_create_all
    from studies.models import Membership, Study
    from studies.services import membership_add, study_create, test_cases_add

    n_cases = -(-ratings // (RATERS * 2))
    users = get_user_model()
    lead, _ = users.objects.get_or_create(username="bench-lead")
    study = study_create(slug=slug, name=f"Recompute {ratings}", lead=lead)
    # One call: the writer copies the cases in batches of its own, in one transaction.
    test_cases_add(study=study, systems=["baseline", "improved"], cases=_cases(n_cases))
    step("cases (test_cases_add)")
    for r in range(RATERS):
        user, _ = users.objects.get_or_create(username=f"bench-rater-{r}")
        rater = membership_add(study=study, user=user, role=Membership.Role.RATER)
        assignments_create_all(study=study, rater=rater)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    study.refresh_from_db()
    step("raters and assignments (assignments_create_all)")
    return study


def _backdated(study) -> None:
    """Every assignment given a day ago, so that a save may credit its claimed active
    seconds (the service credits no more than has passed since the case was given)."""
    from datetime import timedelta

    from django.utils import timezone

    from annotation.models import Assignment

    day_ago = timezone.now() - timedelta(days=1)
    Assignment.objects.filter(rater__study=study).update(updated_at=day_ago)


def _active(assignment_id: int) -> int:
    """The active seconds each answer claims (the copy's SQL says the same)."""
    return 30 + assignment_id % 90


def _template_of(*, test_case_id: int, rater_id: int) -> int:
    """Which template answer an assignment gets (the copy's SQL says the same): raters
    mostly agree, the case picks the answer, one time in five the rater differs."""
    if (test_case_id + rater_id) % 5 == 0:
        return (test_case_id % TEMPLATES + rater_id) % TEMPLATES
    return test_case_id % TEMPLATES


# The template choice and the active seconds in SQL, over ``a`` (the assignment).
TEMPLATE_SQL = (
    f"CASE WHEN (a.test_case_id + a.rater_id) %% 5 = 0 "
    f"THEN (a.test_case_id %% {TEMPLATES} + a.rater_id) %% {TEMPLATES} "
    f"ELSE a.test_case_id %% {TEMPLATES} END"
)
ACTIVE_SQL = "30 + a.id %% 90"


def _templates(study) -> list:
    """The first rater's first ``TEMPLATES`` assignments, answered by the one service: each
    stored answer is the shape every copy takes."""
    from annotation.models import Assignment
    from annotation.services import rating_submit

    first = list(
        Assignment.objects.filter(rater__study=study, rater__pseudonym="R-01").order_by("pk")[
            :TEMPLATES
        ]
    )
    # Each submission still asks for a recompute (the counter), but none is run or sent
    # while the study is half built: the build's last step runs it.
    with mock.patch("agreement.services.recompute.agreement_enqueue", return_value=False):
        for n, assignment in enumerate(first):
            rating_submit(
                assignment=assignment,
                payload=_payload(n),
                any_version=True,
                active_seconds=_active(assignment.pk),
            )
    return first


def _submit_the_rest(study, first: list) -> None:
    """What the copy stands for: every other assignment answered through the service, one
    submission at a time (``--check`` only: at 1,000,000 ratings, hours)."""
    from annotation.models import Assignment
    from annotation.services import rating_submit

    done = {a.pk for a in first}
    rest = Assignment.objects.filter(rater__study=study).exclude(pk__in=done).order_by("pk")
    with mock.patch("agreement.services.recompute.agreement_enqueue", return_value=False):
        for assignment in rest:
            n = _template_of(test_case_id=assignment.test_case_id, rater_id=assignment.rater_id)
            rating_submit(
                assignment=assignment,
                payload=_payload(n),
                any_version=True,
                active_seconds=_active(assignment.pk),
            )


def _derived(study) -> None:
    """The derived state the app keeps, built by its own code from scratch: one run of the
    point stage (the stored point result, the QC, the alpha tallies rebuilt from the data)."""
    from django.conf import settings
    from django.db.models import F

    from agreement.models import StudyAgreement
    from agreement.services.recompute import agreement_point_stage
    from agreement.services.tallies import tallies_invalidate

    # The copies bypass the services' announcement: the tallies the template answers built
    # are invalid, and this run from scratch rebuilds them (without logging a mismatch).
    tallies_invalidate(study_id=study.pk)
    StudyAgreement.objects.get_or_create(study=study)
    StudyAgreement.objects.filter(study=study).update(requested=F("requested") + 1)
    kept, settings.AGREEMENT_FULL_SECONDS = settings.AGREEMENT_FULL_SECONDS, 0
    try:
        agreement_point_stage(study_id=study.pk)
    finally:
        settings.AGREEMENT_FULL_SECONDS = kept


def _analyze(*models) -> None:
    """Planner statistics of these models' tables (of every table by default), as autovacuum
    keeps them on a production database. Without them (autovacuum off, or right after a
    bulk write) PostgreSQL guesses a few rows per table and the QC rows' query ran 1.3 s
    instead of 28 ms at 20,000 ratings."""
    from django.db import connection

    tables = ", ".join(connection.ops.quote_name(m._meta.db_table) for m in models)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {tables}")


def build_study(ratings: int):
    """A study with `ratings` submitted ratings (3 raters x cases x 2 responses), its derived
    state built; the study of that size already in the database if there is one."""
    from studies.models import Study

    slug = f"bench-recompute-{ratings}"
    study = Study.objects.filter(slug=slug).first()
    if study is not None:
        return study
    began = last = time.perf_counter()
    cpu = last_cpu = time.process_time()
    database = last_database = _database_cpu()

    def step(what: str) -> None:
        nonlocal last, last_cpu, last_database
        now, now_cpu, now_database = time.perf_counter(), time.process_time(), _database_cpu()
        print(
            f"  build {ratings:,}: {what} {now - last:.1f} s (CPU: this process "
            f"{now_cpu - last_cpu:.1f} s, the database's {now_database - last_database:.1f} s)",
            flush=True,
        )
        last, last_cpu, last_database = now, now_cpu, now_database

    study = _structure(slug=slug, ratings=ratings, step=step)
    _backdated(study)
    # The template answers' queries plan on the new rows: without it each took about half a
    # second of the database's CPU at 1,000,000 ratings (2 ms each once analysed).
    _analyze()
    step("ANALYZE")
    first = _templates(study)
    step(f"{TEMPLATES} template answers (rating_submit)")
    _copy_answers(study, first)
    step("every other answer, a copy of a template (SQL)")
    _analyze()
    step("ANALYZE")
    _derived(study)
    step("derived state: one run from scratch (point result, QC, tallies)")
    print(
        f"  build {ratings:,}: {time.perf_counter() - began:.0f} s in all; CPU: this process "
        f"{time.process_time() - cpu:.0f} s, the database's {_database_cpu() - database:.0f} s",
        flush=True,
    )
    return study


def _database_cpu() -> float:
    """CPU seconds so far of this connection's PostgreSQL process (a server on this
    machine: /proc; NaN elsewhere), which the machine's load moves far less than wall time."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _copy_answers(study, first: list) -> None:
    """Every other assignment submitted with a copy of a template answer, as the service
    stores it (the assignment's stored answer and state, a rating per response), in a few
    SQL statements run inside the database (no row passes through Python): at 1,000,000
    ratings a minute or two, against an hour and more for model instances in batches."""
    from django.db import connection, transaction
    from django.utils import timezone

    from annotation.models import Assignment, Rating
    from studies.models import BlindedLabel, Membership

    templates = [(n, assignment.pk) for n, assignment in enumerate(first)]
    assignment, rating = Assignment._meta.db_table, Rating._meta.db_table
    membership, labels = Membership._meta.db_table, BlindedLabel._meta.db_table
    now = timezone.now()
    with transaction.atomic(), connection.cursor() as cursor:
        # The joins of a million rows hash in memory rather than in batches on disk.
        cursor.execute("SET LOCAL work_mem = '256MB'")
        cursor.execute("CREATE TEMPORARY TABLE bench_template (n int, assignment_id bigint)")
        cursor.executemany("INSERT INTO bench_template VALUES (%s, %s)", templates)
        cursor.execute(
            f"CREATE TEMPORARY TABLE bench_todo AS SELECT a.id, a.test_case_id, a.flipped, "
            f"{TEMPLATE_SQL} AS n, {ACTIVE_SQL} AS active "
            f"FROM {assignment} a JOIN {membership} m ON m.id = a.rater_id "
            f"WHERE m.study_id = %s AND NOT (a.id = ANY(%s))",
            [study.pk, [pk for _, pk in templates]],
        )
        cursor.execute("ANALYZE bench_todo")
        # A rating per response: the template's scores and total, under the key label; the
        # label shown is the other one on a flipped screen (two responses per case).
        cursor.execute(
            f"INSERT INTO {rating} (assignment_id, label, shown_label, response_id, scores, "
            f"total, submitted_at) "
            f"SELECT t.id, r.label, CASE WHEN t.flipped THEN "
            f"(CASE r.label WHEN 'A' THEN 'B' ELSE 'A' END) ELSE r.label END, "
            f"l.response_id, r.scores, r.total, %s "
            f"FROM bench_todo t JOIN bench_template s ON s.n = t.n "
            f"JOIN {rating} r ON r.assignment_id = s.assignment_id "
            f"JOIN {labels} l ON l.test_case_id = t.test_case_id AND l.label = r.label",
            [now],
        )
        # The assignment's stored answer as the service leaves it (``_submissions_store``).
        cursor.execute(
            f"UPDATE {assignment} a SET status = %s, draft = s.draft, "
            f"case_scores = s.case_scores, confidence = s.confidence, notes = s.notes, "
            f"source = s.source, submitted_at = %s, last_saved_at = %s, updated_at = %s, "
            f"version = a.version + 1, active_seconds = a.active_seconds + t.active "
            f"FROM bench_todo t JOIN bench_template b ON b.n = t.n "
            f"JOIN {assignment} s ON s.id = b.assignment_id WHERE a.id = t.id",
            [Assignment.Status.SUBMITTED, now, now, now],
        )
        cursor.execute("DROP TABLE bench_todo, bench_template")


def _stored(study) -> dict:
    """What a build leaves that the analyses read: each assignment's stored answer and
    state, each rating, the point result and the alpha tallies (times left out)."""
    from agreement.models import AgreementTallies, CaseTally, StudyAgreement
    from annotation.models import Assignment, Rating

    assignments = {
        row["pk"]: row
        for row in Assignment.objects.filter(rater__study=study).values(
            "pk", "status", "draft", "case_scores", "confidence", "notes", "source",
            "version", "active_seconds", "flipped",
        )
    }  # fmt: skip
    ratings = {
        (row["assignment_id"], row["label"]): row
        for row in Rating.objects.filter(assignment__rater__study=study).values(
            "assignment_id", "label", "shown_label", "response_id", "scores", "total"
        )
    }
    result = dict(StudyAgreement.objects.get(study=study).result)
    tallies = AgreementTallies.objects.get(study=study)
    return {
        "assignments": assignments,
        "ratings": ratings,
        "result": result,
        # The inputs' ratings part less the latest time and id (a later write's).
        "tallies": (tallies.totals, tallies.n_ratings, tallies.inputs_ratings[0]),
        "case tallies": {
            row["test_case_id"]: row
            for row in CaseTally.objects.filter(study=study).values(
                "test_case_id", "counts", "n_ratings", "n_inputs"
            )
        },
    }


def build_check(ratings: int = 600) -> None:
    """The copy against the service: a small study's answers written both ways (the copy,
    then, rolled back, one ``rating_submit`` per assignment), each followed by the same run
    from scratch; every stored answer, rating, point figure and tally must be the same.
    Raises AssertionError on the first difference; leaves nothing in the database."""
    from django.db import transaction

    class Rollback(Exception):
        pass

    def step(what: str) -> None:
        pass

    try:
        with transaction.atomic():
            study = _structure(slug="bench-recompute-check", ratings=ratings, step=step)
            _backdated(study)
            first = _templates(study)
            copied = transaction.savepoint()
            _copy_answers(study, first)
            _derived(study)
            bulk = _stored(study)
            transaction.savepoint_rollback(copied)
            _submit_the_rest(study, first)
            _derived(study)
            service = _stored(study)
            raise Rollback
    except Rollback:
        pass
    assert len(bulk["ratings"]) == ratings - ratings % 2, len(bulk["ratings"])
    for part in ("assignments", "ratings", "case tallies", "tallies", "result"):
        if part == "result":
            keys = sorted(set(bulk[part]) | set(service[part]))
            differ = [k for k in keys if bulk[part].get(k) != service[part].get(k)]
            assert not differ, f"the copy's point result differs from the service's: {differ}"
        assert bulk[part] == service[part], f"the copy's {part} differ from the service's"


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


def point_split(point, repeat: int) -> list[dict]:
    """Seconds per part of the point stage, wall and this process's CPU, of each of
    ``repeat`` runs ({part: [wall, CPU]}, "total" included)."""
    from agreement.services import recompute as services

    spent: dict[str, list[float]] = {}
    originals = {}

    def clocked(part, function):
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
            setattr(services, name, clocked(part, originals[name]))
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
    return runs


def _request(study) -> None:
    """Ask for a run, as a submission does (the run stores only a result it was asked for)."""
    from django.db.models import F

    from agreement.models import StudyAgreement

    StudyAgreement.objects.get_or_create(study=study)
    StudyAgreement.objects.filter(study=study).update(requested=F("requested") + 1)


def measure(study, repeat: int, point_only: bool = False) -> None:
    """Print the load, the point stage (with its parts) and the full recompute, each over
    ``repeat`` runs from scratch, and the full recompute's peak traced memory."""
    from django.conf import settings

    from agreement import selectors
    from agreement.models import StudyAgreement
    from agreement.selectors import ratings
    from agreement.services import recompute as services

    def load():
        # One read of the submitted ratings, laid out for agreement and for QC.
        submitted = ratings.study_submitted_ratings(study=study)
        ratings.study_ratings(study=study, pilot=False, submitted=submitted)
        selectors.qc_case_records(study=study, submitted=submitted)

    def full():
        _request(study)
        services.agreement_recompute(study_id=study.pk)

    def point():
        _request(study)
        services.agreement_point_stage(study_id=study.pk)

    settings.AGREEMENT_FULL_SECONDS = 0  # every run from scratch
    n_ratings = StudyAgreement.objects.get(study=study).n_ratings
    print(f"{n_ratings:,} ratings, every run from scratch:", flush=True)
    print(f"  load (the ratings' one read, laid out): {spread(timed(load, repeat))}", flush=True)
    runs = point_split(point, repeat)
    for column, name in enumerate(("wall", "CPU")):
        print(f"  point stage, {name}: {spread([run['total'][column] for run in runs])}")
        parts = ", ".join(
            f"{part} {statistics.median(run.get(part, [0, 0])[column] for run in runs):.2f}"
            for part in SPLIT
        )
        print(f"    medians of its parts, {name} s: {parts}", flush=True)
    if point_only:
        return
    print(f"  full recompute, intervals included: {spread(timed(full, repeat))}", flush=True)
    tracemalloc.start()
    full()
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    print(f"  full recompute, peak traced memory (one more run): {peak:.0f} MB", flush=True)


def measure_incremental(study, repeat: int) -> None:
    """The point stage from scratch, then updated from the alpha tallies after one
    revision (one rater's case resubmitted through the service): ``repeat`` runs each."""
    from django.conf import settings
    from django.db import transaction

    from agreement.models import StudyAgreement
    from agreement.services import recompute as services
    from annotation.models import Assignment
    from annotation.services import rating_submit

    settings.AGREEMENT_FULL_SECONDS = 0
    full = []
    for _ in range(repeat):
        _request(study)
        start = time.perf_counter()
        services.agreement_point_stage(study_id=study.pk)
        full.append(time.perf_counter() - start)
    settings.AGREEMENT_FULL_SECONDS = 3600
    n_ratings = StudyAgreement.objects.get(study=study).n_ratings
    least = settings.AGREEMENT_INCREMENTAL_MIN_RATINGS
    if n_ratings < least:
        print(
            f"  {n_ratings:,} ratings: under AGREEMENT_INCREMENTAL_MIN_RATINGS ({least:,}); "
            "lowered for this run, as a deployment's runs would not take the tallies' path"
        )
        settings.AGREEMENT_INCREMENTAL_MIN_RATINGS = 0
    assignments = list(
        Assignment.objects.filter(rater__study=study, status="submitted").order_by("pk")[:repeat]
    )
    incremental = []
    with mock.patch("agreement.services.recompute.agreement_enqueue", return_value=False):
        for n, assignment in enumerate(assignments):
            with transaction.atomic():
                rating_submit(assignment=assignment, payload=_payload(n + 3), any_version=True)
            _request(study)
            start = time.perf_counter()
            services.agreement_point_stage(study_id=study.pk)
            incremental.append(time.perf_counter() - start)
            assert "incremental" in StudyAgreement.objects.get(study=study).result
    settings.AGREEMENT_INCREMENTAL_MIN_RATINGS = least
    n_ratings = StudyAgreement.objects.get(study=study).n_ratings
    print(f"  {n_ratings:,} ratings, point stage from scratch: {spread(full)}", flush=True)
    print(
        f"  {n_ratings:,} ratings, point stage from the tallies (after one revision): "
        f"{spread(incremental, digits=3)}",
        flush=True,
    )


# At or above this many ratings a run from scratch takes minutes and gigabytes.
LARGE = 500_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, help=f"ratings (default {SIZES})")
    parser.add_argument(
        "--incremental", action="store_true", help="the point stage from scratch and from tallies"
    )
    parser.add_argument("--point-only", action="store_true", help="no full recompute")
    parser.add_argument("--no-analyze", action="store_true", help="no ANALYZE before measuring")
    parser.add_argument(
        "--check",
        type=int,
        nargs="?",
        const=600,
        metavar="RATINGS",
        help="only check the build's copy against the service at this size (default 600)",
    )
    parser.add_argument(
        "--build-only", action="store_true", help="build the studies (if missing), measure none"
    )
    add_repeat(parser)
    args = parser.parse_args()
    sizes = args.sizes or ([100_000] if args.incremental else list(SIZES))
    setup_django()
    if args.check is not None:
        with reported(f"The build's copy against the service, {args.check:,} ratings", runs=1):
            timed_check(args.check)
        return
    from django.conf import settings

    title = (
        "The point stage from scratch and from the tallies"
        if args.incremental
        else f"Recompute from scratch ({settings.AGREEMENT_BOOTSTRAP_RESAMPLES:,} resamples)"
    )
    why = "a run from scratch at 1,000,000 ratings takes minutes" if max(sizes) >= LARGE else ""
    with reported(f"{title}: {', '.join(f'{s:,}' for s in sizes)} ratings", runs=args.repeat,
                  why_fewer=why):  # fmt: skip
        checked = False
        for size in sizes:
            if not checked and not _built(size):
                timed_check(600)
                checked = True
            study = build_study(size)
            if args.build_only:
                continue
            if not args.no_analyze:
                _analyze()
            if args.incremental:
                measure_incremental(study, args.repeat)
            else:
                measure(study, args.repeat, args.point_only)


def _built(ratings: int) -> bool:
    from studies.models import Study

    return Study.objects.filter(slug=f"bench-recompute-{ratings}").exists()


def timed_check(ratings: int) -> None:
    start = time.perf_counter()
    build_check(ratings)
    print(
        f"  the build's copy checked against the service at {ratings:,} ratings: the same "
        f"stored answers, ratings, point result and tallies ({time.perf_counter() - start:.0f} s)",
        flush=True,
    )


if __name__ == "__main__":
    main()
