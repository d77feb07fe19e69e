"""Numbers and words that agree: a scale's range as the kind gives it, test cases and
quality items counted apart on every page, the long table's version of a first
submission, the gold item page's Markdown, and the self-check of a Likert study."""

import csv
import io

import pytest
from django.urls import reverse

from annotation.exports import long_rows
from annotation.models import Assignment
from annotation.services import draft_save, rating_submit
from studies.models import Study
from studies.models import TestCase as Case
from studies.services import study_create
from studies.services import test_cases_add as cases_add
from studies.services.quality import attention_check_create

from ..factories import UserFactory, make_cases, make_study
from ..payloads import payload_for, submit

pytestmark = pytest.mark.django_db


def test_the_rubric_page_states_a_1_to_5_scale_as_1_to_5(client):
    lead = UserFactory()
    study = study_create(slug="likert-range", name="Likert", lead=lead, rubric_preset="likert")
    client.force_login(lead)
    page = client.get(reverse("studies:rubric", args=[study.slug])).content.decode()
    assert "1–5 points" in page and "0–5 points" not in page
    # The reference rubric's counted dimensions still start at 0.
    reference = make_study(lead=lead, slug="reference-range", status=Study.Status.DRAFT)
    page = client.get(reverse("studies:rubric", args=[reference.slug])).content.decode()
    assert "0–5 points" in page


def test_the_welfare_strata_count_quality_items_apart(client):
    study = make_study(cases=4, status=Study.Status.DRAFT)
    attention_check_create(study=study, case_id="TC-900", prompt="p", text="", actor=study.lead)
    stratum = Case.objects.get(case_id="TC-900", study=study).stratum
    client.force_login(study.lead)
    page = client.get(reverse("annotation:welfare", args=[study.slug])).content.decode()
    # 2 test cases in the stratum, and the attention check apart (not "3 cases").
    assert f"{stratum}<br>" in page
    assert "2 test cases, and 1 quality item counted apart" in page


def test_the_long_table_numbers_a_first_submission_1_whatever_the_drafts():
    rater = UserFactory()
    study = make_study(cases=1, raters=[rater], consented=True)
    assignment = Assignment.objects.get(rater__user=rater)
    for n in range(3):
        assignment = draft_save(
            assignment=assignment, payload=payload_for(n), expected_version=assignment.version
        )
    submit(assignment, payload_for(1))

    def versions():
        header, *rows = list(long_rows(study=study))
        return {row[header.index("version")] for row in rows}

    assert versions() == {1}
    rating_submit(assignment=assignment, payload=payload_for(2), any_version=True)
    assert versions() == {2}
    text = io.StringIO()
    csv.writer(text).writerows(long_rows(study=study))
    assert ",2," in text.getvalue()


def test_the_gold_item_page_renders_markdown_as_the_rating_screen_does(client):
    lead = UserFactory()
    study = study_create(slug="gold-md", name="Gold", lead=lead)
    cases = make_cases(2)
    cases[1]["id"] = "Q-1"
    cases[1]["prompt"] = "Compare **these** plans. <script>alert(1)</script>"
    cases[1]["responses"] = {"baseline": "- one\n- two", "improved": "`code`"}
    cases_add(study=study, systems=["baseline", "improved"], cases=cases)
    case = study.test_cases.get(case_id="Q-1")
    client.force_login(lead)
    page = client.get(reverse("studies:quality_item", args=[study.slug, case.uuid])).content
    page = page.decode()
    assert "<strong>these</strong>" in page and "**these**" not in page
    assert "<li>one</li>" in page and "<code>code</code>" in page
    assert "<script>alert(1)</script>" not in page


def test_the_self_check_of_a_likert_study_says_nothing_of_counting(client):
    lead, rater = UserFactory(), UserFactory()
    study = study_create(slug="likert-self", name="Likert", lead=lead, rubric_preset="likert")
    cases_add(study=study, systems=["baseline", "improved"], cases=make_cases(1))
    from annotation.services import assignments_create_all
    from annotation.services.participation import consent_record
    from studies.models import Membership
    from studies.services import membership_add

    membership = membership_add(study=study, user=rater, role=Membership.Role.RATER)
    assignments_create_all(study=study, rater=membership)
    consent_record(rater=membership, agreed=True, prior_knowledge=False)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.OPEN)
    answers = {d.key: {"choice": 4} for d in study.rubric.scoring_dimensions()}
    rating_submit(
        assignment=membership.assignments.get(),
        payload={"responses": {"A": answers, "B": answers}, "confidence": "high"},
        any_version=True,
    )
    client.force_login(rater)
    page = client.get(reverse("annotation:self_check", args=[study.slug])).content.decode()
    assert "count factors" not in page and "counted at different weights" not in page
    assert "apply each dimension the same way" in page
