"""Gold items and attention checks over the API: the quality page's rules, items, gold file
and attention checks, by system name as the pages show them, frozen once the study opens."""

import pytest

from studies.models import ExpectedAnswer, Study, StudyEvent
from studies.selectors import quality_settings_for
from tests.factories import make_study
from tests.payloads import coordinator_of

BASE = "studies/gold/quality/"


@pytest.fixture
def study(lead_user):
    return make_study(lead=lead_user, slug="gold", cases=3, status="draft")


def _labels(case) -> dict:
    return {
        row.response.system.name: row.label
        for row in case.labels.select_related("response__system")
    }


def test_a_case_is_made_gold_by_system_name_and_read_back_so(study, lead_user, api_as):
    api = api_as(lead_user)
    case = study.test_cases.get(case_id="TC-002")
    item = api("GET", f"{BASE}{case.uuid}/").json()
    assert item["purpose"] == "sample" and not item["frozen"]
    # Every row is by system, never by the label a rater sees.
    assert {row["response"] for row in item["expected"]} == {"baseline", "improved"}
    assert [r["system"] for r in item["responses"]] == ["baseline", "improved"]
    cells = [
        {"response": "baseline", "dimension": "depth", "expected": "5 ±1 band"},
        {"response": "improved", "dimension": "depth", "expected": "0"},
    ]
    body = {"purpose": "gold", "explanation": "Six factors.", "expected": cells}
    response = api("PUT", f"{BASE}{case.uuid}/", body)
    assert response.status_code == 200, response.content
    case.refresh_from_db()
    labels = _labels(case)
    # Stored by key label, as the page stores it.
    answers = case.expected.answers["responses"]
    assert answers[labels["baseline"]]["depth"] == {"points": 5, "tolerance": 1, "unit": "band"}
    assert answers[labels["improved"]]["depth"]["points"] == 0
    shown = {
        r["response"]: r["expected"]
        for r in response.json()["expected"]
        if r["dimension"] == "depth"
    }
    assert shown == {"baseline": "5 ±1 band", "improved": "0"}
    listed = api("GET", BASE).json()
    assert [(i["case_id"], i["purpose"], i["explanation"]) for i in listed["items"]] == [
        ("TC-002", "gold", "Six factors.")
    ]
    # Deleting takes it off the quality items, its answers gone; its key was shown, so it
    # is left out of the sample for good (tests/api/test_quality_round_trip.py).
    response = api("DELETE", f"{BASE}{case.uuid}/")
    assert response.status_code == 200 and response.json()["purpose"] == "left_out"
    assert not ExpectedAnswer.objects.exists() and api("GET", BASE).json()["items"] == []


def test_a_bad_expected_answer_is_refused_and_changes_nothing(study, lead_user, api_as):
    api = api_as(lead_user)
    case = study.test_cases.get(case_id="TC-001")
    cells = [{"response": "baseline", "dimension": "depth", "expected": "3"}]
    response = api("PUT", f"{BASE}{case.uuid}/", {"purpose": "gold", "expected": cells})
    assert response.status_code == 400
    assert "3 is not a possible score" in response.json()["error"]["message"]
    for body in (
        {"purpose": "sample", "expected": cells},
        {"purpose": "gold", "expected": "depth=3"},
        {"purpose": "gold", "expected": [{"response": 1, "dimension": "depth"}]},
        {"purpose": "gold", "expected": [{"response": "x" * 301, "dimension": "d"}]},
        {"purpose": "gold", "expected": [{"response": "A", "dimension": "depth", "expected": "0"}]},
    ):
        assert api("PUT", f"{BASE}{case.uuid}/", body).status_code == 400, body
    case.refresh_from_db()
    assert case.purpose == "sample" and not ExpectedAnswer.objects.exists()


