"""The stored statistics follow every change of their inputs, and never pass for fresh when
they are not: the level of a dimension during the pilot, opening the study, exclusions."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from agreement.models import StudyAgreement
from agreement.selectors import agreement_is_stale, study_agreement
from agreement.services import recompute
from agreement.services.recompute import agreement_sweep
from annotation.services import rating_submit
from studies.models import Dimension, Membership, Study
from studies.services import (
    dimension_delete,
    dimension_level_set,
    dimension_move,
    rater_status_change,
    study_open,
)
from studies.services.tokens import api_token_create
from tests.payloads import full_marks_payload

from ..factories import UserFactory, make_study

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def pilot():
    raters = [UserFactory(), UserFactory()]
    study = make_study(slug="fresh", cases=3, raters=raters, status=Study.Status.PILOT)
    for membership in study.memberships.filter(role=Membership.Role.RATER):
        for assignment in membership.assignments.all():
            rating_submit(assignment=assignment, payload=full_marks_payload(), any_version=True)
    return study


def depth(agreement: StudyAgreement) -> dict:
    return next(d for d in agreement.result["dimensions"] if d["key"] == "depth")


def test_a_level_change_during_the_pilot_is_recomputed(pilot):
    before = StudyAgreement.objects.get(study=pilot)
    assert depth(before)["level"] == "ordinal"
    assert not agreement_is_stale(study=pilot, agreement=before)
    dimension_level_set(study=pilot, actor=pilot.lead, key="depth", level="nominal")
    after = StudyAgreement.objects.get(study=pilot)
    assert after.requested > before.requested
    assert depth(after)["level"] == "nominal"
    assert not agreement_is_stale(study=pilot, agreement=after)


def test_opening_the_study_recomputes_it_as_the_main_phase(pilot):
    assert StudyAgreement.objects.get(study=pilot).result["phase"] == "pilot"
    opened = study_open(study=pilot, actor=pilot.lead, acknowledge_warnings=True)
    agreement = StudyAgreement.objects.get(study=pilot)
    assert agreement.result["phase"] == "main"
    # The pilot's ratings are left out of the main study, and said to be.
    assert agreement.result["left_out"]["other_phase_ratings"] == 12
    assert not agreement_is_stale(study=opened, agreement=agreement)


def test_excluding_a_rater_is_recomputed(pilot):
    admin = UserFactory(is_staff=True)
    rater = pilot.memberships.get(pseudonym="R-02")
    rater_status_change(membership=rater, action="exclude", reason="Careless.", actor=admin)
    agreement = StudyAgreement.objects.get(study=pilot)
    assert agreement.result["raters"] == ["R-01"]
    assert agreement.result["left_out"]["excluded_rater_ratings"] == 6


def test_a_change_that_was_not_announced_is_shown_as_stale_and_swept(pilot, client):
    # Written past the services (as an edit in the database would be): nothing announced it.
    Dimension.objects.filter(rubric=pilot.rubric, key="depth").update(level="interval")
    agreement = StudyAgreement.objects.get(study=pilot)
    assert agreement.requested == agreement.computed
    assert agreement_is_stale(study=pilot, agreement=agreement)

    client.force_login(pilot.lead)
    status = client.get(reverse("agreement:status", args=[pilot.slug])).json()
    assert status["stale"] is True
    # Asking about it requested nothing; Celery beat's sweep finds the changed inputs.
    assert StudyAgreement.objects.get(study=pilot).requested == agreement.requested
    assert agreement_sweep() == [pilot.pk]  # in-process here: the run happens at once
    agreement.refresh_from_db()
    assert depth(agreement)["level"] == "interval"
    assert not agreement_is_stale(study=pilot, agreement=agreement)
    page = client.get(reverse("agreement:study", args=[pilot.slug]))
    assert "Out of date" not in page.content.decode()
    assert agreement_sweep() == []


WRITES = ("INSERT", "UPDATE", "DELETE")


def test_reading_a_stale_result_changes_no_row_and_enqueues_nothing(pilot, client, monkeypatch):
    Dimension.objects.filter(rubric=pilot.rubric, key="depth").update(level="interval")
    before = StudyAgreement.objects.values().get(study=pilot)
    enqueued = []
    monkeypatch.setattr(recompute, "agreement_enqueue", lambda **kwargs: enqueued.append(kwargs))
    client.force_login(pilot.lead)
    _, secret = api_token_create(user=pilot.lead, name="tests")
    bearer = {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
    # The token's first use records when it was used: done here, before the reads counted.
    assert client.get(reverse("api:agreement", args=[pilot.slug]), **bearer).status_code == 200
    with CaptureQueriesContext(connection) as queries:
        page = client.get(reverse("agreement:study", args=[pilot.slug]))
        status = client.get(reverse("agreement:status", args=[pilot.slug])).json()
        api = client.get(reverse("api:agreement", args=[pilot.slug]), **bearer).json()
    assert "Out of date" in page.content.decode()
    assert status["stale"] is True and api["stale"] is True
    writes = [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith(WRITES)]
    assert writes == []
    assert StudyAgreement.objects.values().get(study=pilot) == before
    assert enqueued == []


def test_the_page_says_out_of_date_while_a_recompute_is_pending(pilot, client):
    StudyAgreement.objects.filter(study=pilot).update(requested=99)
    client.force_login(pilot.lead)
    page = client.get(reverse("agreement:study", args=[pilot.slug]))
    assert "Out of date" in page.content.decode()


def test_every_rubric_change_before_rating_requests_a_recompute():
    # The rubric can change only until raters start; its dimensions are analysis inputs.
    study = make_study(slug="draft-rubric", cases=2, status=Study.Status.PILOT)
    changes = [
        lambda: dimension_move(study=study, actor=study.lead, key="depth", offset=1),
        lambda: dimension_delete(study=study, actor=study.lead, key="depth"),
    ]
    for change in changes:
        before = study_agreement(study=study).requested
        change()
        after = StudyAgreement.objects.get(study=study)
        assert after.requested > before
        assert not agreement_is_stale(study=study, agreement=after)  # in-process: it ran
