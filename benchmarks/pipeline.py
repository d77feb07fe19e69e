"""Time from a submitted rating to a fresh agreement result, with a real Celery worker.

Needs PostgreSQL and Redis (as `make test` does). Uses its own database, `concord_bench`
by default (BENCH_DATABASE_URL), and a queue of its own, so it disturbs nothing else.
Called from benchmarks/agreement.py; it can also run alone:
    .venv/bin/python benchmarks/pipeline.py [--repeat 12]
    .venv/bin/python benchmarks/pipeline.py --ratings 100000 [--repeat 20]

``--repeat``: submissions per debounce setting, one at a time (each a run of the figure).

With ``--ratings`` it uses `recompute.py`'s study of that many ratings (built if missing,
in the same database) and revises its submitted ratings one at a time through the rating
service, each after the last one's result is fresh: p50 and p95 from the submission to a
fresh point estimate (what the agreement page shows first), with no debounce and with the
default one, and the same less the debounce (issue 28: p95 under 0.5 s beyond the debounce
at 100,000 ratings). It says which path each run took: the update from the tallies (a study
of at least AGREEMENT_INCREMENTAL_MIN_RATINGS ratings, within AGREEMENT_FULL_SECONDS of its
last run from scratch) or a run from scratch.
"""

import argparse
import logging
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not this folder, first on the path

from benchmarks.report import add_repeat, reported, spread  # noqa: E402

DEFAULT_URL = "postgres://postgres:postgres@127.0.0.1:5432/concord_bench"


def _prepare_environment(queue: str) -> dict:
    url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL)
    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": url,
        "JOBS_RUN": "celery",
        "CELERY_QUEUE": queue,
        # The test settings run every recompute from scratch (AGREEMENT_FULL_SECONDS=0);
        # the benchmark measures what a deployment runs: the production default, a run from
        # scratch at most every 300 s and the tallies' update between them.
        "AGREEMENT_FULL_SECONDS": os.environ.get("AGREEMENT_FULL_SECONDS", "300"),
    }
    os.environ.update(env)
    return env


def _create_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [name]
        ).fetchone()
        if not exists:
            connection.execute(f'CREATE DATABASE "{name}"')


def _wait_fresh(study_id: int, timeout: float = 60.0) -> float:
    from agreement.models import StudyAgreement

    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        row = (
            StudyAgreement.objects.filter(study_id=study_id).values("requested", "computed").first()
        )
        if row and row["computed"] >= row["requested"] > 0:
            return time.perf_counter()
        time.sleep(0.005)
    raise TimeoutError("no fresh result")


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _django_setup() -> None:
    import django

    django.setup()
    logging.disable(logging.INFO)  # each run logs its enqueue


def pipeline_section(samples: int = 12, ratings: int | None = None) -> None:
    queue = f"concord-bench-{uuid.uuid4().hex[:8]}"
    env = _prepare_environment(queue)
    sys.path.insert(0, str(ROOT))
    _create_database(env["DATABASE_URL"])
    _django_setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import transaction

    from agreement.models import StudyAgreement
    from annotation.services import assignments_create_all, rating_submit
    from config.celery import app
    from studies.models import Membership, Study
    from studies.services import membership_add, study_create, test_cases_add

    call_command("migrate", verbosity=0)
    app.conf.task_always_eager = False
    app.conf.task_default_queue = queue
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-P", "solo", "-Q", queue,
         "--without-gossip", "--without-mingle", "--without-heartbeat", "--loglevel=WARNING"],
        cwd=ROOT, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        from django.contrib.auth import get_user_model

        if ratings:
            _large_study_section(ratings, samples, settings)
            return
        tag = uuid.uuid4().hex[:8]
        users = [get_user_model().objects.create(username=f"bench-{tag}-{n}") for n in range(3)]
        study = study_create(slug=f"bench-{tag}", name="Benchmark", lead=users[0])
        cases = [
            {"id": f"TC-{n:03d}", "prompt": "p", "responses": {"x": "a", "y": "b"}}
            for n in range(1, 19)
        ]
        test_cases_add(study=study, systems=["x", "y"], cases=cases)
        for user in users:
            rater = membership_add(study=study, user=user, role=Membership.Role.RATER)
            assignments_create_all(study=study, rater=rater)
        Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
        assignments = [
            a for m in study.memberships.order_by("pseudonym") for a in m.assignments.all()
        ]
        time.sleep(3)  # let the worker start
        print()
        print(
            "Submission to fresh result, real worker (solo pool), reference study size "
            f"(18 cases x 3 raters, {settings.AGREEMENT_BOOTSTRAP_RESAMPLES} bootstrap resamples)"
        )
        index = 0
        for debounce in (0.0, settings.AGREEMENT_DEBOUNCE_SECONDS):
            settings.AGREEMENT_DEBOUNCE_SECONDS = debounce
            latencies = []
            for _ in range(samples):
                assignment = assignments[index]
                index += 1
                payload = {
                    "responses": {
                        label: {"depth": {"items": [{"text": f"f{i}"} for i in range(index % 7)]}}
                        for label in "AB"
                    },
                    "confidence": "medium",
                }
                start = time.perf_counter()
                with transaction.atomic():
                    rating_submit(assignment=assignment, payload=payload, any_version=True)
                latencies.append(_wait_fresh(study.pk) - start)
            runs = StudyAgreement.objects.get(study=study).runs
            print(
                f"  debounce {debounce:.1f} s: {spread(latencies, digits=3, of='submission')}, "
                f"one at a time (recompute runs so far: {runs})"
            )
    finally:
        worker.terminate()
        worker.wait(timeout=20)


