"""A real Celery worker, Redis and PostgreSQL: submissions through the views produce fresh results."""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
import redis
from celery.signals import after_task_publish
from django.conf import settings as django_settings
from django.urls import reverse

from agreement import selectors
from agreement.models import StudyAgreement
from agreement.services import recompute as services
from annotation.services import rating_submit
from config.celery import app as celery_app
from tests.payloads import full_marks_payload
from tests.processes import subprocess_database_url

from ..factories import UserFactory, make_study
from .oracle import result_from_scratch

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]


def start_worker(queue: str, *, resamples: int = 2000) -> subprocess.Popen:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": subprocess_database_url(),
        "JOBS_RUN": "celery",
        "CELERY_QUEUE": queue,
        "AGREEMENT_BOOTSTRAP_RESAMPLES": str(resamples),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-P", "solo", "-Q", queue,
         "--without-gossip", "--without-mingle", "--without-heartbeat", "--loglevel=INFO",
         "-n", f"{uuid.uuid4().hex[:8]}@%h"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


def stop_worker(process: subprocess.Popen) -> str:
    process.terminate()
    try:
        output, _ = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
    return output


@pytest.fixture
def queue(settings):
    """A queue of the test's own, against the test database, that tasks are routed to."""
    name = f"concord-test-{uuid.uuid4().hex[:8]}"
    client = redis.Redis.from_url(django_settings.REDIS_URL)
    for key in client.scan_iter("concord:agreement:*"):
        client.delete(key)
    # Read before changing the settings: Celery's configuration reads them lazily.
    previous = celery_app.conf.task_default_queue
    settings.JOBS_RUN = "celery"
    settings.AGREEMENT_BOOTSTRAP_RESAMPLES = 2000
    celery_app.conf.task_default_queue = name
    try:
        yield name
    finally:
        celery_app.conf.task_default_queue = previous
        client.delete(name)
        # A killed worker's message waits in the broker's unacked set: drop it with the queue.
        for tag, message in client.hgetall("unacked").items():
            if json.loads(message)[2] == name:
                client.hdel("unacked", tag)
                client.zrem("unacked_index", tag)


@pytest.fixture
def workers(queue, request):
    """Start workers (one, or ``request.param``) on the test's queue. Yields the processes;
    their output is kept on them."""
    processes = [start_worker(queue) for _ in range(getattr(request, "param", 1))]
    try:
        yield processes
    finally:
        for process in processes:
            process.output = stop_worker(process)
            print(process.output[-4000:])


@pytest.fixture
def worker(workers):
    return workers[0]


def wait_until_fresh(study, *, timeout=60.0) -> StudyAgreement:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        agreement = StudyAgreement.objects.filter(study=study).first()
        # Fresh and complete: the point estimates are stored first, the intervals after.
        complete = agreement and not agreement.result.get("intervals_pending")
        if complete and agreement.computed and not agreement.is_stale:
            return agreement
        time.sleep(0.2)
    raise AssertionError(f"no fresh result within {timeout} s: {agreement and vars(agreement)}")


def test_ratings_submitted_through_the_views_produce_a_fresh_result(worker, client):
    rater = UserFactory()
    study = make_study(slug="worker-views", cases=3, raters=[rater, UserFactory()], consented=True)
    before = StudyAgreement.objects.get(study=study).requested  # the test cases' import
    client.force_login(rater)
    for assignment in study.memberships.get(user=rater).assignments.all():
        response = client.post(
            reverse("annotation:rate", args=[assignment.uuid]),
            {"payload": json.dumps(full_marks_payload()), "version": "0"},
        )
        assert response.status_code == 302
    agreement = wait_until_fresh(study)
    assert agreement.requested == before + 3
    assert agreement.n_ratings == 6
    assert agreement.result["raters"] == ["R-01"]


LOG_LINE = re.compile(
    r"^\[(?P<at>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}): INFO/[^\]]*\] (?P<message>.*)$"
)


