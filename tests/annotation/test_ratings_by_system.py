"""Ratings made elsewhere, imported by system name: the long format, every problem listed,
all or nothing, pseudonymous raters, the blinding rules both ways, pairwise preferences."""

import hashlib
import json

import pytest
from openpyxl import Workbook

from annotation import ratings_by_system
from annotation.models import Assignment, Rating
from annotation.services import (
    CONCORD_HELD_MESSAGE,
    IMPORTED_HELD_MESSAGE,
    RatingClosedError,
    assignments_create_all,
    rating_submit,
)
from annotation.services.assignment import AssignmentDesignError, study_assign
from annotation.worksheets import WorksheetError
from studies.models import Membership, Study, StudyEvent
from studies.services import membership_add, study_create
from studies.services import test_cases_add as cases_add

from ..factories import UserFactory, make_cases

pytestmark = pytest.mark.django_db

SYSTEMS = ("Zephyr-Alpha-7", "Quokka-Omega-3", "Marlin-Beta-2")
HEADER = "Case ID,System,Rater,Helpfulness,Clarity,Accuracy,Confidence,Notes,Timestamp"


def likert_study(slug="imported", cases=3, systems=SYSTEMS, preset="likert", **kwargs) -> Study:
    lead = UserFactory()
    study = study_create(slug=slug, name=slug, lead=lead, rubric_preset=preset, **kwargs)
    cases_add(study=study, systems=list(systems), cases=make_cases(cases, systems))
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    study.refresh_from_db()
    return study


def columns(study) -> list[str]:
    return [d.key for d in study.rubric.dimensions.all()]


