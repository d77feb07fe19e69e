"""Unblinding to a stored analysis: a study of 14 systems (91 pairs), 100 cases of 14
responses each, 3 raters, four 1-5 scales: 4,200 ratings (issue 26).

Needs PostgreSQL and Redis (the recompute's run lock). Uses the database in
BENCH_DATABASE_URL (default `concord_bench`), created and migrated if missing; the study is
built once (every rating submitted through `annotation.services.rating_submit`) and reused
(slug `bench-analysis-14`).

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/concord_bench \\
      REDIS_URL=redis://127.0.0.1:6379/1 \\
      .venv/bin/python benchmarks/analysis_speed.py [--repeat 5] [--profile]

Each run puts the study back to closed (its stored result made stale), then times
`study_unblind` as the study lead's request calls it, with jobs run inline: the unblinding,
the recompute it asks for (point stage and interval stage with the comparison of the 14
systems) and the result stored. That is the worker's run without Celery's debounce. Per run
it prints the wall and CPU seconds; then the median and spread, with the commit and the load
average before and after (benchmarks/report.py). `--profile` prints cProfile's top functions
of one more run. `--pairs` then times the comparison alone (`compare_systems`, no database)
on the same ratings laid out as 700 cases of two responses (each of the 91 pairs in 7-8
cases), the layout whose many small pairs made scipy's Wilcoxon test fall back to its
permutation test. `--robustness` then times the robustness check's job end to end
(``analysis_job_start`` with jobs run inline: the ratings read, the 455 mixed-model fits of
5 outcomes x 91 pairs, the result kept), each run a new job.
"""

import cProfile
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)  # the repository, not this folder, first on the path
sys.path.insert(1, str(ROOT / "benchmarks"))

from recompute import setup_django  # noqa: E402  (the same database and settings)

from benchmarks.report import reported, spread  # noqa: E402

SLUG = "bench-analysis-14"
SYSTEMS = 14
CASES = 100
RATERS = 3
DIMENSIONS = ("coherence", "consistency", "fluency", "relevance")


def _scale(key: str) -> dict:
    return {
        "key": key,
        "name": key.capitalize(),
        "kind": "scale",
        "config": {
            "measure": f"How good is the summary's {key}?",
            "options": [{"value": v, "label": str(v), "anchor": ""} for v in range(1, 6)],
            "example": "",
            "edge_cases": "",
        },
    }


def build_study():
    """The study, closed with every rating submitted; built once."""
    import numpy as np
    from django.contrib.auth import get_user_model

    from annotation.models import Assignment
    from annotation.services import assignments_create_all, rating_submit
    from studies.models import Membership, Study
    from studies.services import membership_add, study_create, test_cases_add
    from studies.services.rubric import rubric_replace

    study = Study.objects.filter(slug=SLUG).first()
    if study is not None:
        return study
    users = get_user_model()
    lead, _ = users.objects.get_or_create(username="bench-analysis-lead")
    study = study_create(slug=SLUG, name="Analysis speed, 14 systems", lead=lead, blinding_seed=7)
    definition = {
        "name": "Summaries (four 1-5 scales)",
        "description": "",
        "dimensions": [_scale(key) for key in DIMENSIONS],
    }
    study = rubric_replace(study=study, actor=lead, definition=definition)
    systems = [f"system-{s:02d}" for s in range(SYSTEMS)]
    cases = [
        {
            "id": f"DOC-{n:03d}",
            "prompt": f"Summarise document {n}.",
            "context": "",
            "stratum": "",
            "responses": {name: f"Summary {i} of document {n}." for i, name in enumerate(systems)},
        }
        for n in range(CASES)
    ]
    test_cases_add(study=study, systems=systems, cases=cases)
    for r in range(RATERS):
        user, _ = users.objects.get_or_create(username=f"bench-analysis-rater-{r}")
        rater = membership_add(study=study, user=user, role=Membership.Role.RATER)
        assignments_create_all(study=study, rater=rater)
    study.status = Study.Status.OPEN
    study.save(update_fields=["status"])

    # Scores: a system's quality, a document's difficulty and a rater's noise, per scale.
    rng = np.random.default_rng(26)
    quality = np.linspace(-1.0, 1.0, SYSTEMS)
    difficulty = rng.normal(0.0, 0.5, CASES)
    assignments = Assignment.objects.filter(rater__study=study).select_related("test_case")
    for assignment in assignments.order_by("pk"):
        n = int(assignment.test_case.case_id[4:])
        responses = {}
        for label in assignment.test_case.labels.select_related("response__system"):
            s = systems.index(label.response.system.name)
            values = 3 + quality[s] + difficulty[n] + rng.normal(0.0, 0.7, len(DIMENSIONS))
            responses[label.label] = {
                key: {"choice": int(np.clip(np.rint(v), 1, 5))}
                for key, v in zip(DIMENSIONS, values, strict=True)
            }
        payload = {"responses": responses, "confidence": "medium"}
        rating_submit(assignment=assignment, payload=payload, any_version=True)
    study.status = Study.Status.CLOSED
    study.save(update_fields=["status"])
    return study


def reblind(study) -> None:
    """The study back to closed with a stale result, as before its unblinding (the history
    keeps one more "unblinded" event per run: harmless here)."""
    from agreement.models import StudyAgreement
    from studies.models import Study

    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED, unblinded_at=None)
    StudyAgreement.objects.filter(study=study).update(computed=0, requested=1)


