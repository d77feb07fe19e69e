"""The set-up checklist: each item done or missing, quality items counted apart."""

import pytest
from django.utils import timezone

from agreement.models import AnalysisPlan
from studies.models import Membership, Study
from studies.models import TestCase as Case
from studies.selectors import study_case_summary, study_setup_checklist
from studies.services import membership_add

from ..factories import UserFactory, make_study

pytestmark = pytest.mark.django_db


def items(study) -> dict:
    return {item.title: item for item in study_setup_checklist(study=study).items}


def test_a_new_draft_lists_every_step_and_the_next_one():
    study = make_study(cases=0, raters=[], status=Study.Status.DRAFT)
    checklist = study_setup_checklist(study=study)
    assert [item.title for item in checklist.items] == [
        "Test cases",
        "Rubric",
        "Quality items",
        "Raters",
        "Consent and training",
        "Rater pay",
        "Adjudication rules",
        "Analysis plan (primary question)",
        "Assignment",
    ]
    found = items(study)
    assert not found["Test cases"].done and not found["Raters"].done
    assert found["Quality items"].optional
    assert checklist.next.title == "Test cases"


def test_quality_items_are_counted_apart_from_the_test_cases():
    study = make_study(cases=5, raters=[], status=Study.Status.DRAFT)
    Case.objects.filter(study=study, case_id="TC-001").update(
        purpose=Case.Purpose.GOLD, key_shown_at=timezone.now()
    )
    Case.objects.filter(study=study, case_id="TC-002").update(
        purpose=Case.Purpose.ATTENTION, key_shown_at=timezone.now()
    )
    summary = study_case_summary(study=study)
    assert (summary["cases"], summary["gold"], summary["attention"]) == (3, 1, 1)
    found = items(study)
    assert found["Test cases"].detail.startswith("3 test cases")
    assert found["Quality items"].done
    assert "1 gold item and 1 attention check" in found["Quality items"].detail


def test_items_turn_done_as_the_study_is_set_up():
    study = make_study(cases=3, raters=[], status=Study.Status.DRAFT)
    Study.objects.filter(pk=study.pk).update(raters_per_item=2, consent_text="About this study")
    study.refresh_from_db()
    membership_add(study=study, user=UserFactory(), role=Membership.Role.RATER)
    found = items(study)
    assert found["Test cases"].done and found["Consent and training"].done
    assert not found["Raters"].done and "needs at least 2" in found["Raters"].detail
    assert not found["Assignment"].done
    membership_add(study=study, user=UserFactory(), role=Membership.Role.RATER)
    AnalysisPlan.objects.create(study=study, primary_measure="total")
    found = items(study)
    assert found["Raters"].done and found["Assignment"].done
    assert found["Analysis plan (primary question)"].done
    assert found["Analysis plan (primary question)"].anchor == "#primary-question"
