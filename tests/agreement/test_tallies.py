"""The alpha tallies: updated case by case they equal a from-scratch build exactly, after
random sequences of submissions, revisions, withdrawals and exclusions, and their alpha
is the ``krippendorff`` package's."""

import random
import re
import threading

import krippendorff
import numpy as np
import pytest
from django.db import close_old_connections, connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from hypothesis import given, settings
from hypothesis import strategies as st

from agreement import selectors
from agreement.models import AgreementTallies, CaseTally, StudyAgreement, TouchedCase
from agreement.services import recompute as services
from agreement.services.tallies import case_counts, tallies_update
from agreement.stats.coincidence import Tally, unit_counts
from annotation.models import Rating
from annotation.services.participation import withdrawal_record
from studies.models import Study
from studies.services import rater_status_change

from ..factories import UserFactory, make_study
from .test_point_stage import submit
from .test_stages import request_run, stored

LEVELS = ("nominal", "ordinal", "interval", "ratio")

# A unit: its ratings (0-4 of them), values on a small scale that ratio accepts.
units = st.lists(st.integers(min_value=0, max_value=4), min_size=0, max_size=4)


@settings(max_examples=60, deadline=None)
@given(
    start=st.lists(units, min_size=2, max_size=12),
    changes=st.lists(st.tuples(st.integers(0, 11), units), max_size=12),
    level=st.sampled_from(LEVELS),
)
def test_a_tally_updated_unit_by_unit_equals_one_from_scratch(start, changes, level):
    data = [list(unit) for unit in start]
    tally = Tally()
    for unit in data:
        tally.add(unit_counts(unit))
    for index, new in changes:
        index %= len(data)
        tally.replace(unit_counts(data[index]), unit_counts(new))
        data[index] = list(new)
        scratch = Tally()
        for unit in data:
            scratch.add(unit_counts(unit))
        assert tally == scratch
        assert Tally.from_json(tally.to_json()) == tally
    matrix = np.full((4, len(data)), np.nan)
    for column, unit in enumerate(data):
        matrix[: len(unit), column] = unit
    alpha = tally.alpha(level)
    pairable = (~np.isnan(matrix)).sum(axis=0) >= 2
    values = matrix[:, pairable]
    if alpha is None:
        assert np.unique(values[~np.isnan(values)]).size <= 1
    else:
        expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
        assert float(alpha) == pytest.approx(expected, abs=1e-9)


def scratch_tallies(study: Study) -> tuple[dict, dict]:
    """The tallies and the cases' counts built from every rating, as a from-scratch run."""
    study = Study.objects.get(pk=study.pk)
    data = selectors.ratings.study_ratings(
        study=study,
        pilot=study.current_phase == "pilot",
        first_per_case=selectors.ratings.agreement_first_ratings(study=study),
    )
    cases = case_counts(data)
    totals = {}
    for dimension in data.dimensions:
        tally = Tally()
        for counts in cases.values():
            for unit in counts.get(dimension.key, {}).values():
                tally.add(unit)
        totals[dimension.key] = tally.to_json()
    return totals, cases, data


def run(study: Study) -> dict:
    request_run(study)
    services.agreement_point_stage(study_id=study.pk)
    return stored(study).result


def check(study: Study, result: dict) -> None:
    totals, cases, data = scratch_tallies(study)
    tallies = AgreementTallies.objects.get(study=study)
    assert tallies.totals == totals
    assert tallies.n_ratings == data.n_ratings == stored(study).n_ratings
    # The stored result's inputs are the study's: the result is not out of date.
    assert stored(study).inputs == selectors.analysis_inputs(study=Study.objects.get(pk=study.pk))
    kept = {r.test_case_id: r.counts for r in CaseTally.objects.filter(study=study) if r.counts}
    assert kept == {
        case: {k: {label: {repr(v): n for v, n in u.items()} for label, u in c.items()}
            for k, c in counts.items()}
        for case, counts in cases.items()
    }  # fmt: skip
    for row, dimension in zip(result["dimensions"], data.dimensions, strict=True):
        present = ~np.isnan(dimension.matrix)
        if np.unique(dimension.matrix[present & (present.sum(axis=0) >= 2)]).size > 1:
            expected = krippendorff.alpha(
                reliability_data=dimension.matrix, level_of_measurement=dimension.level
            )
            assert row["alpha"] == pytest.approx(expected, abs=1e-6)
        tally = Tally.from_json(totals[dimension.key])
        assert row["n_units"] == tally.n_units == int((present.sum(axis=0) >= 2).sum())
        assert row["n_judgments"] == int(present.sum())


