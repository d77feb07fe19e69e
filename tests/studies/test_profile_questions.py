"""Rater profile questions: what a question may be, the set-up page, and freezing."""

import pytest
from django.urls import reverse

from studies.models import ProfileQuestion, Study, StudyEvent
from studies.profile_questions import (
    MAX_CHOICES,
    MAX_QUESTIONS,
    NUMBER_LIMIT,
    PRESET,
    ProfileAnswerError,
    ProfileQuestionError,
    answer_clean,
    questions_clean,
)
from studies.services.profile_questions import profile_questions_set
from tests.factories import make_study

LANGUAGE = {"key": "language", "label": "Language", "kind": "choice", "choices": ["en", "fr"]}
YEARS = {"key": "years", "label": "Years", "kind": "number", "min": 0, "max": 50}
ROLE = {"key": "role", "label": "Job title", "kind": "text"}


@pytest.fixture
def draft(lead):
    return make_study(lead=lead, slug="profile-draft", cases=2, status=Study.Status.DRAFT)


def keys(study) -> list[str]:
    return list(study.profile_questions.order_by("position").values_list("key", flat=True))


# What a question may be ------------------------------------------------------------------


def test_a_valid_list_is_kept_in_its_order_with_each_kind_config():
    cleaned = questions_clean([YEARS, LANGUAGE, ROLE])
    assert [q["key"] for q in cleaned] == ["years", "language", "role"]
    assert cleaned[0]["config"] == {"min": 0, "max": 50}
    assert cleaned[1]["config"] == {"choices": ["en", "fr"]}
    assert cleaned[2]["config"] == {}


def test_a_key_is_made_from_the_label_when_none_is_given():
    (question,) = questions_clean([{"label": "Years of support experience", "kind": "text"}])
    assert question["key"] == "years_of_support_experience"


@pytest.mark.parametrize(
    ("question", "message"),
    [
        ({**LANGUAGE, "choices": ["only one"]}, "from 2 to"),
        ({**LANGUAGE, "choices": [f"c{n}" for n in range(MAX_CHOICES + 1)]}, "from 2 to"),
        ({**LANGUAGE, "choices": ["en", "en"]}, "differ"),
        ({**LANGUAGE, "choices": ["en", "x" * 101]}, "limited to 100"),
        ({**LANGUAGE, "choices": ["en", "  "]}, "empty"),
        ({**YEARS, "min": 5, "max": 5}, "below the largest"),
        ({**YEARS, "max": NUMBER_LIMIT + 1}, "between"),
        ({**YEARS, "max": None}, "smallest and the largest"),
        ({**YEARS, "min": "1.5"}, "whole number"),
        ({**YEARS, "min": "--3"}, "whole number"),
        ({**YEARS, "max": "5²"}, "whole number"),
        ({**ROLE, "min": 1}, "only a question of kind number"),
        ({**ROLE, "choices": ["a", "b"]}, "only a question of kind choice"),
        ({**ROLE, "kind": "date"}, "kind is one of"),
        ({**ROLE, "label": ""}, "give it a label"),
        ({**ROLE, "label": "x" * 201}, "limited to 200"),
        ({**ROLE, "label": "bad\x00label"}, "NUL"),
        ({**ROLE, "key": "Not A Key"}, "lower-case"),
        ({**ROLE, "colour": "red"}, "unknown field colour"),
        ("a question", "as an object"),
    ],
)
def test_a_question_out_of_bounds_is_refused_with_its_reason(question, message):
    with pytest.raises(ProfileQuestionError, match=message):
        questions_clean([question])


def test_the_number_of_questions_and_distinct_keys_are_enforced():
    many = [{"key": f"q{n}", "label": f"Q{n}", "kind": "text"} for n in range(MAX_QUESTIONS + 1)]
    with pytest.raises(ProfileQuestionError, match=f"at most {MAX_QUESTIONS}"):
        questions_clean(many)
    with pytest.raises(ProfileQuestionError, match="key role"):
        questions_clean([ROLE, {**ROLE, "label": "Another"}])


def test_answers_fit_their_question_and_empty_is_prefer_not_to_say():
    language = ProfileQuestion(label="Language", kind="choice", config={"choices": ["en", "fr"]})
    years = ProfileQuestion(label="Years", kind="number", config={"min": 0, "max": 50})
    role = ProfileQuestion(label="Role", kind="text", config={})
    assert answer_clean(language, "fr") == "fr"
    assert answer_clean(years, "12") == 12
    assert answer_clean(role, "  agent ") == "agent"
    for question in (language, years, role):
        assert answer_clean(question, None) is None
        assert answer_clean(question, "") is None
    for question, bad in ((language, "de"), (years, "51"), (years, "-1"), (years, "ten"),
                          (role, "x" * 201), (years, True)):  # fmt: skip
        with pytest.raises(ProfileAnswerError):
            answer_clean(question, bad)


# The service -----------------------------------------------------------------------------


def test_setting_replaces_the_list_and_records_the_change_once(draft, lead):
    profile_questions_set(study=draft, actor=lead, questions=[LANGUAGE, YEARS])
    profile_questions_set(study=draft, actor=lead, questions=[YEARS, ROLE])
    assert keys(draft) == ["years", "role"]
    profile_questions_set(study=draft, actor=lead, questions=[YEARS, ROLE])  # no change
    events = StudyEvent.objects.filter(study=draft, kind=StudyEvent.Kind.PROFILE_QUESTIONS_SET)
    assert events.count() == 2
    assert [q["key"] for q in events.order_by("pk").last().detail["questions"]] == [
        "years",
        "role",
    ]