def unblind(study):
    """The timed part: the lead's unblinding, and the recompute it asks for, run inline."""
    from agreement.models import StudyAgreement
    from studies.models import Study
    from studies.services.unblinding import study_unblind

    study = Study.objects.get(pk=study.pk)
    study_unblind(study=study, actor=study.lead, reason="benchmark")
    row = StudyAgreement.objects.get(study=study)
    result = row.result
    assert row.computed >= row.requested, "the run stored no result"
    assert not result.get("intervals_pending") and "comparison" in result, sorted(result)
    return result


def pairs_layout(study):
    """The study's comparison data laid out as 700 cases of two responses: each case's 14
    responses (in key order) cut into 7 pairs."""
    import dataclasses

    import numpy as np

    from agreement.selectors.comparison import study_comparison_data
    from agreement.selectors.ratings import study_ratings
    from studies.models import Study

    study = Study.objects.get(pk=study.pk)
    study.status = Study.Status.UNBLINDED  # read as after unblinding; not saved
    data = study_comparison_data(study=study, data=study_ratings(study=study, pilot=False))
    assert data is not None, "the study has no ratings"
    raters, half = data.totals.shape[0], SYSTEMS // 2

    def relayout(matrix):
        return np.asarray(matrix, float).reshape(raters, CASES * half, 2).reshape(raters, -1)

    return dataclasses.replace(
        data,
        labels=data.labels[:2],
        case_systems=data.case_systems.reshape(CASES * half, 2),
        totals=relayout(data.totals),
        dimensions=[
            dataclasses.replace(d, matrix=relayout(d.matrix), unit_strata=[])
            for d in data.dimensions
        ],
        lengths=np.asarray(data.lengths, float).reshape(CASES * half, 2),
        confidence=np.repeat(np.asarray(data.confidence, float), half, axis=1),
        strata=[s for s in data.strata for _ in range(half)],
        adjudicated={},
    )


def robustness_runs(study, repeat: int) -> None:
    """The robustness check's job, started as the report's button starts it, run inline."""
    from django.core.cache import cache

    from agreement.analysis.jobs import analysis_job_start, analysis_shown, robustness_analysis
    from agreement.selectors import computed_for_inputs
    from jobs.models import Job
    from studies.models import Study

    study = Study.objects.get(pk=study.pk)
    walls = []
    for run in range(repeat):
        analysis = robustness_analysis(study=study)
        kept = computed_for_inputs(study=study, name="robustness")
        cache.delete(kept.key)
        Job.objects.filter(study_id=study.pk, kind=Job.Kind.ANALYSIS).delete()
        wall, cpu = time.perf_counter(), time.process_time()
        job = analysis_job_start(analysis=analysis)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        shown = analysis_shown(analysis=analysis)
        assert job is not None and isinstance(shown, dict), (job, shown)
        fits = shown["fits"]
        fitted = sum(1 for fit in fits if fit["fitted"])
        print(
            f"robustness job, run {run + 1}: {len(fits)} fits ({fitted} fitted) "
            f"{wall:.2f} s wall, {cpu:.2f} s CPU",
            flush=True,
        )
        walls.append(wall)
    print(f"robustness job: {spread(walls)} wall")


def main(args: list[str]) -> None:
    repeat = 5
    if args[:1] == ["--repeat"]:
        repeat, args = int(args[1]), args[2:]
    profile = "--profile" in args
    pairs = "--pairs" in args
    setup_django()
    from django.conf import settings
    from django.db import connection

    start = time.perf_counter()
    study = build_study()
    built = time.perf_counter() - start
    if built > 1:
        print(f"(built the study in {built:.0f} s)", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(
        f"{SYSTEMS} systems, {CASES} cases x {SYSTEMS} responses x {RATERS} raters "
        f"({CASES * SYSTEMS * RATERS} ratings), {len(DIMENSIONS)} scales; "
        f"{settings.AGREEMENT_BOOTSTRAP_RESAMPLES} resamples",
        flush=True,
    )
    walls, cpus = [], []
    for run in range(repeat):
        reblind(study)
        wall, cpu = time.perf_counter(), time.process_time()
        result = unblind(study)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        walls.append(wall)
        cpus.append(cpu)
        print(
            f"run {run + 1}: unblinding to stored analysis {wall:.2f} s wall, {cpu:.2f} s CPU",
            flush=True,
        )
    paired = [r for r in result["comparison"]["paired"] if r["stratum"] == "overall"]
    print(f"paired rows {len(paired)}")
    print(f"unblinding to stored analysis: wall {spread(walls)}; CPU {spread(cpus)}")
    if pairs:
        from agreement.analysis.outcomes import compare_systems

        data = pairs_layout(study)
        pair_walls = []
        for run in range(repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            compare_systems(data, n_resamples=settings.AGREEMENT_BOOTSTRAP_RESAMPLES, seed=7)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            print(
                f"pairs layout, run {run + 1}: the comparison alone {wall:.2f} s wall, "
                f"{cpu:.2f} s CPU",
                flush=True,
            )
            pair_walls.append(wall)
        print(f"pairs layout, the comparison alone: {spread(pair_walls)} wall")
    if "--robustness" in args:
        robustness_runs(study, repeat)
    if profile:
        reblind(study)
        profiler = cProfile.Profile()
        profiler.enable()
        unblind(study)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    arguments = sys.argv[1:]
    runs = int(arguments[1]) if arguments[:1] == ["--repeat"] else 5
    with reported("Unblinding to a stored analysis, 14 systems", runs=runs):
        main(arguments)