def test_the_rules_change_within_the_page_s_bounds(study, lead_user, api_as):
    api = api_as(lead_user)
    rules = api("GET", BASE).json()["rules"]
    # The significance level as a decimal string, as the form shows it.
    assert rules["position_alpha"] == f"{quality_settings_for(study=study).position_alpha:.3f}"
    response = api(
        "PATCH", BASE, {"gold_percent": 20, "gold_feedback": True, "position_alpha": "0.01"}
    )
    assert response.status_code == 200, response.content
    settings = quality_settings_for(study=study)
    assert (settings.gold_percent, settings.gold_feedback) == (20, True)
    assert str(settings.position_alpha) == "0.010"
    # Left out, the others stay; out of bounds or unknown, nothing changes.
    assert response.json()["rules"]["attention_every"] == rules["attention_every"]
    for body in (
        {"gold_percent": 51},
        {"gold_feedback": "yes"},
        {"nonsense": 1},
        {"gold_percent": [1]},
    ):
        assert api("PATCH", BASE, body).status_code == 400, body
    assert quality_settings_for(study=study).gold_percent == 20
    assert StudyEvent.objects.filter(kind=StudyEvent.Kind.QUALITY_SETTINGS_CHANGED).count() == 1


def test_an_attention_check_and_a_gold_file(study, lead_user, api_as):
    api = api_as(lead_user)
    response = api("POST", f"{BASE}attention-checks/", {"case_id": "TC-900", "prompt": "Read me."})
    assert response.status_code == 201, response.content
    check = response.json()
    assert check["purpose"] == "attention" and check["case_id"] == "TC-900"
    assert {r["system"] for r in check["responses"]} == {"baseline", "improved"}
    assert (
        api("POST", f"{BASE}attention-checks/", {"case_id": "TC-900", "prompt": "x"}).status_code
        == 400
    )
    assert api("POST", f"{BASE}attention-checks/", {"prompt": "x"}).status_code == 400
    gold = b"case_id,response,dimension,expected\nTC-001,baseline,depth,4 \xc2\xb11 band\n"
    response = api("POST", f"{BASE}gold-file/", files={"file": _upload("gold.csv", gold)})
    assert response.status_code == 200, response.content
    assert response.json() == {"cases": 1}
    bad = b"case_id,response,dimension,expected\nTC-404,baseline,depth,4\n"
    response = api("POST", f"{BASE}gold-file/", files={"file": _upload("bad.csv", bad)})
    assert response.status_code == 400
    assert "no test case 'TC-404'" in " ".join(response.json()["error"]["problems"])
    purposes = dict(study.test_cases.values_list("case_id", "purpose"))
    assert purposes["TC-001"] == "gold" and purposes["TC-900"] == "attention"


def test_once_open_nothing_changes_and_members_read(study, lead_user, api_as):
    api = api_as(lead_user)
    case = study.test_cases.first()
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    cells = [{"response": "baseline", "dimension": "depth", "expected": "0"}]
    for method, url, body in (
        ("PATCH", BASE, {"gold_percent": 5}),
        ("PUT", f"{BASE}{case.uuid}/", {"purpose": "gold", "expected": cells}),
        ("DELETE", f"{BASE}{case.uuid}/", None),
        ("POST", f"{BASE}attention-checks/", {"case_id": "AC-1", "prompt": "x"}),
    ):
        response = api(method, url, body)
        assert response.status_code == 400, (method, url)
        assert "frozen protocol" in response.json()["error"]["message"]
    member = api_as(coordinator_of(study, "gold-member"))
    assert member("GET", BASE).json()["frozen"] is True


def _upload(name: str, data: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, data, content_type="text/csv")


def test_a_file_that_is_no_table_is_refused_with_its_reason(study, lead_user, api_as):
    # The table reader's problems are objects; the API says them as text (once a 500).
    api = api_as(lead_user)
    response = api("POST", f"{BASE}gold-file/", files={"file": _upload("file", b"\x00")})
    assert response.status_code == 400
    assert "is not a table file" in response.json()["error"]["message"]
    assert all(isinstance(p, str) for p in response.json()["error"]["problems"])
