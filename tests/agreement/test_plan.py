"""Stratum shares: validated as a whole, recorded in the history, used by the estimates."""

import pytest
from django.urls import reverse

from agreement.models import AnalysisPlan, StudyAgreement
from agreement.services.plan import AnalysisPlanError, stratum_shares_parse, stratum_shares_set
from studies.models import StudyEvent
from tests.payloads import close_and_unblind, study_with_systems, submit_all

STRATA = ["operations", "policy"]


def test_shares_are_read_as_percentages_or_fractions():
    assert stratum_shares_parse(text="policy: 70\noperations: 30%", strata=STRATA) == {
        "policy": pytest.approx(0.7),
        "operations": pytest.approx(0.3),
    }
    assert stratum_shares_parse(text="policy: 0.5\noperations: 0.5", strata=STRATA) == {
        "policy": 0.5,
        "operations": 0.5,
    }
    assert stratum_shares_parse(text="  \n", strata=STRATA) == {}
    assert stratum_shares_parse(text="(none): 40\nx: 60", strata=["", "x"]) == {
        "": pytest.approx(0.4),
        "x": pytest.approx(0.6),
    }


@pytest.mark.parametrize(
    "text,message",
    [
        ("policy: 70", "missing: operations"),
        ("policy: 70\noperations: 20", "add up to 100"),
        ("policy: 70\npolicy: 30", "given twice"),
        ("policy: 70\nsafety: 30", "no stratum 'safety'"),
        ("policy 70\noperations: 30", "Line 1"),
        ("policy: abc\noperations: 30", "not a number"),
        ("policy: -5\noperations: 105", "above 0"),
        ("policy: nan\noperations: 30", "above 0"),
        ("x" * 6000, "at most"),
    ],
)
def test_impossible_shares_are_refused_with_a_message(text, message):
    with pytest.raises(AnalysisPlanError, match=message):
        stratum_shares_parse(text=text, strata=STRATA)


@pytest.mark.django_db(transaction=True)
def test_shares_weight_the_overall_estimate_and_are_recorded(client, settings):
    settings.AGREEMENT_BOOTSTRAP_RESAMPLES = 100
    study = study_with_systems(cases=6, consented=True)
    submit_all(study)
    close_and_unblind(study)
    client.force_login(study.lead)
    url = reverse("agreement:stratum_shares", args=[study.slug])
    refused = client.post(url, {"shares": "policy: 90"}, follow=True)
    assert "missing: operations" in refused.content.decode()
    assert not AnalysisPlan.objects.filter(study=study, stratum_shares__policy=0.9).exists()
    client.post(url, {"shares": "policy: 90\noperations: 10"})
    comparison = StudyAgreement.objects.get(study=study).result["comparison"]
    assert comparison["weighted_by_shares"] is True
    overall = next(r for r in comparison["paired"] if r["stratum"] == "overall")
    by_stratum = {r["stratum"]: r for r in comparison["paired"] if r["key"] == "total"}
    assert overall["difference"] == pytest.approx(
        0.9 * by_stratum["policy"]["difference"] + 0.1 * by_stratum["operations"]["difference"]
    )
    event = study.events.filter(kind=StudyEvent.Kind.SETTINGS_CHANGED).latest("created_at")
    assert "policy 90.0%" in event.reason
    # Saving the same shares again records nothing more.
    count = study.events.count()
    stratum_shares_set(study=study, actor=study.lead, text="policy: 90\noperations: 10")
    assert study.events.count() == count
