"""The results through the API, as a pipeline reads them: the ranking (computed as a job, as
its page does), the report as JSON and the bundle, each equal to what the page shows, and
nothing that names a system before unblinding."""

import io
import json
import zipfile

import pytest
from django.urls import reverse

from agreement.report.sections import study_report
from agreement.stats.ranking import RANKING_RESAMPLES
from jobs.models import Job
from tests.agreement.test_arena import QUALITY
from tests.agreement.test_arena import arena as arena  # the fixture: four systems, 3 raters
from tests.agreement.test_report_defects import _rate_with_upsets
from tests.payloads import close_and_unblind

pytestmark = pytest.mark.django_db(transaction=True)


def _zip(response) -> dict[str, bytes]:
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _as_json(value):
    return json.loads(json.dumps(value, default=str))


def test_the_ranking_the_report_and_the_bundle_through_the_api(client, arena, api_as, settings):
    settings.AGREEMENT_BOOTSTRAP_RESAMPLES = 200
    study, raters = arena
    _rate_with_upsets(study, raters)
    api = api_as(study.lead)
    ranking_url = f"studies/{study.slug}/ranking/"
    report_url = f"studies/{study.slug}/report/"
    bundle_url = f"studies/{study.slug}/report/bundle/"

    # Blinded: the ranking is refused with its reason, no job starts, nothing names a system.
    blinded = api("GET", ranking_url)
    assert blinded.status_code == 200, blinded.json()
    assert blinded.json()["state"] == "unavailable" and "unblinded" in blinded.json()["reason"]
    refused = api("POST", ranking_url)
    assert refused.status_code == 400 and "unblinded" in refused.json()["error"]["message"]
    assert not Job.objects.filter(study_id=study.pk, kind=Job.Kind.ANALYSIS).exists()
    report = api("GET", report_url)
    assert report.status_code == 200 and report.json()["comparison"] is None
    assert report.json()["systems"] == []
    files = _zip(api("GET", bundle_url))
    assert not any(name.endswith("-key.csv") for name in files)
    for name, data in [("report.json", report.content), *files.items()]:
        assert not any(system.encode() in data for system in QUALITY), name

    study = close_and_unblind(study)
    assert api("GET", ranking_url).json()["state"] == "not_computed"
    computed = api("POST", ranking_url)  # in the tests the job runs inside the request
    assert computed.status_code == 200, computed.json()
    body = computed.json()
    assert body["state"] == "computed" and body["n_resamples"] == RANKING_RESAMPLES
    assert api("GET", ranking_url).json() == body
    # The page's numbers, the same.
    client.force_login(study.lead)
    page = client.get(reverse("agreement:ranking", args=[study.slug])).context["arena"]
    assert body["ranking"] == _as_json(page)
    assert [row["system"] for row in body["ranking"]["ranking"]] == sorted(
        QUALITY, key=QUALITY.get, reverse=True
    )

    report = api("GET", report_url).json()
    assert report == _as_json(study_report(study=study))
    assert report["comparison"]["preferences"][0]["ranking"]["n_resamples"] == RANKING_RESAMPLES
    # A client generated from the schema asks for the zip by its type.
    files = _zip(api("GET", bundle_url, HTTP_ACCEPT="application/zip"))
    assert json.loads(files["results.json"]) == report
    assert any(name.endswith("-key.csv") for name in files)
    page_bundle = client.get(reverse("agreement:report_bundle", args=[study.slug]))
    assert sorted(_zip(page_bundle)) == sorted(files)


def test_the_key_before_unblinding_is_refused_for_the_blinding(arena, api_as):
    """Issue 26: the lead was told "Your role in this study does not allow this"."""
    study, _ = arena
    response = api_as(study.lead)("GET", f"studies/{study.slug}/exports/key-csv/")
    assert response.status_code == 403
    message = response.json()["error"]["message"]
    assert "break the blinding" in message and "role" not in message


def test_a_refused_bundle_is_json_whatever_the_client_accepts(arena, api_as):
    """Asked for by its type, the zip is still refused in the API's shape: an outsider 404,
    a rater of the study 403."""
    from tests.factories import UserFactory

    study, raters = arena
    url = f"studies/{study.slug}/report/bundle/"
    for user, code in ((UserFactory(), 404), (raters[0], 403)):
        response = api_as(user)("GET", url, HTTP_ACCEPT="application/zip")
        assert response.status_code == code
        assert response["Content-Type"] == "application/json"
        assert response.json()["error"]["status"] == code


@pytest.mark.parametrize("accept", ["text/csv", "application/octet-stream", "*/*"])
def test_an_export_is_served_whatever_type_the_client_names(arena, api_as, accept):
    """A client made from the schema names the file's type; it used to get 406."""
    study, _ = arena
    response = api_as(study.lead)(
        "GET", f"studies/{study.slug}/exports/long-csv/", HTTP_ACCEPT=accept
    )
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
