"""The recompute pipeline with in-process tasks; tests/agreement/test_worker.py uses a real worker."""

import json

import krippendorff
import numpy as np
import pytest
from django.urls import reverse

from agreement.models import StudyAgreement
from agreement.services import recompute as services
from agreement.services.recompute import agreement_request_recompute
from annotation.services import rating_submit
from studies.models import Membership
from tests.payloads import full_marks_payload

from ..factories import UserFactory, make_study


def payload_with_depth(factors_a: int, factors_b: int) -> dict:
    payload = full_marks_payload()
    payload["responses"]["A"]["depth"] = {"items": [{"text": f"f{i}"} for i in range(factors_a)]}
    payload["responses"]["B"]["depth"] = {"items": [{"text": f"f{i}"} for i in range(factors_b)]}
    return payload


DEPTH_POINTS = {0: 0, 1: 0, 2: 2, 3: 2, 4: 4, 5: 4, 6: 5}


@pytest.fixture
def three_raters(db):
    users = [UserFactory() for _ in range(3)]
    study = make_study(slug="pipeline", cases=4, raters=users, consented=True)
    return study, users


def submit_all(study, counts_by_rater):
    """counts_by_rater[pseudonym][case_id] = (factors in A, factors in B)."""
    for membership in study.memberships.filter(role=Membership.Role.RATER):
        for assignment in membership.assignments.select_related("test_case"):
            a, b = counts_by_rater[membership.pseudonym][assignment.test_case.case_id]
            rating_submit(assignment=assignment, payload=payload_with_depth(a, b), any_version=True)


COUNTS = {
    "R-01": {"TC-001": (1, 6), "TC-002": (2, 4), "TC-003": (6, 0), "TC-004": (4, 2)},
    "R-02": {"TC-001": (1, 5), "TC-002": (3, 4), "TC-003": (6, 1), "TC-004": (2, 2)},
    "R-03": {"TC-001": (0, 6), "TC-002": (2, 5), "TC-003": (5, 1), "TC-004": (4, 3)},
}


def oracle_depth_alpha():
    # Units are (test case, label): the same layout built by hand from what was submitted.
    rows = []
    for rater in ("R-01", "R-02", "R-03"):
        row = []
        for case in ("TC-001", "TC-002", "TC-003", "TC-004"):
            a, b = COUNTS[rater][case]
            row += [DEPTH_POINTS[a], DEPTH_POINTS[b]]
        rows.append(row)
    return krippendorff.alpha(reliability_data=np.array(rows), level_of_measurement="ordinal")


@pytest.mark.django_db(transaction=True)
def test_each_submission_triggers_a_recompute_after_commit(three_raters):
    study, _ = three_raters
    before = StudyAgreement.objects.get(study=study).requested  # the test cases' import
    submit_all(study, COUNTS)
    agreement = StudyAgreement.objects.get(study=study)
    assert agreement.requested == before + 12
    assert agreement.computed == agreement.requested
    assert agreement.n_ratings == 24
    depth = next(d for d in agreement.result["dimensions"] if d["key"] == "depth")
    assert depth["alpha"] == pytest.approx(oracle_depth_alpha(), abs=1e-6)
    assert depth["n_units"] == 8
    assert agreement.result["raters"] == ["R-01", "R-02", "R-03"]


def test_nothing_is_enqueued_before_the_rating_is_committed(
    three_raters, django_capture_on_commit_callbacks
):
    study, _ = three_raters
    assignment = study.memberships.get(pseudonym="R-01").assignments.first()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        rating_submit(assignment=assignment, payload=full_marks_payload(), expected_version=0)
    # The recompute is asked for once, when the rating commits (a webhook's milestone count
    # waits for the commit too).
    recomputes = [c for c in callbacks if getattr(c, "func", None) is agreement_request_recompute]
    assert len(recomputes) == 1
    assert not StudyAgreement.objects.filter(study=study).exists()


@pytest.mark.django_db(transaction=True)
def test_a_stale_run_never_overwrites_a_fresher_result(three_raters):
    study, _ = three_raters
    submit_all(study, COUNTS)
    agreement = StudyAgreement.objects.get(study=study)
    fresh = agreement.result
    # A result for a later request is already stored; an older run then finishes.
    StudyAgreement.objects.filter(pk=agreement.pk).update(computed=agreement.requested + 5)
    assert services.agreement_recompute(study_id=study.pk) is False
    agreement.refresh_from_db()
    assert agreement.result == fresh
    assert agreement.computed == agreement.requested + 5


