"""The optional content_warning column of the case import, stored with the case."""

import json

import pytest

from studies.importing.cases import parse_cases
from studies.models import StratumSetting
from studies.selectors import case_content_warnings
from studies.services import test_cases_add as cases_add

from ..factories import UserFactory, make_study

HEADER = "id,prompt,stratum,content_warning,response:baseline,response:improved"


def test_csv_and_jsonl_read_a_warning_and_count_the_warned_cases():
    data = f"{HEADER}\nTC-1,P,harm,Graphic violence.,a,b\nTC-2,P,,,a,b\n".encode()
    parsed = parse_cases(filename="cases.csv", data=data)
    assert parsed.ok and parsed.warned_cases == 1
    assert [c.get("content_warning", "") for c in parsed.cases] == ["Graphic violence.", ""]
    line = {"id": "TC-1", "prompt": "P", "content_warning": "Slurs.", "responses": {"a": "x"}}
    parsed = parse_cases(filename="cases.jsonl", data=json.dumps(line).encode())
    assert parsed.ok and parsed.cases[0]["content_warning"] == "Slurs."


def test_a_warning_longer_than_the_limit_is_a_problem_at_its_cell():
    data = f"{HEADER}\nTC-1,P,,{'w' * 501},a,b\n".encode()
    (problem,) = parse_cases(filename="cases.csv", data=data).problems
    assert "content warning is limited to 500" in str(problem)
    assert "content_warning" in str(problem)


@pytest.mark.django_db
def test_a_case_has_its_own_warning_and_its_stratums_each_once():
    study = make_study(lead=UserFactory(), cases=0, status="draft")
    cases = [
        {"id": "TC-1", "prompt": "P", "stratum": "harm", "content_warning": "Slurs.",
         "responses": {"baseline": "x", "improved": "y"}},
        {"id": "TC-2", "prompt": "P", "stratum": "harm", "content_warning": "Harm probe.",
         "responses": {"baseline": "x", "improved": "y"}},
        {"id": "TC-3", "prompt": "P", "responses": {"baseline": "x", "improved": "y"}},
    ]  # fmt: skip
    cases_add(study=study, systems=["baseline", "improved"], cases=cases)
    StratumSetting.objects.create(study=study, stratum="harm", content_warning="Harm probe.")
    warned, same, plain = study.test_cases.order_by("position")
    assert case_content_warnings(test_case=warned) == ["Harm probe.", "Slurs."]
    assert case_content_warnings(test_case=same) == ["Harm probe."]
    assert case_content_warnings(test_case=plain) == []
