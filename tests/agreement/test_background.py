"""The embedded default recomputes after the response, never inside a rater's request."""

import json
import threading
import time

import pytest
from django.urls import reverse

from agreement.models import StudyAgreement
from agreement.services import recompute as services
from tests.payloads import full_marks_payload

from ..factories import UserFactory, make_study

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_submission_returns_before_its_recompute_runs(
    client, settings, monkeypatch, jobs_in_threads
):
    settings.AGREEMENT_DEBOUNCE_SECONDS = 0.2
    rater = UserFactory()
    study = make_study(slug="after-response", cases=3, raters=[rater], consented=True)
    runs = []
    recompute = services.agreement_point_stage

    def recording(*, study_id):
        runs.append(threading.get_ident())
        return recompute(study_id=study_id)

    monkeypatch.setattr(services, "agreement_point_stage", recording)
    client.force_login(rater)
    before = len(runs)
    for assignment in study.memberships.get(user=rater).assignments.all():
        response = client.post(
            reverse("annotation:rate", args=[assignment.uuid]),
            {"payload": json.dumps(full_marks_payload()), "version": "0"},
        )
        assert response.status_code == 302
    request_thread = threading.get_ident()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        agreement = StudyAgreement.objects.get(study=study)
        if agreement.n_ratings == 6 and agreement.computed == agreement.requested:
            break
        time.sleep(0.1)
    assert agreement.n_ratings == 6 and agreement.computed == agreement.requested
    assert len(runs) > before
    assert request_thread not in runs


def test_a_run_queued_for_a_study_deleted_meanwhile_does_nothing():
    study = make_study(cases=2, raters=[UserFactory()])
    study_id = study.pk
    study.delete()

    assert services.agreement_point_stage(study_id=study_id) is None
    assert not StudyAgreement.objects.filter(study_id=study_id).exists()