@pytest.mark.django_db(transaction=True)
def test_excluded_raters_are_left_out_and_said_so(three_raters):
    study, _ = three_raters
    submit_all(study, COUNTS)
    Membership.objects.filter(study=study, pseudonym="R-03").update(
        status=Membership.Status.EXCLUDED
    )
    services.agreement_request_recompute(study_id=study.pk)
    result = StudyAgreement.objects.get(study=study).result
    assert result["raters"] == ["R-01", "R-02"]
    assert result["left_out"]["excluded_rater_ratings"] == 8


@pytest.mark.django_db(transaction=True)
def test_submit_succeeds_and_the_study_is_left_stale_when_the_broker_is_down(
    three_raters, settings, client
):
    settings.JOBS_RUN = "celery"
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    study, users = three_raters
    membership = study.memberships.get(user=users[0])
    assignment = membership.assignments.first()
    client.force_login(users[0])
    response = client.post(
        reverse("annotation:rate", args=[assignment.uuid]),
        {"payload": json.dumps(full_marks_payload()), "version": "0"},
    )
    assert response.status_code == 302
    assert assignment.ratings.count() == 2
    agreement = StudyAgreement.objects.get(study=study)
    assert agreement.is_stale
    # The broker is back (in-process here): the periodic sweep catches up.
    settings.JOBS_RUN = "inline"
    assert services.agreement_sweep() == [study.pk]
    agreement.refresh_from_db()
    assert not agreement.is_stale
    assert agreement.n_ratings == 2


def test_the_sweep_runs_periodically():
    from config.celery import app

    schedule = app.conf.beat_schedule
    assert any(e["task"] == "agreement.tasks.sweep_stale_studies" for e in schedule.values())


@pytest.mark.django_db(transaction=True)
def test_agreement_page_shows_results_to_the_lead_only(three_raters, client):
    study, users = three_raters
    submit_all(study, COUNTS)
    client.force_login(study.lead)
    page = client.get(reverse("agreement:study", args=[study.slug]))
    assert page.status_code == 200
    assert "Depth of Analysis" in page.text
    assert "<svg" in page.text
    assert f"{oracle_depth_alpha():.3f}" in page.text
    status = client.get(reverse("agreement:status", args=[study.slug])).json()
    assert status["computed"] == status["requested"]
    assert status["stale"] is False
    client.force_login(users[0])
    assert client.get(reverse("agreement:study", args=[study.slug])).status_code == 403
    client.force_login(UserFactory())
    assert client.get(reverse("agreement:study", args=[study.slug])).status_code == 404
    assert client.get(reverse("agreement:status", args=[study.slug])).status_code == 404


@pytest.mark.django_db(transaction=True)
def test_pairwise_preferences_on_flipped_screens_are_turned_back_to_the_key_order():
    from annotation.services import assignments_create_all
    from studies.models import Study
    from studies.services import membership_add, study_create, test_cases_add

    from ..factories import make_cases

    users = [UserFactory() for _ in range(2)]
    study = study_create(
        slug="pairwise", name="Pairwise", lead=UserFactory(), rubric_preset="pairwise",
        side_mode="balanced",
    )  # fmt: skip
    test_cases_add(study=study, systems=["x", "y"], cases=make_cases(6, systems=("x", "y")))
    for user in users:
        membership = membership_add(study=study, user=user, role=Membership.Role.RATER)
        assignments_create_all(study=study, rater=membership)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    # Both raters prefer the key's response A on every case ("A much better" = -2 on an
    # unflipped screen); on a flipped screen that response is shown second, as "B".
    flipped_seen = 0
    for membership in study.memberships.filter(role=Membership.Role.RATER):
        for assignment in membership.assignments.all():
            choice = 2 if assignment.flipped else -2
            flipped_seen += assignment.flipped
            rating_submit(
                assignment=assignment,
                payload={"case": {"preference": {"choice": choice}}, "confidence": "high"},
                any_version=True,
            )
    assert flipped_seen == 6  # half of each rater's six screens
    result = StudyAgreement.objects.get(study=study).result
    preference = result["dimensions"][0]
    assert preference["n_units"] == 6
    assert preference["percent_agreement"] == 1.0
