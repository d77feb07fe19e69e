"""Reading a judge output file: JSONL is read as the case import reads it (UTF-8 or UTF-16)."""

import json

import pytest

from agreement.judges.files import JudgeImportError, judge_rows_read

LINES = [
    {"case_id": "TC-1", "order": "AB", "judge": "gpt", "output": "Verdict: A — clearly"},
    {"case_id": "TC-1", "order": "ba", "judge": "gpt", "output": "Verdict: B"},
]
TEXT = "\n".join(json.dumps(line, ensure_ascii=False) for line in LINES) + "\n\n"


@pytest.mark.parametrize(
    "encoded", [TEXT.encode(), TEXT.encode("utf-8-sig"), TEXT.encode("utf-16")]
)
def test_jsonl_outputs_are_read_in_utf8_and_utf16_with_a_bom(encoded):
    rows = judge_rows_read(filename="outputs.jsonl", data=encoded)
    assert [(r.number, r.case_id, r.order, r.output) for r in rows] == [
        (1, "TC-1", "AB", "Verdict: A — clearly"),
        (2, "TC-1", "BA", "Verdict: B"),
    ]


def test_a_file_that_is_not_text_is_refused_with_its_line():
    with pytest.raises(JudgeImportError) as caught:
        judge_rows_read(filename="outputs.jsonl", data=TEXT.encode() + b'{"x": "caf\xe9"}\n')
    assert caught.value.problems == [
        'Line 4: The file is not UTF-8 text. Save it as "CSV UTF-8" and upload it again.'
    ]


def test_a_line_that_is_not_json_is_reported_with_its_number_and_the_others_read_on():
    data = (TEXT.replace("\n\n", "\n") + '{"case_id": \n' + json.dumps(LINES[0]) + "\n").encode()
    with pytest.raises(JudgeImportError) as caught:
        judge_rows_read(filename="outputs.jsonl", data=data)
    assert len(caught.value.problems) == 1
    assert caught.value.problems[0].startswith("Line/row 3: it is not valid JSON")