def csv_bytes(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def run(study, data: bytes, *, filename="ratings.csv", **kwargs):
    return ratings_by_system.ratings_file_import(
        study=study, filename=filename, data=data, actor=study.lead, **kwargs
    )


def problems_of(study, data: bytes, **kwargs) -> list[str]:
    with pytest.raises(WorksheetError) as caught:
        run(study, data, **kwargs)
    return [str(p) for p in caught.value.problems]


def full_file(cases=3, raters=("Ann Example", "Bo Example"), systems=SYSTEMS) -> bytes:
    lines = [HEADER]
    for n in range(1, cases + 1):
        for r, rater in enumerate(raters):
            for s, system in enumerate(systems):
                value = 1 + (n + r + s) % 5
                lines.append(
                    f"TC-{n:03d},{system},{rater},{value},{6 - value},3,high,,2024-05-0{n}"
                )
    return csv_bytes(*lines)


def snapshot() -> str:
    state = {
        "assignments": list(Assignment.objects.order_by("pk").values_list("pk", "status")),
        "ratings": list(Rating.objects.order_by("pk").values_list("pk", "scores")),
        "memberships": Membership.objects.count(),
        "events": StudyEvent.objects.count(),
    }
    return hashlib.sha256(json.dumps(state, default=str).encode()).hexdigest()


def stored(study) -> dict:
    """(case, system, rater's file name) -> {dimension: value}, read through the key."""
    out = {}
    ratings = Rating.objects.filter(assignment__test_case__study=study).select_related(
        "assignment__test_case", "assignment__rater", "response__system"
    )
    for rating in ratings:
        key = (
            rating.assignment.test_case.case_id,
            rating.response.system.name,
            rating.assignment.rater.external_name,
        )
        out[key] = {k: v["choice"] for k, v in rating.scores.items()}
    return out


def concord_rater(study) -> Membership:
    """A rater of the study with an account, given every case (nothing rated yet)."""
    rater = membership_add(study=study, user=UserFactory(), role=Membership.Role.RATER)
    assignments_create_all(study=study, rater=rater)
    return rater


def screen_payload(choice=3) -> dict:
    """Every response of a three-system case rated ``choice`` on the three scales."""
    scores = {key: {"choice": choice} for key in ("helpfulness", "clarity", "accuracy")}
    return {"responses": {label: scores for label in "ABC"}, "confidence": "high"}


def rating_made_in_concord(study) -> None:
    rater = concord_rater(study)
    rating_submit(assignment=rater.assignments.first(), payload=screen_payload(), any_version=True)


def test_a_file_by_system_lands_on_the_right_responses_for_new_pseudonymous_raters():
    study = likert_study()
    summary = run(study, full_file())
    assert (summary.rows, summary.ratings, summary.cases, summary.raters) == (18, 18, 3, 2)
    assert (summary.new_raters, summary.created, summary.updated) == (2, 6, 0)
    assert summary.first_rated.startswith("2024-05-01")
    got = stored(study)
    for n in range(1, 4):
        for r, rater in enumerate(("Ann Example", "Bo Example")):
            for s, system in enumerate(SYSTEMS):
                value = 1 + (n + r + s) % 5
                assert got[f"TC-{n:03d}", system, rater] == {
                    "helpfulness": value,
                    "clarity": 6 - value,
                    "accuracy": 3,
                }
    raters = study.memberships.filter(role=Membership.Role.RATER).select_related("user")
    assert sorted(m.external_name for m in raters) == ["Ann Example", "Bo Example"]
    for membership in raters:
        assert membership.pseudonym.startswith("R-")
        assert not membership.user.is_active
        assert not membership.user.has_usable_password()
        assert "Example" not in membership.user.username
    assignments = Assignment.objects.filter(test_case__study=study)
    assert set(assignments.values_list("source", "status", "confidence")) == {
        ("imported", "submitted", "high")
    }
    event = study.events.get(kind=StudyEvent.Kind.RATINGS_IMPORTED)
    assert event.detail["ratings"] == 18
    assert event.detail["file"] == "ratings.csv"
    assert event.detail["last_rated"].startswith("2024-05-03")


def test_the_same_name_imported_again_is_the_same_rater_and_replaces_the_answer():
    study = likert_study()
    run(study, full_file())
    again = csv_bytes(
        HEADER,
        *(f"TC-001,{system},ann example,5,5,5,,," for system in SYSTEMS),
    )
    summary = run(study, again)
    assert (summary.new_raters, summary.created, summary.updated) == (0, 0, 1)
    assert study.memberships.filter(role=Membership.Role.RATER).count() == 2
    assert stored(study)["TC-001", SYSTEMS[0], "Ann Example"] == {
        "helpfulness": 5,
        "clarity": 5,
        "accuracy": 5,
    }


def test_a_check_writes_nothing_and_says_what_an_import_would_do():
    study = likert_study()
    before = snapshot()
    summary = run(study, full_file(), dry_run=True)
    assert summary.dry_run and summary.ratings == 18 and summary.new_raters == 2
    assert snapshot() == before


def test_every_problem_is_listed_with_its_row_and_nothing_is_written():
    study = likert_study()
    before = snapshot()
    data = csv_bytes(
        HEADER,
        f"TC-001,{SYSTEMS[0]},Ann,5,5,5,,,",
        f"TC-001,{SYSTEMS[1]},Ann,9,5,5,,,",  # 9 is not on the scale
        "TC-001,Nobody-1,Ann,5,5,5,,,",  # no such system in the case
        f"TC-999,{SYSTEMS[0]},Ann,5,5,5,,,",  # no such case
        f"TC-002,{SYSTEMS[0]},,5,5,5,,,",  # no rater
        f"TC-002,{SYSTEMS[0]},Bo,5,5,5,sometimes,,",  # unknown confidence
        f"TC-002,{SYSTEMS[0]},Bo,5,5,5,,,",  # the same row twice
        f"TC-003,{SYSTEMS[0]},Bo,5,5,5,,,yesterday",  # not a time
    )
    problems = problems_of(study, data)
    text = "\n".join(problems)
    assert "Row 3, column Helpfulness: 9 is not allowed" in text
    assert "Row 4, column System: TC-001 has no response by Nobody-1" in text
    assert "Row 5, column Case ID: There is no test case TC-999" in text
    assert "Row 6, column Rater: The rater's name is empty." in text
    assert "Row 8, column System: A second row for TC-002" in text
    assert "Row 9, column Timestamp" in text
    # TC-001 lacks a row for the third system; TC-003 for two.
    assert f"TC-001 has no row for system {SYSTEMS[2]}" in text
    assert snapshot() == before


def test_a_header_problem_names_the_columns_expected():
    study = likert_study()
    problems = problems_of(study, csv_bytes("Case ID,System,Rater,Helpfulness,Colour", "x"))
    text = "\n".join(problems)
    assert "column Colour: Unknown column" in text
    assert "column Clarity: This column is missing." in text


def test_refused_when_the_study_holds_a_rating_made_in_concord():
    study = likert_study()
    rating_made_in_concord(study)
    before = snapshot()
    problems = problems_of(study, full_file(), dry_run=True)
    assert problems == [CONCORD_HELD_MESSAGE]
    assert problems_of(study, full_file()) == [CONCORD_HELD_MESSAGE]
    assert snapshot() == before


def test_once_imported_the_study_takes_no_rating_made_in_concord_and_assigns_nothing():
    study = likert_study()
    rater = concord_rater(study)
    run(study, full_file())
    with pytest.raises(RatingClosedError) as caught:
        rating_submit(
            assignment=rater.assignments.first(), payload=screen_payload(), any_version=True
        )
    assert str(caught.value) == IMPORTED_HELD_MESSAGE
    assert "blinding" in IMPORTED_HELD_MESSAGE
    with pytest.raises(AssignmentDesignError, match="imported from elsewhere"):
        study_assign(study=study)


def test_a_worksheet_is_refused_once_the_study_holds_imported_ratings(client):
    from annotation import worksheets

    study = likert_study()
    rater = membership_add(study=study, user=UserFactory(), role=Membership.Role.RATER)
    run(study, full_file())
    with pytest.raises(WorksheetError) as caught:
        worksheets.worksheet_import(
            study=study,
            pseudonym=rater.pseudonym,
            filename="w.csv",
            data=csv_bytes(
                "TC-ID,Response,Helpfulness,Clarity,Accuracy,Total,Confidence",
                *(f"TC-001,{label},3,3,3,9,High" for label in "ABC"),
            ),
        )
    assert IMPORTED_HELD_MESSAGE in str(caught.value)


def test_an_xlsx_file_reads_as_the_csv_does():
    study = likert_study()
    workbook = Workbook()
    sheet = workbook.active
    for line in full_file().decode().splitlines():
        sheet.append([int(c) if c.isdigit() else c for c in line.split(",")])
    import io

    buffer = io.BytesIO()
    workbook.save(buffer)
    summary = run(study, buffer.getvalue(), filename="ratings.xlsx")
    assert summary.ratings == 18


def test_only_pilot_or_open_studies_take_an_import():
    study = likert_study()
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    study.refresh_from_db()
    [problem] = problems_of(study, full_file())
    assert "closed" in problem


def test_a_preference_names_the_system_preferred_or_a_tie():
    study = likert_study(slug="pairwise", systems=("Kestrel-9", "Heron-4"), preset="pairwise")
    header = "Case ID,System,Rater,Overall preference,Notes"
    data = csv_bytes(
        header,
        "TC-001,,Ann,Kestrel-9:2,",  # one row per case suffices: the rubric rates each case once
        "TC-002,Kestrel-9,Ann,Heron-4:1,",
        "TC-002,Heron-4,Ann,,",  # or any of the case's rows
        "TC-003,,Ann,tie,",
    )
    summary = run(study, data)
    assert summary.cases == 3
    preferred = {}
    for assignment in Assignment.objects.filter(test_case__study=study).select_related("test_case"):
        names = {
            label.label: label.response.system.name
            for label in assignment.test_case.labels.select_related("response__system")
        }
        choice = assignment.case_scores["preference"]["choice"]
        # Negative prefers key label A, in key order; the strength is the number's size.
        side = "tie" if choice == 0 else names["A" if choice < 0 else "B"]
        preferred[assignment.test_case.case_id] = (side, abs(choice))
    assert preferred == {"TC-001": ("Kestrel-9", 2), "TC-002": ("Heron-4", 1), "TC-003": ("tie", 0)}


def test_a_preference_without_its_strength_or_naming_no_system_is_a_problem():
    study = likert_study(slug="pairwise", systems=("Kestrel-9", "Heron-4"), preset="pairwise")
    data = csv_bytes(
        "Case ID,Rater,Overall preference",
        "TC-001,Ann,Kestrel-9",
        "TC-002,Ann,Osprey-1",
        "TC-003,Ann,Heron-4:3",
    )
    text = "\n".join(problems_of(study, data))
    assert "Row 2, column Preference: Preference has 2 strengths" in text
    assert "Row 3, column Preference: Osprey-1 names no system" in text
    assert "Row 4, column Preference: Heron-4:3: the strength runs from 1" in text


def test_the_problems_are_bounded():
    study = likert_study()
    data = csv_bytes(HEADER, *(f"TC-999,{SYSTEMS[0]},Ann,5,5,5,,," for _ in range(1000)))
    assert len(problems_of(study, data)) == 200


def test_the_columns_are_the_studys_own_rubric():
    study = likert_study(preset="reference")
    assert ratings_by_system.ratings_file_headings(study=study) == [
        "Case ID", "System", "Rater", "Depth", "Evidence", "Alternatives", "Structure",
        "Actionability", "Confidence", "Notes", "Timestamp",
    ]  # fmt: skip


def test_the_report_states_the_raters_per_case_the_file_gave():
    """Not the study's setting (none here, which reads "every rater rates every case"):
    two raters on two cases and three on the third."""
    from agreement.report.sections import study_report

    study = likert_study(cases=3)
    lines = full_file(cases=3).decode().strip().splitlines()
    third = [
        line.replace("Ann Example", "Cy Example") for line in lines if line.startswith("TC-003,")
    ]
    third = [line for line in third if "Cy Example" in line]
    run(study, csv_bytes(*lines, *third))
    text = study_report(study=study)["design"]["raters_per_item_text"]
    assert text == (
        "Ratings imported from a file: 2 to 3 raters per test case (2 on 2 cases, 3 on 1 case)"
    )
    Study.objects.filter(pk=study.pk).update(raters_per_item=2)
    study.refresh_from_db()
    text = study_report(study=study)["design"]["raters_per_item_text"]
    assert text.endswith("(2 on 2 cases, 3 on 1 case); the study's setting says 2")
