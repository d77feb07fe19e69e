"""The report's rater profile: counts only, small cells suppressed, and the cell that
would give a suppressed one away by subtraction suppressed too."""

import pytest

from annotation.models import RaterProfile
from annotation.selectors.profile import PREFER_NOT, _suppressed, profile_summary
from studies.models import Membership, ProfileQuestion, WelfareSettings
from tests.factories import UserFactory, make_study


def counts(rows) -> dict:
    return {row["answer"]: row["count"] for row in rows}


def test_small_cells_are_hidden_and_one_complementary_cell_with_them():
    rows = [{"answer": "a", "count": 9}, {"answer": "b", "count": 6}, {"answer": "c", "count": 2}]
    # c alone hidden would be total - 9 - 6: the smallest other cell (b) goes too.
    assert counts(_suppressed(rows, min_cell=5)) == {"a": 9, "b": None, "c": None}


def test_two_small_cells_hide_each_other():
    rows = [{"answer": "a", "count": 9}, {"answer": "b", "count": 3}, {"answer": "c", "count": 2}]
    assert counts(_suppressed(rows, min_cell=5)) == {"a": 9, "b": None, "c": None}


def test_a_zero_is_shown_but_hides_a_lone_small_cell_when_it_is_the_smallest():
    rows = [{"answer": "a", "count": 7}, {"answer": "b", "count": 0}, {"answer": "c", "count": 1}]
    assert counts(_suppressed(rows, min_cell=5)) == {"a": 7, "b": None, "c": None}
    rows = [{"answer": "a", "count": 7}, {"answer": "b", "count": 0}]
    assert counts(_suppressed(rows, min_cell=5)) == {"a": 7, "b": 0}


def test_a_total_under_the_minimum_hides_every_cell():
    rows = [{"answer": "a", "count": 3}, {"answer": "b", "count": 0}]
    assert counts(_suppressed(rows, min_cell=5)) == {"a": None, "b": None}


@pytest.fixture
def summary_study(db):
    raters = [UserFactory() for _ in range(8)]
    study = make_study(cases=1, raters=raters)
    ProfileQuestion.objects.bulk_create(
        [
            ProfileQuestion(study=study, key="lang", label="Language", kind="choice",
                            config={"choices": ["en", "fr"]}, position=0),
            ProfileQuestion(study=study, key="years", label="Years", kind="number",
                            config={"min": 0, "max": 50}, position=1),
            ProfileQuestion(study=study, key="title", label="Title", kind="text", position=2),
        ]
    )  # fmt: skip
    members = list(study.memberships.filter(role=Membership.Role.RATER).order_by("pk"))
    given = [
        {"lang": "en", "years": 1, "title": "private words"},
        {"lang": "en", "years": 2, "title": "private words"},
        {"lang": "en", "years": 3, "title": None},
        {"lang": "en", "years": 4, "title": None},
        {"lang": "en", "years": 5, "title": None},
        {"lang": "fr", "years": None, "title": None},
        {"lang": None, "years": 7, "title": None},
    ]
    for membership, answers in zip(members, given, strict=False):
        RaterProfile.objects.create(rater=membership, consented=True, answers=answers,
                                    answered_at="2026-01-01T00:00Z")  # fmt: skip
    RaterProfile.objects.create(rater=members[7], consented=False, answers={},
                                answered_at="2026-01-01T00:00Z")  # fmt: skip
    return study


def test_the_summary_counts_suppresses_and_never_shows_text(summary_study):
    summary = profile_summary(study=summary_study)
    assert (summary["raters"], summary["consented"], summary["declined"]) == (8, 7, 1)
    assert summary["min_cell"] == 5
    lang, years, title = summary["questions"]
    # en 5, fr 1, prefer not 1: fr and prefer-not hide each other.
    assert counts(lang["rows"]) == {"en": 5, "fr": None, PREFER_NOT: None}
    # One withheld: alone it would be hidden, and the total would give it away.
    assert counts(years["rows"]) == {"Answered": None, PREFER_NOT: None}
    assert years["median"] == 3.5  # six answers, at least the minimum cell
    assert counts(title["rows"]) == {"Answered": None, PREFER_NOT: None}
    assert "private words" not in str(summary)


def test_the_median_needs_the_minimum_cell_of_answers(summary_study):
    WelfareSettings.objects.create(study=summary_study, profile_min_cell=7)
    years = profile_summary(study=summary_study)["questions"][1]
    assert years["median"] is None
    assert counts(years["rows"]) == {"Answered": None, PREFER_NOT: None}


def test_a_smaller_minimum_shows_more(summary_study):
    WelfareSettings.objects.create(study=summary_study, profile_min_cell=1)
    lang = profile_summary(study=summary_study)["questions"][0]
    assert counts(lang["rows"]) == {"en": 5, "fr": 1, PREFER_NOT: 1}
