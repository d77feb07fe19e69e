"""The judges over the API: templates, prompts, output import, the judges and their
calibration, with the page's services and reads, and nothing of the key before unblinding."""

import json

import numpy as np
import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from agreement.judges import calibration
from agreement.models import Judge, JudgeOutput, JudgeTemplate
from studies.models import StudyEvent

from ..agreement.test_judge_pages import HUMANS, outputs_jsonl, unblind
from ..agreement.test_judge_pages import _swap_the_key as swap_the_key
from ..agreement.test_judge_pages import study as study  # the shared fixture
from ..agreement.test_judge_ties import TYING_JUDGE, tying_outputs
from .conftest import Api

TIE_TEXT = 'Q: {question}\nA: {step_a}\nB: {step_b}\nSay [[A]], [[B]], or "[[C]]" for a tie.'


@pytest.fixture
def api(client, study, api_as) -> Api:
    return api_as(study.lead)


def _base(study) -> str:
    return f"studies/{study.slug}/judges/"


def _lines(response) -> list[dict]:
    return [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]


def _import(api, study, data: bytes, template="reference-tie"):
    rows = [json.loads(line) for line in data.decode().splitlines()]
    return api("POST", _base(study), {"outputs": rows, "template": template})


def test_templates_built_in_and_the_studys_own_saved_by_name(api, study):
    body = api("GET", f"{_base(study)}template/").json()
    built_in = {t["name"]: t for t in body["templates"] if t["built_in"]}
    assert set(built_in) == {"reference", "reference-tie"}
    assert built_in["reference"]["allow_tie"] is False
    assert '"[[C]]" for a tie' in built_in["reference-tie"]["text"]
    assert "step_a" in body["placeholders"]

    url = f"{_base(study)}template/"
    saved = api("PUT", url, {"name": "ties", "text": TIE_TEXT, "allow_tie": True})
    assert saved.status_code == 200
    own = [t for t in saved.json()["templates"] if not t["built_in"]]
    assert [(t["name"], t["allow_tie"]) for t in own] == [("ties", True)]
    # The same name again replaces it; with its uuid it may be renamed.
    again = api("PUT", url, {"name": "ties", "text": TIE_TEXT + "\nBe brief.", "allow_tie": True})
    assert again.status_code == 200 and study.judge_templates.count() == 1
    template = study.judge_templates.get()
    assert template.text.endswith("Be brief.")
    renamed = api(
        "PUT", url, {"uuid": str(template.uuid), "name": "ties-2", "text": TIE_TEXT,
                     "allow_tie": True},
    )  # fmt: skip
    assert renamed.status_code == 200
    assert list(study.judge_templates.values_list("name", flat=True)) == ["ties-2"]
    events = study.events.filter(kind=StudyEvent.Kind.JUDGE_TEMPLATE_SAVED)
    assert events.count() == 3 and events.last().actor == study.lead


