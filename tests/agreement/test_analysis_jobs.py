"""Page statistics that take seconds run as a job: the page shows its progress, then them."""

import pytest
from django.core.cache import cache
from django.urls import reverse

from jobs.models import Job
from jobs.runner import job_threads_join

from ..factories import make_study


@pytest.mark.django_db(transaction=True)
def test_the_ranking_is_computed_by_a_job_then_shown(client, jobs_in_threads):
    study = make_study(slug="ranking-job", cases=2)
    cache.clear()
    client.force_login(study.lead)
    url = reverse("agreement:ranking", args=[study.slug])
    first = client.get(url)
    assert first.status_code == 200 and 'id="job-progress"' in first.text
    assert "js/job-progress.js" in first.text and first.context["pending"] is first.context["arena"]
    job = Job.objects.get(kind=Job.Kind.ANALYSIS, study_id=study.pk)
    assert first.context["status_url"].endswith(f"/analysis/{job.uuid}/status/")
    job_threads_join()
    assert client.get(first.context["status_url"]).json()["state"] == "done"
    shown = client.get(url)
    assert shown.context["arena"]["reason"] in shown.text and 'id="job-progress"' not in shown.text
    # Kept for the same inputs: no second job.
    client.get(url)
    assert Job.objects.filter(kind=Job.Kind.ANALYSIS, study_id=study.pk).count() == 1


@pytest.mark.django_db
def test_inline_the_page_shows_the_statistics_at_once(client, settings):
    settings.JOBS_RUN = "inline"
    study = make_study(slug="ranking-inline", cases=2)
    cache.clear()
    client.force_login(study.lead)
    page = client.get(reverse("agreement:ranking", args=[study.slug]))
    assert page.context["arena"]["reason"] in page.text and 'id="job-progress"' not in page.text
    job = Job.objects.get(kind=Job.Kind.ANALYSIS, study_id=study.pk)
    assert job.state == Job.State.DONE


@pytest.mark.django_db
def test_an_analysis_that_failed_says_why_and_is_not_run_again_for_the_same_inputs(
    client, settings, monkeypatch
):
    from agreement.analysis import arena

    settings.JOBS_RUN = "inline"
    study = make_study(slug="ranking-fails", cases=2)
    cache.clear()

    def broken(*, study):
        raise RuntimeError("a bug")

    monkeypatch.setattr(arena, "study_ranking", broken)
    client.force_login(study.lead)
    client.raise_request_exception = False
    assert client.get(reverse("agreement:ranking", args=[study.slug])).status_code == 500
    job = Job.objects.get(kind=Job.Kind.ANALYSIS, study_id=study.pk)
    assert job.state == Job.State.FAILED
    page = client.get(reverse("agreement:ranking", args=[study.slug]))
    assert (
        page.status_code == 200 and "The analysis stopped on an error of the server." in page.text
    )
    assert Job.objects.filter(kind=Job.Kind.ANALYSIS, study_id=study.pk).count() == 1
