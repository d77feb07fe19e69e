"""Coordinators mark gold items, write expected answers (browser or gold file), add
attention checks and set the quality rules; all or nothing, and frozen once open."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from studies import services as study_services
from studies.models import ExpectedAnswer, Membership, QualitySettings, Study, StudyEvent
from studies.services import membership_add, study_create
from studies.services.quality import attention_check_create

from ..factories import UserFactory, make_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft():
    study = make_study(slug="qi", cases=4, status=Study.Status.DRAFT)
    return study


def item_url(study, case):
    return reverse("studies:quality_item", args=[study.slug, case.uuid])


def form_fields(client, study, case):
    """The browser form's fields in order: (response, dimension) per input."""
    page = client.get(item_url(study, case))
    assert page.status_code == 200
    return page.context["rows"]


def test_the_lead_marks_a_case_gold_in_the_browser(client, draft):
    study = draft
    case = study.test_cases.get(case_id="TC-002")
    client.force_login(study.lead)
    rows = form_fields(client, study, case)
    data = {"purpose": "gold", "explanation": "Six factors, all evidenced."}
    for index, row in enumerate(rows):
        if row["dimension"] == "depth":
            data[f"expected-{index}"] = "5 ±1 band" if row["response"] == "baseline" else "0"
    response = client.post(item_url(study, case), data)
    assert response.status_code == 302
    case.refresh_from_db()
    assert case.purpose == "gold"
    answers = case.expected.answers
    by_system = {
        label.response.system.name: label.label
        for label in case.labels.select_related("response__system")
    }
    assert answers["responses"][by_system["baseline"]]["depth"] == {
        "points": 5,
        "tolerance": 1,
        "unit": "band",
    }
    assert answers["responses"][by_system["improved"]]["depth"]["points"] == 0
    assert StudyEvent.objects.filter(kind=StudyEvent.Kind.EXPECTED_ANSWERS_SET).exists()
    # Shown back the way it was written, by system name.
    again = form_fields(client, study, case)
    assert {r["text"] for r in again if r["dimension"] == "depth"} == {"5 ±1 band", "0"}
    # The sample now leaves the gold item out.
    assert case not in study.test_cases.in_sample()


def test_a_bad_expected_answer_saves_nothing_and_says_why(client, draft):
    study = draft
    case = study.test_cases.get(case_id="TC-001")
    client.force_login(study.lead)
    rows = form_fields(client, study, case)
    data = {"purpose": "gold", "explanation": ""}
    for index, row in enumerate(rows):
        data[f"expected-{index}"] = "3" if row["dimension"] == "depth" else ""
    response = client.post(item_url(study, case), data)
    assert response.status_code == 400
    assert "3 is not a possible score" in response.text
    case.refresh_from_db()
    assert case.purpose == "sample" and not ExpectedAnswer.objects.exists()


def gold_file(text: str, name="gold.csv"):
    return SimpleUploadedFile(name, text.encode())


def test_a_gold_file_is_imported_all_or_nothing(client, draft):
    study = draft
    client.force_login(study.lead)
    url = reverse("studies:quality", args=[study.slug])
    bad = (
        "case_id,response,dimension,expected,explanation\n"
        "TC-001,baseline,depth,4,Listed four\n"
        "TC-002,baseline,nonsense,4,\n"
        "TC-404,baseline,depth,4,\n"
        "TC-003,nobody,depth,4,\n"
    )
    response = client.post(url, {"form": "gold_file", "file": gold_file(bad)})
    assert response.status_code == 400
    text = response.content.decode()
    assert "Nothing was imported" in text
    assert "TC-404" in text and "nonsense" in text and "name the response by its system" in text
    assert not ExpectedAnswer.objects.exists()
    assert not study.test_cases.exclude(purpose="sample").exists()
    good = (
        "case_id,response,dimension,expected,explanation\n"
        "TC-001,baseline,depth,4,Listed four\n"
        "TC-001,improved,Evidence Integration,yes;any;no,\n"
        "TC-003,baseline,depth,2 ±2 points,\n"
    )
    response = client.post(url, {"form": "gold_file", "file": gold_file(good)})
    assert response.status_code == 302
    # A confirmation with the count and the file's name.
    page = client.get(response["Location"]).content.decode()
    assert "Imported the expected answers of 2 gold items from gold.csv" in page
    marked = dict(study.test_cases.exclude(purpose="sample").values_list("case_id", "purpose"))
    assert marked == {"TC-001": "gold", "TC-003": "gold"}
    assert ExpectedAnswer.objects.get(test_case__case_id="TC-001").explanation == "Listed four"
    assert StudyEvent.objects.filter(kind=StudyEvent.Kind.EXPECTED_ANSWERS_IMPORTED).exists()


