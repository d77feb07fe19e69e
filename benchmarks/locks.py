"""How long a rater's autosave takes while a large worksheet import runs in the same study.

Needs PostgreSQL (row locks). Uses its own database, `concord_bench` by default
(BENCH_DATABASE_URL). Run: .venv/bin/python benchmarks/locks.py [CASES] [--repeat 5]
Prints the import's duration (median and spread of --repeat imports, each in a new study) and
the autosaves' latencies during them, next to the latency with nothing else running. An
autosave must not wait for the import (``studies.locks``)."""

import os
import sys
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.report import positional, repeat_argument, reported, spread  # noqa: E402

DEFAULT_URL = "postgres://postgres:postgres@127.0.0.1:5432/concord_bench"


def setup():
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL),
        }
    )
    sys.path.insert(0, str(ROOT))
    from pipeline import _create_database

    _create_database(os.environ["DATABASE_URL"])
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def make_study(cases: int):
    from django.contrib.auth import get_user_model

    from annotation.services import assignments_create_all
    from studies.models import Membership, Study
    from studies.services import membership_add, study_create, test_cases_add

    tag = uuid.uuid4().hex[:8]
    users = [get_user_model().objects.create(username=f"bench-{tag}-{n}") for n in range(2)]
    study = study_create(slug=f"locks-{tag}", name="Lock benchmark", lead=users[0])
    rows = [
        {"id": f"TC-{n:05d}", "prompt": "p", "responses": {"x": "a", "y": "b"}}
        for n in range(1, cases + 1)
    ]
    test_cases_add(study=study, systems=["x", "y"], cases=rows)
    raters = []
    for user in users:
        rater = membership_add(study=study, user=user, role=Membership.Role.RATER)
        assignments_create_all(study=study, rater=rater)
        raters.append(rater)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    return study, raters


def autosave_latencies(assignment, until: threading.Event | None, count: int = 20) -> list:
    from django.db import connections

    from annotation.models import Assignment
    from annotation.services import draft_save

    latencies = []
    try:
        while len(latencies) < count and not (until is not None and until.is_set()):
            version = Assignment.objects.get(pk=assignment.pk).version
            start = time.perf_counter()
            draft_save(assignment=assignment, payload={"notes": "x"}, expected_version=version)
            latencies.append(time.perf_counter() - start)
    finally:
        connections.close_all()
    return latencies


def main(cases: int, repeat: int) -> None:
    setup()
    imports, idle, during = [], [], []
    for _ in range(repeat):
        took, quiet, busy = one_run(cases)
        imports.append(took)
        idle += quiet
        during += busy
    print(f"worksheet import of {cases} cases ({2 * cases} rows): {spread(imports)}")
    for name, values in (("idle", idle), ("during the import", during)):
        if values:
            latency = spread(values, unit="ms", scale=1000, digits=1, of="save")
            print(f"  autosave {name}, every save of every run: {latency}")


def one_run(cases: int) -> tuple[float, list, list]:
    """One import in a new study: its seconds, the autosaves' latencies idle and during it."""
    from django.db import connections

    from annotation.models import Assignment
    from annotation.services import ratings_import

    study, (importer, saver) = make_study(cases)
    payload = {
        "responses": {"A": {}, "B": {}},
        "confidence": "low",
        "notes": "",
    }
    answers = {a.test_case_id: payload for a in Assignment.objects.filter(rater=importer)}
    case = saver.assignments.first()
    idle = autosave_latencies(case, None)
    done = threading.Event()
    timing = {}

    def run_import():
        start = time.perf_counter()
        try:
            ratings_import(rater=importer, answers=answers, actor=None, source_name="bench.csv")
        finally:
            timing["import"] = time.perf_counter() - start
            done.set()
            connections.close_all()

    thread = threading.Thread(target=run_import)
    thread.start()
    time.sleep(0.2)  # let the import take its locks
    during = autosave_latencies(case, done, count=10_000)
    thread.join()
    return timing["import"], idle, during


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    given = positional(sys.argv[1:])
    repeat = repeat_argument(sys.argv)
    with reported("Autosave latency during a worksheet import", runs=repeat):
        main(int(given[0]) if given else 2500, repeat)