@pytest.mark.parametrize(
    ("seed", "adaptive"), [(1, False), (2, False), (3, False), (4, True), (5, True)]
)
def test_incremental_runs_equal_from_scratch_through_random_sequences(db, seed, adaptive, settings):
    """``adaptive``: agreement reads the first two ratings of each case (k_min = 2 of 4),
    which a submission, a withdrawal or an exclusion may change."""
    settings.AGREEMENT_FULL_SECONDS = 3600
    settings.AGREEMENT_INCREMENTAL_MIN_RATINGS = 0
    rng = random.Random(seed)
    users = [UserFactory() for _ in range(5)]
    study = make_study(slug=f"tally-{seed}", cases=5, raters=users, consented=True)
    if adaptive:
        Study.objects.filter(pk=study.pk).update(raters_per_item=2, raters_per_item_max=4)
        study.refresh_from_db()
    raters = [f"R-0{i}" for i in range(1, 6)]
    cases = [f"TC-00{i}" for i in range(1, 6)]
    submit(study, rater="R-01")
    submit(study, rater="R-02")
    check(study, run(study))
    kinds, beyond = [], []
    for _ in range(25):
        action = rng.choices(["submit", "withdraw", "exclude"], weights=[8, 1, 1])[0]
        active = list(
            study.memberships.filter(pseudonym__in=raters, status="active").values_list(
                "pseudonym", flat=True
            )
        )
        if action == "submit" and active:
            chosen = set(rng.sample(cases, rng.randint(1, 3)))
            submit(study, rater=rng.choice(active), cases=chosen, n=rng.randint(0, 9))
        elif action == "withdraw" and len(active) > 2:
            membership = study.memberships.get(pseudonym=rng.choice(active))
            withdrawal_record(rater=membership, data="delete")
        elif action == "exclude":
            membership = study.memberships.get(pseudonym=rng.choice(raters))
            change = "reinstate" if membership.status == "excluded" else "exclude"
            if membership.status in ("active", "excluded"):
                rater_status_change(
                    membership=membership, action=change, reason="Checked.", actor=study.lead
                )
        result = run(study)
        kinds.append("incremental" in result)
        check(study, result)
        if adaptive:
            beyond.append(scratch_tallies(study)[2].left_out["beyond_k_min_ratings"])
    assert any(kinds), "no run was incremental"
    assert not TouchedCase.objects.filter(study=study).exists()
    if adaptive:  # the first two of some case were chosen among more
        assert any(beyond)


def test_an_incremental_run_reads_only_the_touched_cases(db, settings):
    settings.AGREEMENT_FULL_SECONDS = 3600
    settings.AGREEMENT_INCREMENTAL_MIN_RATINGS = 0
    users = [UserFactory() for _ in range(3)]
    study = make_study(slug="touched", cases=6, raters=users, consented=True)
    for rater in ("R-01", "R-02", "R-03"):
        submit(study, rater=rater)
    run(study)
    submit(study, rater="R-02", cases={"TC-003"}, n=4)
    case = study.test_cases.get(case_id="TC-003").pk
    with CaptureQueriesContext(connection) as queries:
        result = run(study)
    assert "incremental" in result
    reads = [q["sql"] for q in queries if 'FROM "annotation_rating"' in q["sql"]]
    # The touched case's ratings (by case, then their answers by id), nothing else.
    own = set(Rating.objects.filter(assignment__test_case_id=case).values_list("pk", flat=True))

    def restricted(sql: str) -> bool:
        by_id = re.search(r'"annotation_rating"\."id" IN \(([\d, ]+)\)', sql)
        if by_id:
            return {int(pk) for pk in by_id.group(1).split(",")} <= own
        return f'"test_case_id" IN ({case})' in sql

    assert reads and all(restricted(sql) for sql in reads), reads
    check(study, result)