def test_an_attention_check_is_added_from_the_template(client, draft):
    study = draft
    client.force_login(study.lead)
    response = client.post(
        reverse("studies:quality", args=[study.slug]),
        {"form": "attention", "case_id": "TC-900", "prompt": "Should we?", "text": ""},
    )
    assert response.status_code == 302
    case = study.test_cases.get(case_id="TC-900")
    assert case.purpose == "attention"
    texts = set(case.responses.values_list("text", flat=True))
    assert len(texts) == 1 and "lowest score" in texts.pop()
    # The lowest score on every per-response dimension, for every response.
    for scores in case.expected.answers["responses"].values():
        assert scores["depth"] == {"points": 0, "tolerance": 0, "unit": "band"}
        assert scores["evidence"] == {"checked": [False, False, False]}


def test_the_rules_are_saved_bounded_and_frozen_once_open(client, draft):
    study = draft
    client.force_login(study.lead)
    url = reverse("studies:quality", args=[study.slug])
    values = {
        "form": "settings",
        "gold_percent": "15",
        "gold_pass_percent": "80",
        "gold_minimum": "4",
        "attention_every": "40",
        "attention_misses": "2",
        "min_median_seconds": "25",
        "position_share_percent": "75",
        "position_alpha": "0.01",
        "straight_line_items": "12",
    }
    assert client.post(url, {**values, "gold_percent": "90"}).status_code == 400
    assert not QualitySettings.objects.exists()
    assert client.post(url, values).status_code == 302
    settings = QualitySettings.objects.get(study=study)
    assert (settings.gold_percent, settings.gold_pass_percent, settings.gold_minimum) == (15, 80, 4)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    refused = client.post(url, {**values, "gold_percent": "20"})
    assert refused.status_code == 400 and "frozen protocol" in refused.content.decode()
    settings.refresh_from_db()
    assert settings.gold_percent == 15


def test_raters_get_403_and_strangers_404(client, draft):
    study = draft
    rater = UserFactory()
    membership_add(study=study, user=rater, role=Membership.Role.RATER)
    case = study.test_cases.first()
    for url in (reverse("studies:quality", args=[study.slug]), item_url(study, case)):
        client.force_login(rater)
        assert client.get(url).status_code == 403
        client.force_login(UserFactory())
        assert client.get(url).status_code == 404


def test_an_attention_check_in_an_arena_study_has_a_pair_like_the_sample():
    """With four systems compared two at a time, an attention check with four responses
    would stand out on the screen: it takes the sample's commonest pairing."""
    lead = UserFactory()
    study = study_create(slug="arena-attention", name="Arena", lead=lead, rubric_preset="pairwise")
    pairs = [("a", "b"), ("a", "b"), ("c", "d"), ("a", "c")]
    cases = [
        {"id": f"TC-{n}", "prompt": f"Q{n}", "context": "", "stratum": "",
         "responses": {name: f"answer {n} of {name}" for name in pair}}
        for n, pair in enumerate(pairs, 1)
    ]  # fmt: skip
    study_services.test_cases_add(study=study, systems=["a", "b", "c", "d"], cases=cases)
    check = attention_check_create(
        study=study, case_id="TC-900", prompt="Should we?", text="", actor=lead
    )
    assert sorted(check.responses.values_list("system__name", flat=True)) == ["a", "b"]
    assert sorted(check.labels.values_list("label", flat=True)) == ["A", "B"]


def test_the_page_warns_of_quality_ids_a_worksheet_would_give_away(client, draft):
    """Offline worksheets show test case ids: ids unlike the sample's are pointed out."""
    study = draft
    client.force_login(study.lead)
    quality_url = reverse("studies:quality", args=[study.slug])
    # Of the sample's form ("TC-" and digits): nothing to say.
    attention_check_create(
        study=study, actor=study.lead, case_id="TC-900", prompt="Should we?", text=""
    )
    assert "ids-standing-out" not in client.get(quality_url).text
    for case_id in ("ATTN-1", "TC-gold-7"):
        attention_check_create(
            study=study, actor=study.lead, case_id=case_id, prompt="Should we?", text=""
        )
    page = client.get(quality_url)
    assert page.context["standing_out"] == ["ATTN-1", "TC-gold-7"]
    assert "2 of these ids stand out from the sample" in page.text