def _large_study_section(ratings: int, samples: int, settings) -> None:
    """Revisions of a large study's submitted ratings, one at a time (see the docstring)."""
    from django.db import transaction

    from agreement.models import StudyAgreement
    from agreement.services.recompute import agreement_request_recompute
    from annotation.models import Assignment
    from annotation.services import rating_submit

    sys.path.insert(1, str(ROOT / "benchmarks"))
    from recompute import _payload, build_study

    study = build_study(ratings)
    assignments = list(
        Assignment.objects.filter(test_case__study=study, status=Assignment.Status.SUBMITTED)
        .select_related("test_case__study")
        .order_by("pk")[: 2 * samples]
    )
    # A run from scratch first (it builds the tallies), its intervals included, so that the
    # worker is idle when the first revision comes.
    agreement_request_recompute(study_id=study.pk)
    _wait_fresh(study.pk, timeout=600)
    began = time.perf_counter()
    while StudyAgreement.objects.get(study=study).result.get("intervals_pending"):
        if time.perf_counter() - began > 600:
            raise TimeoutError("no intervals")
        time.sleep(0.1)
    default = settings.AGREEMENT_DEBOUNCE_SECONDS
    n_ratings = StudyAgreement.objects.get(study=study).n_ratings
    least = settings.AGREEMENT_INCREMENTAL_MIN_RATINGS
    full_seconds = int(os.environ["AGREEMENT_FULL_SECONDS"])
    print()
    print(
        f"Submission to a fresh point estimate, real worker (solo pool), a study of "
        f"{n_ratings:,} submitted ratings, {samples} revisions one at a time"
    )
    print(
        f"  the worker's path: the update from the tallies needs at least {least:,} ratings "
        f"(AGREEMENT_INCREMENTAL_MIN_RATINGS) and a run from scratch in the last "
        f"{full_seconds} s (AGREEMENT_FULL_SECONDS); this study "
        + ("qualifies" if n_ratings >= least and full_seconds > 0 else "does NOT qualify")
    )
    index = 0
    for debounce in (0.0, default):
        settings.AGREEMENT_DEBOUNCE_SECONDS = debounce
        latencies, tallied = [], 0
        for _ in range(samples):
            assignment = assignments[index]
            index += 1
            start = time.perf_counter()
            with transaction.atomic():
                rating_submit(assignment=assignment, payload=_payload(index), any_version=True)
            latencies.append(_wait_fresh(study.pk, timeout=120) - start)
            # A run from scratch stores a result without "incremental" (its intervals
            # pending); an update from the tallies marks its result so.
            tallied += "incremental" in StudyAgreement.objects.get(study=study).result
        p50, p95 = _percentile(latencies, 0.5), _percentile(latencies, 0.95)
        path = (
            "every one updated from the tallies"
            if tallied == samples
            else f"{tallied} updated from the tallies, {samples - tallied} run from scratch"
        )
        print(
            f"  debounce {debounce:.1f} s: p50 {p50:.2f} s, p95 {p95:.2f} s; less the debounce: "
            f"p50 {p50 - debounce:.2f} s, p95 {p95 - debounce:.2f} s; all: "
            f"{spread(latencies, of='submission')}; path: {path}",
            flush=True,
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ratings", type=int, help="a study of this many ratings (recompute.py)")
    add_repeat(parser, default=20)
    # The option's earlier name.
    parser.add_argument(
        "--samples", dest="repeat", type=int, default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.repeat < 20:
        print(f"{args.repeat} submissions: fewer than 20 give no p95 worth the name")
    with reported("Submission to a fresh result, real worker", runs=args.repeat):
        pipeline_section(samples=args.repeat, ratings=args.ratings)