def test_a_structural_change_rebuilds_from_scratch(db, settings):
    settings.AGREEMENT_FULL_SECONDS = 3600
    settings.AGREEMENT_INCREMENTAL_MIN_RATINGS = 0
    users = [UserFactory() for _ in range(3)]
    study = make_study(slug="structural", cases=4, raters=users, consented=True)
    for rater in ("R-01", "R-02", "R-03"):
        submit(study, rater=rater)
    run(study)
    rater_status_change(
        membership=study.memberships.get(pseudonym="R-03"),
        action="exclude",
        reason="Too fast.",
        actor=study.lead,
    )
    assert AgreementTallies.objects.get(study=study).built_for == {}
    result = run(study)
    assert "incremental" not in result
    check(study, result)


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(
    connection.vendor == "sqlite",
    reason="SQLite's test database is in memory with a shared cache, whose table locks fail "
    "at once rather than wait; SQLite has one writer at a time, which serialises updates",
)
def test_concurrent_updates_lose_nothing(settings):
    settings.AGREEMENT_FULL_SECONDS = 3600
    settings.AGREEMENT_INCREMENTAL_MIN_RATINGS = 0
    users = [UserFactory() for _ in range(4)]
    study = make_study(slug="concurrent", cases=6, raters=users, consented=True)
    for rater in ("R-01", "R-02"):
        submit(study, rater=rater)
    run(study)
    built_for = selectors.analysis_inputs_but_ratings(study=Study.objects.get(pk=study.pk))
    # Two raters' submissions, each followed by an update in its own thread at once.
    barrier = threading.Barrier(2)
    errors = []

    def rate(rater):
        try:
            submit(study, rater=rater, n=3)
            barrier.wait(timeout=60)
            tallies_update(study=Study.objects.get(pk=study.pk), built_for=built_for)
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)
        finally:
            close_old_connections()

    threads = [threading.Thread(target=rate, args=(r,)) for r in ("R-03", "R-04")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    tallies_update(study=Study.objects.get(pk=study.pk), built_for=built_for)
    totals, _, data = scratch_tallies(study)
    tallies = AgreementTallies.objects.get(study=study)
    assert tallies.totals == totals
    assert tallies.n_ratings == data.n_ratings
    assert StudyAgreement.objects.filter(study=study).exists()


def test_intervals_of_a_from_scratch_run_join_the_update_made_meanwhile(db, settings):
    settings.AGREEMENT_FULL_SECONDS = 3600
    settings.AGREEMENT_INCREMENTAL_MIN_RATINGS = 0
    settings.AGREEMENT_BOOTSTRAP_RESAMPLES = 200
    users = [UserFactory() for _ in range(3)]
    study = make_study(slug="merge", cases=5, raters=users, consented=True)
    for rater in ("R-01", "R-02", "R-03"):
        submit(study, rater=rater)
    request_run(study)
    stage = services.agreement_point_stage(study_id=study.pk)
    assert stage is not None
    # A revision is applied from the tallies before the bootstrap of that run ends.
    submit(study, rater="R-01", cases={"TC-002"}, n=5)
    fresh = run(study)
    assert fresh["incremental"]["full_request"] == stage.target
    assert services.agreement_interval_stage(stage=stage) is True
    merged = stored(study).result
    assert "intervals_pending" not in merged and merged["bootstrap"]["n_resamples"] == 200
    for row, before in zip(merged["dimensions"], fresh["dimensions"], strict=True):
        assert row["alpha"] == before["alpha"]  # the update's alpha stays
        assert row["n_resamples"] == 200
    check(study, merged)


def test_a_from_scratch_run_finds_the_tallies_equal(db, caplog):
    users = [UserFactory() for _ in range(3)]
    study = make_study(slug="checked", cases=5, raters=users, consented=True)
    for rater in ("R-01", "R-02", "R-03"):
        submit(study, rater=rater)
    run(study)  # builds them
    submit(study, rater="R-02", cases={"TC-001"}, n=4)
    run(study)  # applies the touched case, then checks
    run(study)  # checks
    assert "differed from scratch" not in caplog.text
    check(study, stored(study).result)


def test_a_study_below_the_threshold_is_computed_from_scratch_every_time(db, settings):
    """A small study gets every figure fresh: no run updates it from the tallies."""
    settings.AGREEMENT_FULL_SECONDS = 3600
    users = [UserFactory() for _ in range(3)]
    study = make_study(slug="small", cases=4, raters=users, consented=True)
    for rater in ("R-01", "R-02", "R-03"):
        submit(study, rater=rater)
    run(study)
    settings.AGREEMENT_INCREMENTAL_MIN_RATINGS = stored(study).n_ratings + 100
    submit(study, rater="R-02", cases={"TC-003"}, n=4)
    assert "incremental" not in run(study)
    settings.AGREEMENT_INCREMENTAL_MIN_RATINGS = stored(study).n_ratings
    submit(study, rater="R-01", cases={"TC-002"}, n=3)
    assert "incremental" in run(study)


def test_the_pages_say_which_figures_are_fresh_between_full_runs(db, settings, client):
    """Between two runs from scratch, the agreement and QC pages name the figures that
    are from the full run, and when it was; a full run's result says nothing of it."""
    settings.AGREEMENT_FULL_SECONDS = 600
    settings.AGREEMENT_INCREMENTAL_MIN_RATINGS = 0
    users = [UserFactory() for _ in range(3)]
    study = make_study(slug="pages", cases=4, raters=users, consented=True)
    for rater in ("R-01", "R-02", "R-03"):
        submit(study, rater=rater)
    run(study)
    client.force_login(study.lead)
    pages = ("agreement:study", "agreement:qc")
    for name in pages:
        assert "data-full-run" not in client.get(reverse(name, args=[study.slug])).text
        assert "at least every" not in client.get(reverse(name, args=[study.slug])).text
    full_at = stored(study).computed_at
    submit(study, rater="R-02", cases={"TC-003"}, n=4)
    assert "incremental" in run(study)
    agreement = client.get(reverse("agreement:study", args=[study.slug])).text
    assert "data-full-run" in agreement
    assert f"full computation of {full_at:%Y-%m-%d %H:%M:%S} UTC" in agreement
    assert "at least every 10 minutes" in agreement
    qc = client.get(reverse("agreement:qc", args=[study.slug])).text
    assert f"at least every 10 minutes); last {full_at:%Y-%m-%d %H:%M} UTC" in qc