@pytest.mark.parametrize(
    ("body", "code", "says"),
    [
        ({"name": "strict", "text": TIE_TEXT}, "refused", "does not allow one"),
        ({"name": "t", "text": "Q {step_a} {step_b}", "allow_tie": True}, "refused", "[[C]]"),
        ({"name": "reference", "text": "Q {step_a} {step_b}"}, "refused", "built-in"),
        ({"name": "t", "text": "Judge {candidate}"}, "refused", "Unknown placeholder"),
        ({"name": "t", "text": ["x"]}, "invalid", "text: must be a text"),
        ({"name": "t", "text": "{step_a}{step_b}", "allow_tie": "yes"}, "invalid", "allow_tie"),
        ({"name": "t", "text": "{step_a}{step_b}", "colour": 1}, "invalid", "colour"),
        ({"name": "t", "text": "{step_a}{step_b}", "uuid": "nope"}, "invalid", "uuid"),
        ({"name": "t", "text": "x" * 20_001 + "{step_a}{step_b}"}, "refused", "longer than"),
    ],
)
def test_a_bad_template_is_a_clear_400_and_writes_nothing(api, study, body, code, says):
    response = api("PUT", f"{_base(study)}template/", body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == code
    assert says in " ".join([error["message"], *error["problems"]])
    assert not JudgeTemplate.objects.exists()
    assert not study.events.filter(kind=StudyEvent.Kind.JUDGE_TEMPLATE_SAVED).exists()


def test_prompts_are_the_pages_file(api, client, study):
    page_client = client.__class__()
    page_client.force_login(study.lead)
    for template in ("reference", "reference-tie"):
        response = api("GET", f"{_base(study)}prompts/?template={template}")
        assert response.status_code == 200
        assert response["Content-Type"] == "application/jsonl"
        assert "judge-prompts.jsonl" in response["Content-Disposition"]
        page = page_client.get(
            reverse("agreement:judge_prompts", args=[study.slug]), {"template": template}
        )
        lines = _lines(response)
        assert lines == _lines(page) and len(lines) == 12
    assert '"[[C]]" for a tie' in lines[0]["prompt"]
    body = json.dumps(lines)
    assert "alpha" not in body and "beta" not in body
    missing = api("GET", f"{_base(study)}prompts/?template=no-such")
    assert missing.status_code == 400 and "no template" in missing.json()["error"]["problems"][0]


def test_the_outputs_export_is_the_pages_file(api, client, study):
    _import(api, study, tying_outputs(study))
    client.force_login(study.lead)
    for _ in ("blinded", "unblinded"):
        response = api("GET", f"{_base(study)}outputs/")
        assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
        body = b"".join(response.streaming_content)
        page = client.get(reverse("agreement:judge_export", args=[study.slug]))
        assert body == b"".join(page.streaming_content)
        unblind(study)
    assert b",tie," in body


def test_outputs_imported_from_a_json_body_or_a_file(api, study):
    response = _import(api, study, tying_outputs(study))
    assert response.status_code == 201
    assert response.json() == {
        "rows": 12, "judges": ["tier"], "unparseable": 0, "ties": 6, "allow_tie": True,
    }  # fmt: skip
    upload = SimpleUploadedFile("judge.jsonl", outputs_jsonl(study, judge="strict-judge"))
    response = api("POST", _base(study), files={"file": upload, "template": "reference"})
    assert response.status_code == 201, response.content
    assert response.json()["judges"] == ["strict-judge"]
    assert Judge.objects.get(name="strict-judge").allow_tie is False
    event = study.events.filter(kind=StudyEvent.Kind.JUDGE_OUTPUTS_IMPORTED).order_by("pk").last()
    assert event.actor == study.lead and event.detail["file"] == "judge.jsonl"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"outputs": []}, "outputs: send a non-empty list"),
        ({"outputs": "x"}, "outputs: send a non-empty list"),
        ({"outputs": [{"case_id": "TC-001"}], "template": "nope"}, "template: the study has no"),
        ({"outputs": [{"case_id": "TC-001"}], "template": 3}, "template: must be a text"),
        ({"outputs": [{"case_id": "TC-999", "order": "AB", "judge": "j", "output": "x [[A]]"}]},
         "Line/row 1: no test case 'TC-999'"),
        ({"outputs": [{"case_id": "TC-001", "order": "XY", "judge": "j", "output": "x"}]},
         "order must be AB or BA"),
        ({"outputs": [{"case_id": "TC-001", "order": "AB", "judge": "j", "output": 1}]},
         "'output' must be non-empty text"),
        ({"outputs": [{"x": 1}] * 20_001}, "at most 20000"),
    ],
)  # fmt: skip
def test_a_bad_import_is_a_clear_400_and_writes_nothing(api, study, body, says):
    response = api("POST", _base(study), body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert says in " ".join([error["message"], *error["problems"]])
    assert not Judge.objects.exists() and not JudgeOutput.objects.exists()
    assert not study.events.filter(kind=StudyEvent.Kind.JUDGE_OUTPUTS_IMPORTED).exists()


def test_a_file_of_another_kind_is_refused(api, study):
    upload = SimpleUploadedFile("judge.exe", b"MZ")
    response = api("POST", _base(study), files={"file": upload})
    assert response.status_code == 400
    assert "file: use a .jsonl" in response.json()["error"]["problems"][0]


def test_the_judges_and_their_calibration_before_and_after_unblinding(api, client, study):
    _import(api, study, tying_outputs(study))
    judges = api("GET", _base(study)).json()
    assert judges["count"] == 1
    (row,) = judges["results"]
    assert (row["name"], row["outputs"], row["ties"], row["unparseable"]) == ("tier", 12, 6, 0)
    assert row["allow_tie"] is True and row["calibration"]["state"] == "not_computed"
    url = row["calibration_url"].removeprefix("http://testserver")
    assert url == f"/api/v1/studies/{study.slug}/judges/{row['uuid']}/calibration/"
    got = api("GET", url).json()
    assert got["state"] == "not_computed" and got["calibration"] is None and got["job"] is None

    # POST computes it (the job runs inside the request in the tests): the page's report.
    computed = api("POST", url)
    assert computed.status_code == 200
    report = computed.json()["calibration"]
    assert computed.json()["state"] == "computed" and report["humans"] is None
    assert report["position_consistency"] == pytest.approx(4 / 6)
    assert report["n_ties"] == 6 and report["allow_tie"] is True
    client.force_login(study.lead)
    judge = Judge.objects.get()
    page = client.get(reverse("agreement:judge_calibration", args=[study.slug, judge.uuid]))
    assert json.loads(json.dumps(page.context["report"])) == report
    summary = api("GET", _base(study)).json()["results"][0]["calibration"]
    assert summary["state"] == "computed" and summary["kappa_majority"] is None
    assert summary["tie_rate"] == pytest.approx(0.5)

    # After unblinding: the kappa with the raters' majority over A / tie / B, ties kept.
    unblind(study)
    assert api("GET", url).json()["state"] == "not_computed"  # its inputs changed
    report = api("POST", url).json()["calibration"]
    judge_key = [0, -1, 0, 1, 0, 0]  # TYING_JUDGE in key terms (test_judge_ties)
    assert len(TYING_JUDGE) == len(judge_key)
    assert np.array(HUMANS).shape == (3, 6)
    # The raters' majority per case, worked here: the side more raters chose, a rater's tie
    # choosing neither side (docs/statistics.md, the one rule of the report and the judges).
    majority = [int(np.sign(np.sign(column).sum())) for column in np.array(HUMANS).T]
    expected = cohen_kappa_score(judge_key, majority, labels=[-1, 0, 1])
    assert report["humans"]["majority"]["kappa"] == pytest.approx(expected)
    assert report["humans"]["majority"]["n"] == 6
    summary = api("GET", _base(study)).json()["results"][0]["calibration"]
    assert summary["kappa_majority"] == pytest.approx(expected) and summary["kappa_n"] == 6


def test_a_calibration_of_another_study_is_not_found(api, study, lead_user, api_as):
    _import(api, study, tying_outputs(study))
    judge = Judge.objects.get()
    other = api_as(lead_user)
    url = f"{_base(study)}{judge.uuid}/calibration/"
    assert other("GET", url).status_code == 404
    assert (
        api("GET", f"{_base(study)}00000000-0000-0000-0000-000000000000/calibration/").json()[
            "error"
        ]["code"]
        == "not_found"
    )


def _api_view(api, study) -> dict:
    """Everything the judges' endpoints answer a coordinator before unblinding."""
    cache.clear()
    view = {
        "list": api("GET", _base(study)).json(),
        "template": api("GET", f"{_base(study)}template/").json(),
        "outputs": b"".join(api("GET", f"{_base(study)}outputs/").streaming_content),
    }
    for template in ("reference", "reference-tie"):
        response = api("GET", f"{_base(study)}prompts/?template={template}")
        view[template] = b"".join(response.streaming_content)
    for judge in Judge.objects.filter(study=study).order_by("name"):
        url = f"{_base(study)}{judge.uuid}/calibration/"
        view[judge.name] = (api("POST", url).json(), api("GET", url).json())
    view["computed"] = api("GET", _base(study)).json()
    return view


def _constant(study, verdict, name):
    rows = [
        {"case_id": f"TC-{n:03d}", "order": order, "judge": name, "output": f"So.\n[[{verdict}]]"}
        for n in range(1, 7)
        for order in ("AB", "BA")
    ]
    return "\n".join(json.dumps(row) for row in rows).encode()


def test_the_api_tells_a_coordinator_nothing_of_the_key_before_unblinding(api, study):
    """Judges made up to probe the key (always the first shown, always the second, always
    a tie, and one that ties on some cases): under another key, with the same answers by
    label, every answer of the judges' endpoints is the same."""
    for verdict, name in (("A", "always-a"), ("B", "always-b"), ("C", "always-tie")):
        assert _import(api, study, _constant(study, verdict, name)).status_code == 201
    _import(api, study, tying_outputs(study))
    before = _api_view(api, study)
    assert before["always-a"][0]["calibration"]["humans"] is None
    swap_the_key(study)
    assert _api_view(api, study) == before


def test_the_api_comparison_catches_a_calibration_that_reads_the_key(api, study, monkeypatch):
    """Its power: a calibration that reads the key before unblinding differs between keys."""
    real = calibration._judge_diagnostics

    def leaking(cases, pairs, verdicts):
        report = real(cases, pairs, verdicts)
        report["leak"] = [
            list(
                study.test_cases.get(pk=pk)
                .labels.order_by("label")
                .values_list("response__system__name", flat=True)
            )
            for pk, *_ in cases
        ]
        return report

    monkeypatch.setattr(calibration, "_judge_diagnostics", leaking)
    _import(api, study, tying_outputs(study))
    before = _api_view(api, study)
    swap_the_key(study)
    assert _api_view(api, study) != before
