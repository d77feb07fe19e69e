"""The job runner: one setting decides where every job runs, and the runner is neutral
plumbing that imports no app."""

import ast
from pathlib import Path

import pytest
from celery import shared_task
from django.core.exceptions import ImproperlyConfigured

from jobs import runner
from jobs import services as job_services
from jobs.models import Job
from tests.jobs.lapse import job_heard_from_no_more

ROOT = Path(__file__).resolve().parents[2]
PROJECT = {"studies", "annotation", "agreement", "config", "core"}

ran: list[int] = []


@shared_task
def record_run(value: int) -> None:
    ran.append(value)


@pytest.fixture(autouse=True)
def _nothing_ran():
    ran.clear()


def project_imports(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names & PROJECT


def test_the_runner_imports_no_app():
    offending = {
        str(path.relative_to(ROOT)): sorted(project_imports(path.read_text(encoding="utf-8")))
        for path in sorted((ROOT / "jobs").rglob("*.py"))
        if project_imports(path.read_text(encoding="utf-8"))
    }
    assert offending == {}


def test_the_import_check_catches_a_planted_import():
    planted = "from django.db import models\ndef f():\n    from studies.models import Study\n"
    assert project_imports(planted) == {"studies"}


def test_inline_runs_the_task_inside_the_call(settings):
    settings.JOBS_RUN = "inline"
    assert runner.job_schedule(record_run, args=[1], countdown=5)
    assert ran == [1]


@pytest.mark.django_db
def test_a_thread_runs_the_task_after_commit(settings, django_capture_on_commit_callbacks):
    settings.JOBS_RUN = "thread"
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert runner.job_schedule(record_run, args=[2])
    assert ran == [] and len(callbacks) == 1  # nothing before the commit
    callbacks[0]()
    runner.job_threads_join()
    assert ran == [2]


def test_celery_sends_the_task_and_reports_an_unreachable_broker(settings, monkeypatch):
    settings.JOBS_RUN = "celery"
    sent = []
    monkeypatch.setattr(record_run, "apply_async", lambda **kwargs: sent.append(kwargs))
    assert runner.job_schedule(record_run, args=[3], countdown=2)
    assert sent == [{"args": [3], "kwargs": {}, "countdown": 2}] and ran == []

    def down(**kwargs):
        raise ConnectionError("the broker is down")

    monkeypatch.setattr(record_run, "apply_async", down)
    told = []
    assert not runner.job_schedule(record_run, args=[4], on_unreachable=lambda: told.append(1))
    assert told == [1] and ran == []


def test_an_unknown_mode_is_refused(settings):
    settings.JOBS_RUN = "background"
    with pytest.raises(ImproperlyConfigured):
        runner.job_schedule(record_run, args=[5])
    assert ran == []


@pytest.mark.django_db
def test_one_active_job_per_study_and_kind():
    first = job_services.job_create(kind=Job.Kind.ASSIGN, study_id=1)
    assert first is not None
    assert job_services.job_create(kind=Job.Kind.ASSIGN, study_id=1) is None
    assert job_services.job_create(kind=Job.Kind.CASE_IMPORT, study_id=1) is not None
    assert job_services.job_create(kind=Job.Kind.ASSIGN, study_id=2) is not None


@pytest.mark.django_db
def test_a_job_ends_done_failed_or_stopped_with_its_message():
    done = job_services.job_create(kind=Job.Kind.ASSIGN, study_id=1)
    job_services.job_execute(job_id=done.pk, work=lambda job, report: {"n": 1})
    done.refresh_from_db()
    assert (done.state, done.result, done.error) == (Job.State.DONE, {"n": 1}, "")

    def refuse(job, report):
        raise job_services.JobFailed("Not like this.", result={"problems": ["a"]})

    failed = job_services.job_create(kind=Job.Kind.ASSIGN, study_id=1)
    job_services.job_execute(job_id=failed.pk, work=refuse)
    failed.refresh_from_db()
    assert (failed.state, failed.error, failed.result) == (
        Job.State.FAILED, "Not like this.", {"problems": ["a"]}
    )  # fmt: skip

    stopped = job_services.job_create(kind=Job.Kind.ASSIGN, study_id=1)
    job_heard_from_no_more(stopped)  # its process died
    assert job_services.job_status(job=stopped)["state"] == Job.State.STOPPED
    worked = []
    job_services.job_execute(job_id=stopped.pk, work=lambda job, report: worked.append(1))
    assert worked == []  # a stopped job's task, delivered late, does nothing
    stopped.refresh_from_db()
    assert stopped.state == Job.State.STOPPED and "nothing was assigned" in stopped.error
