"""The report's robustness check through the API, as the report page's Compute button:
refused before unblinding (it names the systems) with no job started; after it, a POST
runs the job and the answer is the report's own result."""

import pytest
from django.core.cache import cache

from agreement.report.sections import study_report
from jobs.models import Job
from tests.payloads import SYSTEMS, close_and_unblind, study_with_systems, submit_all

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def rated_study(settings):
    settings.AGREEMENT_BOOTSTRAP_RESAMPLES = 200
    study = study_with_systems(cases=6, consented=True)
    submit_all(study)
    cache.clear()
    return study


def _jobs(study):
    return Job.objects.filter(kind=Job.Kind.ANALYSIS, study_id=study.pk, name__startswith="robust")


def test_before_unblinding_it_is_refused_and_nothing_runs(rated_study, api_as):
    api = api_as(rated_study.lead)
    url = f"studies/{rated_study.slug}/report/robustness/"
    read = api("GET", url).json()
    assert read["state"] == "unavailable" and "once the study is unblinded" in read["reason"]
    refused = api("POST", url)
    assert refused.status_code == 400
    assert "once the study is unblinded" in refused.json()["error"]["message"]
    assert not _jobs(rated_study).exists()


def test_after_unblinding_a_post_computes_it_as_the_report_shows_it(rated_study, api_as):
    close_and_unblind(rated_study)
    api = api_as(rated_study.lead)
    url = f"studies/{rated_study.slug}/report/robustness/"
    assert api("GET", url).json()["state"] == "not_computed"
    assert not _jobs(rated_study).exists()  # a GET starts nothing
    computed = api("POST", url)  # in the tests the job runs inside the request
    assert computed.status_code == 200, computed.content
    body = computed.json()
    assert body["state"] == "computed" and _jobs(rated_study).get().state == Job.State.DONE
    assert api("GET", url).json() == body
    check = body["robustness"]
    assert check["available"]
    total = next(fit for fit in check["fits"] if fit["measure"] == "total")
    assert {total["first"], total["second"]} == set(SYSTEMS)
    # The report reads the same kept result, beside the primary estimates.
    rated_study.refresh_from_db()
    report = study_report(study=rated_study)["robustness"]
    assert report["computed"] and report["alpha"] == check["alpha"]
    shown = next(row for row in report["rows"] if row["measure"] == "total")
    assert (shown["first"], shown["second"]) == (total["first"], total["second"])
