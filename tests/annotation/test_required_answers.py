"""Issue 39: every rubric dimension is required unless marked optional. A submit lacking a
required answer is refused with the dimensions named (the page, a worksheet, ratings from
elsewhere), a draft may stay incomplete, a response with a part unanswered has no total
(the worksheet's Total and the long table's response_total are blank, never 0), and
ratings stored incomplete before are reported to the lead, never rewritten."""

import csv
import io
import json

import pytest
from django.urls import reverse

from annotation import exports, worksheets
from annotation.models import Assignment, Rating
from annotation.selectors import incomplete_ratings
from annotation.worksheets import WorksheetError
from studies.models import Dimension, Membership
from tests.payloads import full_marks_payload, submit

from .test_ratings_by_system import csv_bytes, likert_study, problems_of, run

pytestmark = pytest.mark.django_db

WORKSHEET = (
    "TC-ID,Response,Depth,Evidence,Alternatives,Structure,Actionability,Total,Confidence,Notes"
)


@pytest.fixture
def assignment(study, rater):
    return Membership.objects.get(study=study, user=rater).assignments.order_by("position")[0]


def rate_url(assignment):
    return reverse("annotation:rate", args=[assignment.uuid])


def test_a_submit_lacking_required_answers_is_refused_naming_them_and_keeps_the_answers(
    client, rater, assignment
):
    client.force_login(rater)
    payload = full_marks_payload()
    del payload["responses"]["A"]["structure"]
    del payload["responses"]["B"]["alternatives"]
    page = client.post(rate_url(assignment), {"payload": json.dumps(payload), "version": "0"})
    assert page.status_code == 400
    text = page.content.decode()
    assert "Response A: Logical Structure; Response B: Alternative Consideration" in text
    # The page moves to the first missing answer; the rater's answers are on it still.
    assert 'data-field="A-structure"' in text and "factor 5" in text
    assert not Rating.objects.filter(assignment=assignment).exists()
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.TODO


def test_a_draft_may_stay_incomplete(client, rater, assignment):
    client.force_login(rater)
    payload = full_marks_payload()
    del payload["responses"]["A"]["structure"]
    response = client.post(
        reverse("annotation:draft", args=[assignment.uuid]),
        json.dumps({"payload": payload, "version": 0}),
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    assignment.refresh_from_db()
    assert assignment.status == Assignment.Status.DRAFT
    assert "structure" not in assignment.draft["responses"]["A"]


def test_the_rating_page_marks_required_and_optional_answers(client, rater, assignment):
    Dimension.objects.filter(key="structure").update(required=False)
    client.force_login(rater)
    text = client.get(rate_url(assignment)).content.decode()
    # Each dimension's mark, shown by the page's script while it is unanswered and required.
    assert text.count("data-missing hidden") == 2 * 5
    assert text.count('(optional)</span> <span class="badge') == 2  # A's and B's legend
    assert 'id="missing-answers"' in text
    rubric = json.loads(text.split('id="rubric-data" type="application/json">')[1].split("<")[0])
    assert {d["key"]: d["required"] for d in rubric}["structure"] is False


def test_a_worksheet_with_a_blank_required_cell_is_refused_at_its_row(study):
    data = csv_bytes(
        WORKSHEET,
        "TC-001,A,4,2,4,3,2,15,High,",
        "TC-001,B,4,,4,3,2,,High,",  # Evidence left blank
    )
    with pytest.raises(WorksheetError) as caught:
        worksheets.worksheet_import(study=study, pseudonym="R-01", filename="s.csv", data=data)
    problems = [(p.row, p.column, p.message) for p in caught.value.problems]
    assert (3, "Evidence", "Evidence Integration is required; the cell is empty.") in problems
    assert not Rating.objects.exists()


def test_an_optional_blank_cell_is_imported_without_a_total(study):
    Dimension.objects.filter(key="evidence").update(required=False)
    blank_total = csv_bytes(WORKSHEET, "TC-001,A,4,2,4,3,2,15,High,", "TC-001,B,4,,4,3,2,13,High,")
    with pytest.raises(WorksheetError) as caught:
        worksheets.worksheet_import(
            study=study, pseudonym="R-01", filename="s.csv", data=blank_total
        )
    assert "leave Total empty" in str(caught.value.problems[0])
    data = csv_bytes(WORKSHEET, "TC-001,A,4,2,4,3,2,15,High,", "TC-001,B,4,,4,3,2,,High,")
    worksheets.worksheet_import(study=study, pseudonym="R-01", filename="s.csv", data=data)
    totals = dict(Rating.objects.values_list("label", "total"))
    assert totals == {"A": 15, "B": None}
    rows = list(
        csv.reader(io.StringIO("".join(exports.export_text(study=study, fmt=exports.LONG_CSV))))
    )
    header = rows[0]
    for row in rows[1:]:
        record = dict(zip(header, row, strict=False))
        if record["response_label"] == "B":
            assert record["response_total"] == ""  # blank, never 0
            if record["dimension"] == "evidence":
                assert (record["value"], record["points"]) == ("", "")
    text = "".join(exports.export_text(study=study, fmt=exports.WORKSHEET_CSV))
    sheet = list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))
    total_at, rater_at = sheet[0].index("Total"), sheet[0].index("Rater")
    mine = {
        row[1]: row[total_at] for row in sheet[1:] if row[0] == "TC-001" and row[rater_at] == "R-01"
    }
    assert mine == {"A": "15", "B": ""}


