"""An erasure reaches every copy the app holds: the person's own free text (rating notes,
counted items, comments), the names coordinators gave participant links, export files
prepared before, and the access log, which never writes a join URL's vendor ids."""

import os
import re
import socket
import subprocess
import sys
import time
import uuid

import pytest
import requests
from django.utils import timezone

from annotation import export_jobs
from annotation.models import Assignment, Rating, StudyFeedback
from jobs.files import job_files_root
from studies.models import Membership
from studies.services.erasure import REDACTED, identity_erase
from tests.payloads import close_and_unblind, payload_for, study_with_systems, submit
from tests.processes import ROOT, subprocess_database_url

from ..factories import UserFactory
from .test_participant_links import arrive, make_link, vendor_url

pytestmark = pytest.mark.django_db


def anna():
    return UserFactory(username="anna.l", email="anna@example.org", first_name="Anna")


def mention_payload(n: int) -> dict:
    payload = payload_for(n, notes="Ask anna.l (anna@example.org) about case 2.")
    items = payload["responses"]["A"]["depth"]["items"]
    if items:
        items[0]["text"] = "cited anna@example.org's own blog"
    return payload


def test_the_persons_own_text_is_redacted_and_no_point_changes():
    person = anna()
    study = study_with_systems(cases=3, raters=[person, UserFactory()])
    mine = Membership.objects.get(study=study, user=person)
    for n, assignment in enumerate(mine.assignments.order_by("position"), start=1):
        submit(assignment, mention_payload(n))
    StudyFeedback.objects.create(
        rater=mine, dimensions={"depth": {"clarity": "clear", "comment": "anna.l here"}},
        notes="Write to anna@example.org", submitted_at=timezone.now(), updated_at=timezone.now(),
    )  # fmt: skip
    totals = sorted(Rating.objects.values_list("pk", "total"))
    erased = identity_erase(user=person, reason="request of 1 March")
    assert erased.counts["rating notes and answers"] >= 3
    assert erased.counts["comments"] == 1
    texts = repr(
        [
            *Assignment.objects.values_list("notes", "draft", "case_scores"),
            *Rating.objects.values_list("scores", flat=True),
            *StudyFeedback.objects.values_list("dimensions", "notes"),
        ]
    )
    assert "anna" not in texts.casefold()
    assert f"Ask {REDACTED} ({REDACTED}) about case 2." in texts
    assert f"cited {REDACTED}'s own blog" in texts
    assert sorted(Rating.objects.values_list("pk", "total")) == totals


def test_a_participant_link_named_for_the_person_loses_the_mention():
    person = anna()
    study = study_with_systems(cases=2, raters=[person])
    link = make_link(study, name="Pilot for anna@example.org")
    identity_erase(user=person, reason="request")
    link.refresh_from_db()
    assert link.name == f"Pilot for {REDACTED}"


def test_a_crowd_participants_vendor_id_is_redacted_where_a_coordinator_pasted_it(client):
    study = study_with_systems(cases=2, raters=[UserFactory()])
    link = make_link(study, name="Follow up 5f1a2b3c4d5e6f7a8b9c0d1e")
    arrive(client, link, "5f1a2b3c4d5e6f7a8b9c0d1e")
    participant = Membership.objects.get(study=study, participant__isnull=False).user
    identity_erase(user=participant, reason="request")
    link.refresh_from_db()
    assert link.name == f"Follow up {REDACTED}"


def test_export_files_prepared_before_the_erasure_are_deleted():
    person = anna()
    study = study_with_systems(cases=2, raters=[person, UserFactory()])
    for n, assignment in enumerate(Assignment.objects.filter(rater__study=study), start=1):
        submit(
            assignment, mention_payload(n) if assignment.rater.user == person else payload_for(n)
        )
    close_and_unblind(study)
    job = export_jobs.export_job_start(study=study, key="long-csv", actor=study.lead)
    stored = job_files_root() / str(job.uuid)
    assert stored.exists() and b"anna@example.org" in stored.read_bytes()
    erased = identity_erase(user=person, reason="request")
    assert erased.counts["prepared export files"] == 1
    assert not stored.exists()
    job.refresh_from_db()
    assert export_jobs.export_job_file(job=job) is None
    again = export_jobs.export_job_start(study=study, key="long-csv", actor=study.lead)
    assert b"anna" not in (job_files_root() / str(again.uuid)).read_bytes()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.django_db(transaction=True)
def test_the_access_log_never_writes_a_join_urls_vendor_ids(tmp_path):
    """gunicorn as the image runs it (config/gunicorn.py): the join request and the next
    one, whose Referer is the join URL, are logged by path only."""
    study = study_with_systems(cases=2, raters=[UserFactory()])
    link = make_link(study)
    pid, session = uuid.uuid4().hex[:24], f"S{uuid.uuid4().hex[:12]}"
    port = _free_port()
    log = tmp_path / "gunicorn.log"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": subprocess_database_url(),
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_WORKERS": "1",
        "GUNICORN_PRELOAD": "false",
    }
    with open(log, "wb") as output:
        server = subprocess.Popen(  # our own app under gunicorn
            [sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.py", "config.wsgi"],
            cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                requests.get(f"{base}/healthz/live", timeout=5)
                break
            except requests.RequestException:
                assert time.monotonic() < deadline and server.poll() is None, log.read_text()
                time.sleep(0.2)
        joined = requests.get(base + vendor_url(link, pid, session), timeout=30)
        assert joined.status_code == 200
        requests.get(
            f"{base}/healthz/live", headers={"Referer": base + vendor_url(link, pid, session)},
            timeout=30,
        )  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=30)
    written = log.read_text()
    join_path = re.escape(f"/p/{link.token}/")
    assert re.search(rf'"GET {join_path} HTTP/1.1" 200', written), written
    assert pid not in written and session not in written and "PROLIFIC_PID" not in written
