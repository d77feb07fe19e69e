"""The proof of the import by system: a 14-system, 3-rater, 1,400-row file, generated here
deterministically, gives the same agreement and analysis statistics as the same ratings
entered through the rating screen's write path."""

import math
import random

import pytest

from agreement.analysis.outcomes import compare_systems
from agreement.models import StudyAgreement
from agreement.selectors.comparison import study_comparison_data
from agreement.selectors.ratings import study_ratings
from agreement.services.recompute import agreement_recompute
from annotation import ratings_by_system
from annotation.models import Rating
from annotation.services import assignments_create, rating_submit
from studies.models import BlindedLabel, Membership, Study, StudyEvent
from studies.services import membership_add, study_create
from studies.services import test_cases_add as cases_add
from tests.payloads import close_and_unblind

from ..factories import UserFactory, make_cases

pytestmark = pytest.mark.django_db

SYSTEMS = [f"Summariser-{chr(ord('A') + n)}{n + 2}" for n in range(14)]
RATERS = ["Annotator One", "Annotator Two", "Annotator Three"]
CASES = 50  # x 14 systems x 2 raters per case = 1,400 rows
KEYS = ("helpfulness", "clarity", "accuracy")


def ratings_plan() -> dict[tuple[str, str, str], tuple[int, int, int]]:
    """(case id, system, rater) -> the three 1-5 answers: each case rated by two of the three
    raters in turn, each system with its own level and each rater with their own lean."""
    rng = random.Random(26)
    plan = {}
    for n in range(1, CASES + 1):
        case_id = f"TC-{n:03d}"
        raters = [RATERS[(n - 1) % 3], RATERS[n % 3]]
        for s, system in enumerate(SYSTEMS):
            level = 1 + s * 4 / 13
            for r, rater in enumerate(raters):
                plan[case_id, system, rater] = tuple(
                    min(5, max(1, round(level + rng.gauss(0, 0.8) + 0.3 * r))) for _ in KEYS
                )
    return plan


def study_for(slug: str) -> Study:
    study = study_create(
        slug=slug, name=slug, lead=UserFactory(), rubric_preset="likert", raters_per_item=2
    )
    # One key for both studies, so that what the analysis reads by label (length against
    # preference, say) reads the same systems in each.
    Study.objects.filter(pk=study.pk).update(blinding_secret="proof-of-the-import")
    study.refresh_from_db()
    cases_add(study=study, systems=SYSTEMS, cases=make_cases(CASES, SYSTEMS))
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    study.refresh_from_db()
    return study


def the_file(plan) -> bytes:
    lines = ["Case ID,System,Rater,Helpfulness,Clarity,Accuracy,Confidence,Timestamp"]
    for (case_id, system, rater), values in plan.items():
        lines.append(
            f"{case_id},{system},{rater},{','.join(map(str, values))},high,2023-11-0{1 + len(lines) % 9}"
        )
    return ("\n".join(lines) + "\n").encode()


def through_the_screen(study: Study, plan) -> None:
    """Each rater's answers submitted as the rating screen submits them, by label."""
    members = {
        name: membership_add(study=study, user=UserFactory(), role=Membership.Role.RATER)
        for name in RATERS
    }
    cases = {c.case_id: c for c in study.test_cases.all()}
    label_of = {
        (label.test_case.case_id, label.response.system.name): label.label
        for label in BlindedLabel.objects.filter(test_case__study=study).select_related(
            "test_case", "response__system"
        )
    }
    by_rater: dict[str, dict[str, dict]] = {}
    for (case_id, system, rater), values in plan.items():
        responses = by_rater.setdefault(rater, {}).setdefault(case_id, {})
        responses[label_of[case_id, system]] = {
            key: {"choice": value} for key, value in zip(KEYS, values, strict=True)
        }
    for name, answers in by_rater.items():
        rater = members[name]
        assignments_create(study=study, rater=rater, case_ids=list(answers), cases=cases)
        for assignment in rater.assignments.select_related("test_case"):
            rating_submit(
                assignment=assignment,
                payload={
                    "responses": answers[assignment.test_case.case_id],
                    "confidence": "high",
                },
                any_version=True,
            )


def assert_close(left, right, where="result"):
    """Equal, numbers to within 1e-9 (summed in another order, they may differ in the last bit)."""
    if isinstance(left, dict):
        assert set(left) == set(right), where
        for key in left:
            assert_close(left[key], right[key], f"{where}.{key}")
    elif isinstance(left, list | tuple):
        assert len(left) == len(right), where
        for i, (a, b) in enumerate(zip(left, right, strict=True)):
            assert_close(a, b, f"{where}[{i}]")
    elif isinstance(left, float) and isinstance(right, float):
        assert (math.isnan(left) and math.isnan(right)) or left == pytest.approx(right, abs=1e-9), (
            where
        )
    else:
        assert left == right, where


def agreement_of(study: Study) -> dict:
    agreement_recompute(study_id=study.pk)
    result = StudyAgreement.objects.get(study=study).result
    return {k: v for k, v in result.items() if k not in ("computed_at", "inputs")}


def analysis_of(study: Study) -> dict:
    study = close_and_unblind(study)
    data = study_comparison_data(study=study, data=study_ratings(study=study, pilot=False))
    result = compare_systems(data, n_resamples=200, seed=0)
    return result


def test_a_1400_row_file_gives_the_statistics_of_the_same_ratings_made_on_the_screen():
    plan = ratings_plan()
    assert len(plan) == 1_400
    imported = study_for("imported-by-system")
    summary = ratings_by_system.ratings_file_import(
        study=imported, filename="summaries.csv", data=the_file(plan), actor=imported.lead
    )
    assert (summary.rows, summary.ratings, summary.raters, summary.cases) == (1400, 1400, 3, 50)
    assert Rating.objects.filter(assignment__test_case__study=imported).count() == 1_400
    screened = study_for("made-on-the-screen")
    through_the_screen(screened, plan)
    # The same raters in the same order: R-01 is the first name of the file.
    assert (
        list(
            imported.memberships.filter(role="rater")
            .order_by("pseudonym")
            .values_list("external_name", flat=True)
        )
        == RATERS
    )
    assert_close(agreement_of(imported), agreement_of(screened), "agreement")
    analysis = analysis_of(imported)
    assert_close(analysis, analysis_of(screened), "analysis")
    # Something to compare: every system's means, and the 91 pairs of 14 systems per measure.
    assert analysis["systems"] == sorted(SYSTEMS) and analysis["n_cases"] == CASES
    assert len(analysis["per_system"][0]["systems"]) == 14
    pairs = {(p["first"], p["second"]) for p in analysis["paired"] if p["measure"] == "total"}
    assert len(pairs) == 91
    event = imported.events.get(kind=StudyEvent.Kind.RATINGS_IMPORTED)
    assert (event.detail["ratings"], event.detail["raters"]) == (1400, 3)
