"""Page statistics that take seconds run as a job a coordinator starts: a page's GET shows
them when kept for the data as they are, else the job's progress, else a Compute button."""

import threading

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from agreement.analysis import arena
from jobs.models import Job
from jobs.runner import job_threads_join
from studies import services as study_services
from studies.models import Study
from studies.services import study_create
from tests.jobs.lapse import job_heard_from_no_more

from ..factories import UserFactory, make_cases, make_study
from ..payloads import close_and_unblind


def _ranked_study(slug):
    """An unblinded study with a pairwise preference and no ratings yet: its ranking is
    computed (to say there is nothing to rank)."""
    study = study_create(slug=slug, name=slug, lead=UserFactory(), rubric_preset="pairwise")
    study_services.test_cases_add(
        study=study, systems=["baseline", "improved"], cases=make_cases(2)
    )
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    return close_and_unblind(study)


def _analysis_jobs(study):
    return Job.objects.filter(kind=Job.Kind.ANALYSIS, study_id=study.pk)


@pytest.mark.django_db
def test_the_page_computes_nothing_and_offers_a_compute_button(client, settings):
    settings.JOBS_RUN = "inline"
    study = _ranked_study("ranking-get")
    cache.clear()
    client.force_login(study.lead)
    page = client.get(reverse("agreement:ranking", args=[study.slug]))
    assert page.status_code == 200 and 'id="analysis-not-computed"' in page.text
    compute_url = reverse("agreement:ranking_compute", args=[study.slug])
    assert f'<form method="post" action="{compute_url}">' in page.text
    assert "csrfmiddlewaretoken" in page.text and 'id="job-progress"' not in page.text
    assert not _analysis_jobs(study).exists()


@pytest.mark.django_db
def test_a_ranking_there_is_nothing_to_compute_for_says_why_without_a_button(client):
    study = make_study(slug="ranking-blinded", cases=2)  # no pairwise preference, blinded
    client.force_login(study.lead)
    page = client.get(reverse("agreement:ranking", args=[study.slug]))
    assert "The rubric has no pairwise preference." in page.text
    assert "pending" not in page.context and "Compute" not in page.text


@pytest.mark.django_db
def test_the_compute_button_needs_the_csrf_token(settings):
    settings.JOBS_RUN = "inline"
    study = _ranked_study("ranking-csrf")
    client = Client(enforce_csrf_checks=True)
    client.force_login(study.lead)
    response = client.post(reverse("agreement:ranking_compute", args=[study.slug]))
    assert response.status_code == 403 and not _analysis_jobs(study).exists()


@pytest.mark.django_db(transaction=True)
def test_compute_starts_a_job_whose_progress_the_page_shows_then_the_statistics(
    client, jobs_in_threads, monkeypatch
):
    study = _ranked_study("ranking-job")
    cache.clear()
    may_finish = threading.Event()
    real = arena.study_ranking

    def held(*, study):
        may_finish.wait(timeout=60)  # until the page has been read while the job runs
        return real(study=study)

    monkeypatch.setattr(arena, "study_ranking", held)
    client.force_login(study.lead)
    url = reverse("agreement:ranking", args=[study.slug])
    pressed = client.post(reverse("agreement:ranking_compute", args=[study.slug]))
    assert pressed.status_code == 302 and pressed["Location"] == url
    job = _analysis_jobs(study).get()
    assert job.requested_by == study.lead
    running = client.get(url)
    assert 'id="job-progress"' in running.text and "js/job-progress.js" in running.text
    assert running.context["pending"] is running.context["arena"]
    assert running.context["status_url"].endswith(f"/analysis/{job.uuid}/status/")
    # A second press while it runs finds the same job.
    client.post(reverse("agreement:ranking_compute", args=[study.slug]))
    assert _analysis_jobs(study).count() == 1
    may_finish.set()
    job_threads_join()
    assert client.get(running.context["status_url"]).json()["state"] == "done"
    shown = client.get(url)
    assert shown.context["arena"]["reason"] in shown.text and "pending" not in shown.context
    # Kept for the same inputs: pressing again starts no second job.
    client.post(reverse("agreement:ranking_compute", args=[study.slug]))
    assert _analysis_jobs(study).count() == 1


@pytest.mark.django_db
def test_inline_the_compute_button_leads_to_the_statistics(client, settings):
    settings.JOBS_RUN = "inline"
    study = _ranked_study("ranking-inline")
    cache.clear()
    client.force_login(study.lead)
    page = client.post(reverse("agreement:ranking_compute", args=[study.slug]), follow=True)
    assert page.context["arena"]["reason"] in page.text and 'id="job-progress"' not in page.text
    assert _analysis_jobs(study).get().state == Job.State.DONE


@pytest.mark.django_db
def test_an_analysis_that_failed_says_why_and_is_not_run_again_for_the_same_inputs(
    client, settings, monkeypatch
):
    settings.JOBS_RUN = "inline"
    study = _ranked_study("ranking-fails")
    cache.clear()

    def broken(*, study):
        raise RuntimeError("a bug")

    monkeypatch.setattr(arena, "study_ranking", broken)
    client.force_login(study.lead)
    client.raise_request_exception = False
    compute_url = reverse("agreement:ranking_compute", args=[study.slug])
    assert client.post(compute_url).status_code == 500
    assert _analysis_jobs(study).get().state == Job.State.FAILED
    page = client.get(reverse("agreement:ranking", args=[study.slug]))
    assert page.status_code == 200 and 'id="analysis-failed"' in page.text
    assert "The analysis stopped on an error of the server." in page.text
    assert 'id="analysis-not-computed"' not in page.text
    assert client.post(compute_url).status_code == 302
    assert _analysis_jobs(study).count() == 1


@pytest.mark.django_db
def test_a_job_heard_from_no_more_is_shown_stopped_by_a_get_that_writes_nothing(
    client, settings, monkeypatch
):
    """Its progress lapsed (its process died): the page says so and offers the button, but
    leaves recording it as stopped to the press, which then runs the analysis anew."""
    settings.JOBS_RUN = "inline"
    study = _ranked_study("ranking-stopped")
    cache.clear()
    client.force_login(study.lead)
    held = []
    monkeypatch.setattr("agreement.analysis.jobs.job_schedule", lambda task, **kw: held.append(kw))
    client.post(reverse("agreement:ranking_compute", args=[study.slug]))
    job = _analysis_jobs(study).get()
    assert held and job.state == Job.State.RUNNING
    job_heard_from_no_more(job)
    page = client.get(reverse("agreement:ranking", args=[study.slug]))
    assert "The analysis stopped before it finished." in page.text
    assert 'id="analysis-not-computed"' in page.text
    job.refresh_from_db()
    assert job.state == Job.State.RUNNING  # the GET recorded nothing
    monkeypatch.undo()
    client.post(reverse("agreement:ranking_compute", args=[study.slug]))
    job.refresh_from_db()
    assert job.state == Job.State.STOPPED
    assert _analysis_jobs(study).filter(state=Job.State.DONE).count() == 1