def test_a_bad_question_changes_nothing(draft, lead):
    profile_questions_set(study=draft, actor=lead, questions=[LANGUAGE])
    with pytest.raises(ProfileQuestionError):
        profile_questions_set(study=draft, actor=lead, questions=[YEARS, {**ROLE, "kind": "x"}])
    assert keys(draft) == ["language"]


def test_the_questions_freeze_when_the_study_opens(draft, lead):
    profile_questions_set(study=draft, actor=lead, questions=[LANGUAGE])
    Study.objects.filter(pk=draft.pk).update(status=Study.Status.OPEN)
    draft.refresh_from_db()
    with pytest.raises(Exception, match="can no longer change"):
        profile_questions_set(study=draft, actor=lead, questions=[])
    assert keys(draft) == ["language"]


# The page --------------------------------------------------------------------------------


def _post_rows(rows: list[dict], **extra) -> dict:
    data = {}
    for n, row in enumerate(rows):
        data[f"q{n}-key"] = row.get("key", "")
        data[f"q{n}-label"] = row["label"]
        data[f"q{n}-kind"] = row["kind"]
        data[f"q{n}-choices"] = "\n".join(row.get("choices", []))
        data[f"q{n}-min"] = row.get("min", "")
        data[f"q{n}-max"] = row.get("max", "")
    return {**data, **extra}


def test_the_page_adds_edits_reorders_and_removes(client, draft, lead):
    client.force_login(lead)
    url = reverse("studies:profile_questions", args=[draft.slug])
    page = client.get(url)
    assert page.status_code == 200 and b"Use the preset" in page.content
    # Add through the new row.
    response = client.post(
        url,
        {"new-label": "Language", "new-kind": "choice", "new-choices": "en\nfr\n", "new-key": ""},
    )
    assert response.status_code == 302
    assert keys(draft) == ["language"]
    # Edit and add a second.
    rows = [{**LANGUAGE, "label": "First language", "choices": ["en", "fr", "de"]}]
    client.post(url, _post_rows(rows, **{"new-label": "Years", "new-kind": "number",
                                          "new-min": "0", "new-max": "40"}))  # fmt: skip
    assert keys(draft) == ["language", "years"]
    language = draft.profile_questions.get(key="language")
    assert language.label == "First language" and language.config["choices"] == ["en", "fr", "de"]
    # Move the second up.
    rows = [{**LANGUAGE, "label": "First language"}, {**YEARS, "max": 40}]
    client.post(url, _post_rows(rows, move="1:up"))
    assert keys(draft) == ["years", "language"]
    # Remove one.
    rows = [{**YEARS, "max": 40}, LANGUAGE]
    client.post(url, _post_rows(rows, **{"q0-remove": "1"}))
    assert keys(draft) == ["language"]


def test_the_page_says_what_is_wrong_and_keeps_the_rows(client, draft, lead):
    client.force_login(lead)
    url = reverse("studies:profile_questions", args=[draft.slug])
    response = client.post(url, _post_rows([{**YEARS, "min": "9", "max": "3"}]))
    assert response.status_code == 400
    assert "below the largest" in response.content.decode()
    assert 'value="Years"' in response.content.decode()
    assert keys(draft) == []


def test_the_preset_is_the_protocols_three_characteristics(client, draft, lead):
    client.force_login(lead)
    client.post(reverse("studies:profile_questions", args=[draft.slug]), {"preset": "1"})
    assert keys(draft) == [q["key"] for q in PRESET] == ["language", "support_years", "region"]


def test_an_open_study_shows_the_questions_read_only(client, draft, lead):
    profile_questions_set(study=draft, actor=lead, questions=[LANGUAGE])
    Study.objects.filter(pk=draft.pk).update(status=Study.Status.OPEN)
    client.force_login(lead)
    url = reverse("studies:profile_questions", args=[draft.slug])
    page = client.get(url).content.decode()
    assert "can no longer change" in page and 'name="q0-label"' not in page
    assert client.post(url, {"preset": "1"}).status_code == 400
    assert keys(draft) == ["language"]


def test_the_page_is_in_the_study_tabs(client, draft, lead):
    client.force_login(lead)
    page = client.get(reverse("studies:edit", args=[draft.slug])).content.decode()
    assert reverse("studies:profile_questions", args=[draft.slug]) in page


# The API ---------------------------------------------------------------------------------


@pytest.fixture
def api_lead(client, lead):
    from studies.services import tokens
    from tests.api.conftest import Api

    _, secret = tokens.api_token_create(user=lead, name="tests")
    return Api(client, secret)


def test_the_api_reads_and_replaces_the_questions(api_lead, draft):
    url = f"studies/{draft.slug}/profile-questions/"
    assert api_lead("GET", url).json() == {"questions": []}
    response = api_lead("PUT", url, {"questions": [LANGUAGE, YEARS]})
    assert response.status_code == 200, response.content
    assert response.json()["questions"] == [LANGUAGE, YEARS]
    refused = api_lead("PUT", url, {"questions": [{**YEARS, "min": 60}]})
    assert refused.status_code == 400 and "below the largest" in refused.json()["error"]["message"]
    assert api_lead("PUT", url, {"questions": "nope"}).status_code == 400
    assert keys(draft) == ["language", "years"]