RECEIVED = re.compile(r"^Task agreement\.tasks\.recompute_study\[(?P<id>[0-9a-f-]+)\] received$")


def timeline(outputs: list[str], study_id: int) -> list[tuple[str, str]]:
    """(time, event) for the study from the workers' logs, in order: "received" (a task
    reached a worker), "picked" (a task began), "start" and "end" (a run of the statistics).
    At equal times a task's beginning sorts before another's arrival, as it happened.

    A message that reaches a second worker is not a second task: a worker stopping with a
    message it had prefetched but not begun gives it back to the broker, and another worker
    receives it again. Only its first arrival counts."""
    events = []
    order = {"end": 0, "picked": 1, "start": 2, "received": 3}
    arrivals: dict[str, str] = {}
    for output in outputs:
        for line in output.splitlines():
            match = LOG_LINE.match(line)
            if match and (received := RECEIVED.match(match["message"])):
                arrivals[received["id"]] = min(arrivals.get(received["id"], "~"), match["at"])
    events.extend((at, "received") for at in arrivals.values())
    for output in outputs:
        for line in output.splitlines():
            match = LOG_LINE.match(line)
            if not match:
                continue
            message = match["message"]
            if message == f"Agreement task for study {study_id} picked up":
                event = "picked"
            elif message == f"Agreement run for study {study_id} started":
                event = "start"
            elif message.startswith(f"Agreement run for study {study_id} finished"):
                event = "end"
            else:
                continue
            events.append((match["at"], event))
    return sorted(events, key=lambda e: (e[0], order[e[1]]))


@pytest.mark.parametrize("workers", [2], indirect=True)
def test_a_burst_of_one_hundred_submissions_is_coalesced(workers):
    raters = [UserFactory() for _ in range(5)]
    study = make_study(slug="worker-burst", cases=20, raters=raters)
    assignments = [a for m in study.memberships.all() for a in m.assignments.all()]
    assert len(assignments) == 100
    before = StudyAgreement.objects.get(study=study).requested  # the test cases' import
    for assignment in assignments:
        rating_submit(assignment=assignment, payload=full_marks_payload(), expected_version=0)
    agreement = wait_until_fresh(study)
    # Every request is covered by a run that started after it: the result is the final one.
    assert agreement.requested == before + 100
    assert agreement.computed == agreement.requested
    assert agreement.n_ratings == 200
    expected, _ = result_from_scratch(study=study)
    assert agreement.result == json.loads(json.dumps(expected))

    for process in workers:
        process.output = stop_worker(process)
    events = timeline([process.output for process in workers], study.pk)
    runs = sum(1 for _, event in events if event == "start")
    assert runs == agreement.runs >= 1
    running = waiting = 0
    for at, event in events:
        if event == "received":
            waiting += 1
        elif event == "picked":
            waiting -= 1
        elif event == "start":
            running += 1
        elif event == "end":
            running -= 1
        # Never two runs of the study at once, and never more than one task waiting.
        assert running <= 1, f"two runs at once at {at}"
        assert waiting <= 1, f"{waiting} tasks waiting at {at}"
    assert running == 0


def test_nothing_is_lost_when_the_broker_is_down_at_submit_time(worker, settings, client):
    rater = UserFactory()
    study = make_study(slug="worker-outage", cases=2, raters=[rater], consented=True)
    wait_until_fresh(study)  # the test cases' import is computed before the outage
    working_url = settings.REDIS_URL
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # a closed port
    client.force_login(rater)
    for assignment in study.memberships.get(user=rater).assignments.all():
        response = client.post(
            reverse("annotation:rate", args=[assignment.uuid]),
            {"payload": json.dumps(full_marks_payload()), "version": "0"},
        )
        assert response.status_code == 302
    agreement = StudyAgreement.objects.get(study=study)
    assert agreement.is_stale and agreement.computed < agreement.requested
    assert study.test_cases.filter(assignments__ratings__isnull=False).distinct().count() == 2
    # The broker is back: the periodic sweep enqueues the study and the worker catches up.
    settings.REDIS_URL = working_url
    assert services.agreement_sweep() == [study.pk]
    agreement = wait_until_fresh(study)
    assert agreement.n_ratings == 4