def test_ratings_from_elsewhere_lacking_a_required_answer_are_refused_row_by_row():
    study = likert_study()
    header = "Case ID,System,Rater,Helpfulness,Clarity,Accuracy,Confidence"
    data = csv_bytes(
        header,
        "TC-001,Zephyr-Alpha-7,Ann,4,4,4,high",
        "TC-001,Quokka-Omega-3,Ann,4,,4,high",
        "TC-001,Marlin-Beta-2,Ann,,4,,high",
    )
    problems = problems_of(study, data)
    assert "Row 3, column Clarity: Clarity is required; the cell is empty." in problems
    assert "Row 4, column Helpfulness: Helpfulness is required; the cell is empty." in problems
    assert "Row 4, column Accuracy: Accuracy is required; the cell is empty." in problems
    assert not Rating.objects.exists()


def test_a_pairwise_import_counts_verdicts_not_two_ratings_each():
    study = likert_study(slug="pairwise", systems=("Kestrel-9", "Heron-4"), preset="pairwise")
    data = csv_bytes(
        "Case ID,System,Rater,Overall preference,Notes",
        "TC-001,,Ann,Kestrel-9:2,",
        "TC-002,,Ann,tie,",
        "TC-001,,Bo,Heron-4:1,",
    )
    summary = run(study, data)
    assert (summary.ratings, summary.verdicts) == (3, 3)  # was 6 ratings: one per label
    from annotation.selectors.imported import imported_ratings_count

    assert imported_ratings_count(study_id=study.pk) == 3
    blank = csv_bytes("Case ID,System,Rater,Overall preference,Notes", "TC-003,,Ann,,")
    assert problems_of(study, blank) == [
        "Row 2, column Preference: Overall preference is required; it is empty."
    ]


def test_ratings_stored_incomplete_are_reported_on_the_qc_page_and_never_rewritten(
    client, study, lead, assignment
):
    submit(assignment, full_marks_payload())
    rating = Rating.objects.get(assignment=assignment, label="B")
    # As stored before answers were required: a checklist left out, its points counted 0.
    scores = {k: v for k, v in rating.scores.items() if k != "structure"}
    Rating.objects.filter(pk=rating.pk).update(scores=scores, total=17)
    found = incomplete_ratings(study=study)
    assert (found.cases, found.by_rater) == (1, {"R-01": 1})
    client.force_login(lead)
    page = client.get(reverse("agreement:qc", args=[study.slug])).content.decode()
    assert 'id="incomplete-ratings"' in page and "R-01 (1)" in page
    rating.refresh_from_db()
    assert rating.scores == scores and rating.total == 17  # kept as stored
    # Read through the rubric's rule, its total is missing everywhere it is shown.
    rows = list(
        csv.reader(io.StringIO("".join(exports.export_text(study=study, fmt=exports.LONG_CSV))))
    )
    at = rows[0].index("response_total")
    label = rows[0].index("response_label")
    assert {row[at] for row in rows[1:] if row[label] == "B"} == {""}


def test_an_optional_dimension_is_frozen_with_the_protocol_and_required_ones_change_nothing(
    study,
):
    from studies.selectors.protocol import study_protocol_chunks, study_protocol_fingerprint

    before = study_protocol_fingerprint(study=study)
    assert b'"required"' not in b"".join(study_protocol_chunks(study=study))
    Dimension.objects.filter(rubric=study.rubric, key="structure").update(required=False)
    assert b'"required":false' in b"".join(study_protocol_chunks(study=study))
    assert study_protocol_fingerprint(study=study) != before
    Dimension.objects.filter(rubric=study.rubric, key="structure").update(required=True)
    assert study_protocol_fingerprint(study=study) == before
