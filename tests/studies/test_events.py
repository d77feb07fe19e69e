"""The audit trail: kinds are choices with labels, written by one function."""

import pytest

from studies.events import study_event_record
from studies.models import Study, StudyEvent

from ..factories import make_study


def test_every_kind_has_a_label_of_its_own():
    labels = [label for _, label in StudyEvent.Kind.choices]
    assert all(labels) and len(set(labels)) == len(labels)


def test_an_unknown_kind_is_refused_and_nothing_is_written(lead):
    study = make_study(lead=lead, slug="events", cases=1, status=Study.Status.DRAFT)
    before = study.events.count()
    with pytest.raises(ValueError, match="Not an audit event kind"):
        study_event_record(study=study, actor=lead, kind="renamed")
    assert study.events.count() == before


def test_an_event_keeps_its_actor_reason_and_detail(lead):
    study = make_study(lead=lead, slug="events", cases=1, status=Study.Status.DRAFT)
    event = study_event_record(
        study_id=study.pk, actor=lead, kind=StudyEvent.Kind.CLOSED, reason="Done", cases=3
    )
    event.refresh_from_db()
    assert (event.study, event.actor, event.reason, event.detail) == (
        study,
        lead,
        "Done",
        {"cases": 3},
    )
    assert event.get_kind_display() == "Study closed"


def test_an_anonymous_actor_is_recorded_as_no_one(lead):
    from django.contrib.auth.models import AnonymousUser

    study = make_study(lead=lead, slug="events", cases=1, status=Study.Status.DRAFT)
    event = study_event_record(study=study, actor=AnonymousUser(), kind=StudyEvent.Kind.OPENED)
    assert event.actor is None


def test_every_event_the_services_write_is_a_known_kind(lead, rater):
    """A whole life of a study: set-up, joining, rating decisions, closing, unblinding."""
    from studies import services
    from studies.services.unblinding import study_unblind

    study = make_study(lead=lead, slug="life", cases=2, raters=[rater], status=Study.Status.DRAFT)
    services.study_update(study=study, actor=lead, changes={"instructions": "Read carefully."})
    services.study_pilot_start(study=study, actor=lead)
    services.study_open(study=study, actor=lead, acknowledge_warnings=True)
    membership = study.memberships.get(user=rater)
    services.rater_status_change(membership=membership, action="pause", reason="x", actor=lead)
    services.study_close(study=study, actor=lead)
    study_unblind(study=study, actor=lead)
    kinds = set(study.events.values_list("kind", flat=True))
    assert kinds <= set(StudyEvent.Kind.values)
    assert {"created", "settings_changed", "pilot_started", "opened", "rater_paused",
            "closed", "unblinded"} <= kinds  # fmt: skip
