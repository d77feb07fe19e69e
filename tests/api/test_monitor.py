"""The monitored primary question through the API: the lead chooses it before opening,
coordinators read its symmetric state, and the lead stops collection once it has decided."""

import pytest

from agreement.analysis.roles import dimension_measure
from agreement.models import AnalysisPlan
from agreement.services.plan import primary_measure_set
from studies import services as study_services
from studies.models import Study
from studies.services import study_create, study_open
from tests.agreement.test_monitor import monitored_study, rate
from tests.factories import UserFactory, make_cases
from tests.payloads import coordinator_of


@pytest.fixture(autouse=True)
def _few_resamples(settings):
    settings.AGREEMENT_BOOTSTRAP_RESAMPLES = 20


@pytest.mark.django_db
def test_the_lead_chooses_monitoring_before_opening(api_as):
    lead = UserFactory(username="mon-api-lead")
    study = study_create(slug="mon-api", name="Mon", lead=lead, rubric_preset="pairwise")
    coordinator = coordinator_of(study)
    api = api_as(lead)
    url = f"studies/{study.slug}/monitor/"
    refused = api("PUT", url, {"monitoring": True})
    assert refused.status_code == 400 and "win rate" in refused.json()["error"]["message"]
    primary_measure_set(study=study, actor=lead, measure=dimension_measure("preference"))
    bad = api("PUT", url, {"monitoring": True, "alpha": "0.9"})
    assert bad.status_code == 400 and "alpha" in bad.json()["error"]["message"]
    assert api("PUT", url, {"monitoring": "yes"}).status_code == 400
    assert not AnalysisPlan.objects.filter(study=study, monitoring=True).exists()
    assert api_as(coordinator)("PUT", url, {"monitoring": True}).status_code == 403
    saved = api("PUT", url, {"monitoring": True, "margin": 0.1})
    assert saved.status_code == 200, saved.json()
    assert saved.json()["settings"] == {
        "monitoring": True, "alpha": "0.050", "expected_effect": "0.080", "margin": "0.100",
        "mixing": pytest.approx(19.03125), "editable": True,
    }  # fmt: skip
    # Fields left out keep their value.
    assert api("PUT", url, {"alpha": "0.01"}).json()["settings"]["margin"] == "0.100"
    study_services.test_cases_add(
        study=study, systems=["baseline", "improved"], cases=make_cases(4)
    )
    study_open(study=study, actor=lead, acknowledge_warnings=True)
    frozen = api("PUT", url, {"monitoring": False})
    assert frozen.status_code == 400 and "frozen" in frozen.json()["error"]["message"]
    shown = api_as(coordinator)("GET", url).json()
    assert shown["settings"]["editable"] is False and shown["monitor"]["monitoring"] is True


@pytest.mark.django_db(transaction=True)
def test_coordinators_read_the_state_and_the_lead_stops(api_as):
    study = monitored_study(slug="mon-stop")
    coordinator = coordinator_of(study)
    url = f"studies/{study.slug}/monitor/"
    rate(study, winner="baseline", count=5)
    state = api_as(coordinator)("GET", url).json()["monitor"]
    assert state["state"] == "not_decided" and state["n"] == 5 and not state["may_stop"]
    assert "statistic" not in state and "primary" not in state
    early = api_as(study.lead)("POST", f"{url}stop/")
    assert early.status_code == 400 and "not decided" in early.json()["error"]["message"]
    rate(study, winner="baseline", start=5, count=15)
    report = api_as(coordinator)("GET", f"studies/{study.slug}/report/").json()["monitor"]
    assert report["state"] == "decided" and report["may_stop"]
    assert api_as(coordinator)("POST", f"{url}stop/").status_code == 403
    stopped = api_as(study.lead)("POST", f"{url}stop/")
    assert stopped.status_code == 200
    assert stopped.json()["monitor"]["stopped_early"]["n"] == 20
    assert Study.objects.get(pk=study.pk).is_closed
