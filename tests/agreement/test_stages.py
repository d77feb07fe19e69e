"""A recompute stores the point estimates first and the bootstrap intervals right after."""

import pytest
from django.db.models import F
from django.urls import reverse

from agreement.models import StudyAgreement
from agreement.selectors import agreement_awaits_run
from agreement.services import recompute as services

from ..factories import UserFactory, make_study
from .oracle import result_from_scratch
from .test_pipeline import COUNTS, submit_all

INTERVAL_FIELDS = {"low", "high", "below", "n_resamples", "n_degenerate"}


@pytest.fixture
def three_raters(db):
    users = [UserFactory() for _ in range(3)]
    return make_study(slug="stages", cases=4, raters=users, consented=True), users


def request_run(study) -> int:
    row, _ = StudyAgreement.objects.get_or_create(study=study)
    StudyAgreement.objects.filter(pk=row.pk).update(requested=F("requested") + 1)
    return StudyAgreement.objects.get(pk=row.pk).requested


def stored(study) -> StudyAgreement:
    return StudyAgreement.objects.get(study=study)


def without_intervals(result: dict) -> dict:
    rest = {k: v for k, v in result.items() if k not in ("bootstrap", "intervals_pending")}
    rest["dimensions"] = [
        {k: v for k, v in d.items() if k not in INTERVAL_FIELDS} for d in result["dimensions"]
    ]
    return rest


def test_the_point_estimates_of_the_first_stage_are_those_of_the_full_result(three_raters):
    study, _ = three_raters
    submit_all(study, COUNTS)
    target = request_run(study)

    stage = services.agreement_point_stage(study_id=study.pk)
    first = stored(study)
    assert first.computed == target
    assert first.result["intervals_pending"] is True
    assert all(d["low"] is None and d["high"] is None for d in first.result["dimensions"])
    assert "bootstrap" not in first.result
    assert agreement_awaits_run(study_id=study.pk)  # not done until the intervals are in

    assert services.agreement_interval_stage(stage=stage) is True
    full = stored(study)
    assert full.computed == target
    assert "intervals_pending" not in full.result
    # The two stages together store exactly what one computation from scratch gives.
    expected, n_ratings = result_from_scratch(study=study)
    assert full.result == expected
    assert full.n_ratings == n_ratings == 24
    assert without_intervals(first.result) == without_intervals(full.result)
    assert all(d["low"] is not None for d in full.result["dimensions"] if d["alpha"] is not None)
    assert not agreement_awaits_run(study_id=study.pk)


def test_a_stale_first_stage_never_overwrites_a_fresher_full_result(three_raters):
    study, _ = three_raters
    submit_all(study, COUNTS)
    request_run(study)
    services.agreement_recompute(study_id=study.pk)
    fresh = stored(study)
    assert "intervals_pending" not in fresh.result
    # A run for an older request finishes after a fresher full result was stored.
    StudyAgreement.objects.filter(pk=fresh.pk).update(computed=fresh.requested + 5)
    assert services.agreement_point_stage(study_id=study.pk) is None
    assert services.agreement_recompute(study_id=study.pk) is False
    after = stored(study)
    assert after.result == fresh.result
    assert after.computed == fresh.requested + 5


def test_intervals_of_a_superseded_run_are_never_written(three_raters):
    study, _ = three_raters
    submit_all(study, COUNTS)
    request_run(study)
    old = services.agreement_point_stage(study_id=study.pk)
    # A newer run stores its result before the older one has its intervals.
    request_run(study)
    services.agreement_recompute(study_id=study.pk)
    fresher = stored(study)
    assert fresher.computed == old.target + 1
    assert services.agreement_interval_stage(stage=old) is False
    assert stored(study).result == fresher.result


def test_a_run_that_died_between_the_stages_is_completed_by_the_next(three_raters):
    study, _ = three_raters
    submit_all(study, COUNTS)
    target = request_run(study)
    services.agreement_point_stage(study_id=study.pk)  # and no interval stage
    assert services.agreement_sweep() == [study.pk]  # in-process here: it runs at once
    done = stored(study)
    assert done.computed == target
    assert "intervals_pending" not in done.result
    assert done.result == result_from_scratch(study=study)[0]


def test_the_page_shows_point_estimates_while_the_intervals_are_computed(three_raters, client):
    study, _ = three_raters
    submit_all(study, COUNTS)
    request_run(study)
    stage = services.agreement_point_stage(study_id=study.pk)
    client.force_login(study.lead)
    status = client.get(reverse("agreement:status", args=[study.slug])).json()
    assert status["intervals_pending"] is True
    assert status["computed"] == status["requested"]
    page = client.get(reverse("agreement:study", args=[study.slug])).text
    assert "intervals: computing…" in page
    depth = next(d for d in stored(study).result["dimensions"] if d["key"] == "depth")
    assert f"{depth['alpha']:.3f}" in page
    services.agreement_interval_stage(stage=stage)
    status = client.get(reverse("agreement:status", args=[study.slug])).json()
    assert status["intervals_pending"] is False
    assert "computing" not in client.get(reverse("agreement:study", args=[study.slug])).text


@pytest.mark.parametrize("pending", [True, False])
def test_the_status_page_carries_the_pending_flag_for_the_refresh(three_raters, client, pending):
    study, _ = three_raters
    submit_all(study, COUNTS)
    request_run(study)
    stage = services.agreement_point_stage(study_id=study.pk)
    if not pending:
        services.agreement_interval_stage(stage=stage)
    client.force_login(study.lead)
    page = client.get(reverse("agreement:study", args=[study.slug])).text
    assert f'data-intervals-pending="{"true" if pending else "false"}"' in page


def test_a_revised_rating_is_read_again_and_the_result_equals_one_from_scratch(three_raters):
    from agreement import selectors

    study, _ = three_raters
    submit_all(study, COUNTS)
    request_run(study)
    services.agreement_recompute(study_id=study.pk)  # the answers' values are kept now
    revised = dict(COUNTS, **{"R-01": {**COUNTS["R-01"], "TC-001": (6, 0)}})
    submit_all(study, revised)
    request_run(study)
    services.agreement_recompute(study_id=study.pk)
    kept = stored(study).result
    selectors.ratings._ANSWER_VALUES.clear()  # from scratch: every answer read again
    assert kept == result_from_scratch(study=study)[0]
    depth = next(d for d in kept["dimensions"] if d["key"] == "depth")
    assert depth["per_rater"][0]["n_ratings"] == 8
    previous = result_from_scratch(study=study)[0]
    submit_all(study, COUNTS)
    assert result_from_scratch(study=study)[0] != previous