class LiveOutput:
    """The worker's output as it comes, read by a thread so the test can wait for a line."""

    def __init__(self, process: subprocess.Popen):
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, args=(process,), daemon=True)
        self._reader.start()

    def _read(self, process: subprocess.Popen) -> None:
        for line in process.stdout:
            self.lines.append(line)

    def wait_for(self, text: str, *, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(text in line for line in self.lines):
                return
            time.sleep(0.05)
        raise AssertionError(f"no {text!r} within {timeout} s:\n{''.join(self.lines)[-4000:]}")

    def text(self) -> str:
        self._reader.join(timeout=20)
        return "".join(self.lines)


def test_a_worker_killed_mid_recompute_leaves_the_study_stale_only_briefly(queue):
    sent_here = []  # the tasks this process sent (the requests' and the sweep's)

    def record(sender=None, headers=None, **kwargs):
        if sender == "agreement.tasks.recompute_study":
            sent_here.append(headers["id"])

    after_task_publish.connect(record, weak=False)
    try:
        _killed_worker_scenario(queue, sent_here)
    finally:
        after_task_publish.disconnect(record)


def _killed_worker_scenario(queue: str, sent_here: list[str]) -> None:
    rater = UserFactory()
    study = make_study(slug="worker-killed", cases=10, raters=[rater, UserFactory()])
    for assignment in study.memberships.get(user=rater).assignments.all():
        rating_submit(assignment=assignment, payload=full_marks_payload(), expected_version=0)
    # Every request is in before a worker runs; a bootstrap this large keeps the run busy
    # in its second stage (the intervals, after the point estimates are stored) until it
    # is killed.
    doomed = start_worker(queue, resamples=50_000_000)
    doomed_output = LiveOutput(doomed)
    try:
        doomed_output.wait_for(f"Agreement run for study {study.pk} finished")
    finally:
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(timeout=20)
    assert f"Agreement intervals of study {study.pk} stored" not in doomed_output.text()
    agreement = StudyAgreement.objects.get(study=study)
    assert agreement.runs == 1 and agreement.result["intervals_pending"]
    assert selectors.agreement_awaits_run(study_id=study.pk)

    successor = start_worker(queue)
    try:
        # Celery beat's sweep finds the study stale: its pending claim is gone with the run.
        assert services.agreement_sweep() == [study.pk]
        agreement = wait_until_fresh(study, timeout=120)
    finally:
        successor.output = stop_worker(successor)
        print(doomed_output.text()[-3000:], successor.output[-4000:])
    assert agreement.computed == agreement.requested
    expected, n_ratings = result_from_scratch(study=study)
    assert agreement.result == json.loads(json.dumps(expected))
    assert agreement.n_ratings == n_ratings
    # The dead run did not set off a stream of re-queued tasks, however long its lock took
    # to expire: every task a worker received is one that was sent (by this process, or by
    # a run), and a run sent at most one follow-up, and a task that found the study held
    # at most one look more.
    outputs = [doomed_output.text(), successor.output]
    events = timeline(outputs, study.pk)
    assert sum(1 for _, event in events if event == "start") == 2  # the killed run and one more
    text = "".join(outputs)
    received = set(
        re.findall(r"Task agreement\.tasks\.recompute_study\[([0-9a-f-]+)\] received", text)
    )
    follow_ups = text.count(f"Agreement recompute of study {study.pk} enqueued")
    looks = text.count(f"Agreement task for study {study.pk}: a run holds the study; one more look")
    assert len(received) == len(sent_here) + follow_ups + looks
    assert set(sent_here) <= received
    assert follow_ups <= 2  # one per run at most
    picked = sum(1 for _, event in events if event == "picked")
    assert looks <= picked - looks  # only a first look sends another
