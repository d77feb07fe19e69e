"""A submit answered truthfully when PostgreSQL ends the connection (a restart, a failover,
``pg_terminate_backend``): a submission that was stored is never answered 500, and the
rating screen's retry of the same submit (the same version: its key) learns that it was
stored, without storing it twice."""

import json

import psycopg
import pytest
from django.db import connection
from django.urls import reverse

from annotation import selectors
from annotation.models import Rating, RatingRevision
from annotation.services import submission
from tests.payloads import full_marks_payload
from tests.processes import subprocess_database_url

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def assignment(membership):
    return membership.assignments.order_by("position").first()


def rate_url(assignment):
    return reverse("annotation:rate", args=[assignment.uuid])


def form(version: int) -> dict:
    return {"payload": json.dumps(full_marks_payload()), "version": str(version)}


def backend_ended() -> None:
    """What ``pg_terminate_backend`` does to this process's connection, from another."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with psycopg.connect(subprocess_database_url(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])


def stored_once(assignment) -> bool:
    assignment.refresh_from_db()
    return (
        assignment.status == "submitted"
        and Rating.objects.filter(assignment=assignment).count() == 2
        and not RatingRevision.objects.filter(assignment=assignment).exists()
    )


def following_url(membership, assignment) -> str:
    return rate_url(membership.assignments.exclude(pk=assignment.pk).order_by("position")[0])


def test_a_connection_lost_after_the_commit_still_answers_stored(
    client, rater, membership, assignment, monkeypatch
):
    real = selectors.gold_feedback

    def ended_then_read(**kwargs):
        monkeypatch.setattr(selectors, "gold_feedback", real)
        backend_ended()  # the rating is committed; the next page's reads lose the connection
        return real(**kwargs)

    monkeypatch.setattr(selectors, "gold_feedback", ended_then_read)
    client.force_login(rater)
    response = client.post(rate_url(assignment), form(0))
    assert response.status_code == 302
    assert response["Location"] == following_url(membership, assignment)
    assert stored_once(assignment)


def test_a_connection_lost_inside_the_submit_is_answered_by_storing_it_once(
    client, rater, membership, assignment, monkeypatch
):
    real = submission._submissions_store

    def stored_then_ended(**kwargs):
        monkeypatch.setattr(submission, "_submissions_store", real)
        real(**kwargs)
        backend_ended()  # before the commit: the request cannot know what was kept

    monkeypatch.setattr(submission, "_submissions_store", stored_then_ended)
    client.force_login(rater)
    response = client.post(rate_url(assignment), form(0))
    assert response.status_code == 302
    assert response["Location"] == following_url(membership, assignment)
    assert stored_once(assignment)


def test_the_screens_retry_of_a_stored_submit_learns_it_was_stored(
    client, rater, membership, assignment
):
    client.force_login(rater)
    first = client.post(rate_url(assignment), form(0))
    assert first.status_code == 302
    # Its answer was lost on the way (a 500, a cut connection): the browser sends the
    # same form again, with the version the page was opened at.
    retry = client.post(rate_url(assignment), form(0), follow=True)
    assert retry.redirect_chain[0] == (following_url(membership, assignment), 302)
    said = [str(message) for message in retry.context["messages"]]
    assert "Case 1 submitted." in said and not any("revision" in m for m in said)
    assert stored_once(assignment)


def test_a_failing_after_commit_check_does_not_turn_a_stored_submit_into_a_500(
    client, rater, membership, assignment, monkeypatch
):
    """The webhook milestone check runs after the commit and may lose the connection: its
    failure is logged, and the rater is told the truth (it was a 500: Django could not name
    the callback in its log)."""
    from django.db import OperationalError

    from studies.services import webhooks

    def lost(study_id):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(webhooks, "_webhooks_of", lost)
    client.force_login(rater)
    response = client.post(rate_url(assignment), form(0))
    assert response.status_code == 302
    assert response["Location"] == following_url(membership, assignment)
    assert stored_once(assignment)


def test_the_database_away_after_the_commit_still_answers_submitted(
    client, rater, study, assignment, monkeypatch
):
    from django.db import OperationalError

    from core import lost_connection

    monkeypatch.setattr(lost_connection, "WAITS", (0.0, 0.0))

    def away(**kwargs):
        raise OperationalError("connection refused")  # PgBouncer restarting

    monkeypatch.setattr(selectors, "gold_feedback", away)
    client.force_login(rater)
    response = client.post(rate_url(assignment), form(0))
    assert response.status_code == 302
    assert response["Location"] == reverse("annotation:assignments", args=[study.slug])
    monkeypatch.undo()  # the database is back: the case list shows the message
    said = [str(m) for m in client.get(response["Location"]).context["messages"]]
    assert said == ["Case 1 submitted."]
    assert stored_once(assignment)
