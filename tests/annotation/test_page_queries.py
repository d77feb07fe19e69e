"""The coordinator's pages cost the same number of queries at 10 cases as at 200.

A page lists one page of cases and reads the stored blinding check; nothing on it may
run a query per case, or read every case of the study.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.assignment_jobs import assignment_job_start
from annotation.models import Assignment
from annotation.services import draft_save
from studies.models import Response, Study
from studies.services import identity_mentions_rescan

from ..factories import UserFactory, make_study
from ..payloads import full_marks_payload

PAGES = [
    "studies:cases",
    "annotation:results",
    "annotation:overview",
    "studies:status",
    "annotation:raters",
]


def _study(size: int, lead) -> Study:
    raters = [UserFactory() for _ in range(2)]
    study = make_study(
        lead=lead, slug=f"size-{size}", cases=size, raters=raters, status=Study.Status.DRAFT
    )
    # A finding in the first and the last case, so the blinding check has something to list.
    Response.objects.filter(test_case__study=study, test_case__position__in=[0, size - 1]).update(
        text="As an AI developed by OpenAI, I would stage the release."
    )
    identity_mentions_rescan(study=study)
    return study


def _queries(client, name: str, study: Study, **query) -> int:
    args = [study.slug, "open"] if name == "studies:status" else [study.slug]
    with CaptureQueriesContext(connection) as captured:
        response = client.get(reverse(name, args=args), query)
    assert response.status_code == 200
    return len(captured)


@pytest.mark.django_db
@pytest.mark.parametrize("name", PAGES)
def test_a_page_costs_the_same_queries_at_10_and_at_200_cases(client, name):
    lead = UserFactory()
    small, large = _study(10, lead), _study(200, lead)
    client.force_login(lead)
    _queries(client, name, small)  # warm the caches (session, content types)
    assert _queries(client, name, small) == _queries(client, name, large)
    if name not in ("studies:status", "annotation:raters"):
        assert _queries(client, name, large, page=3) == _queries(client, name, small)


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["annotation:results", "annotation:overview"])
def test_the_progress_tables_list_one_page_of_cases(client, name):
    lead = UserFactory()
    study = _study(120, lead)
    client.force_login(lead)
    first = client.get(reverse(name, args=[study.slug])).text
    last = client.get(reverse(name, args=[study.slug]), {"page": 3}).text
    assert "TC-001" in first and "TC-050" in first and "TC-051" not in first
    assert "TC-101" in last and "TC-120" in last and "TC-100" not in last
    assert "Page 3 of 3" in last
    assert "0 / 2" in first  # the counts are still read per case


@pytest.mark.django_db
def test_the_case_list_asks_whether_rating_began_without_counting_assignments(client):
    """Every set-up page asks; it must cost the same at 30 assignments as at 30,000."""
    lead = UserFactory()
    study = _study(30, lead)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.PILOT)  # rating, not frozen
    client.force_login(lead)
    url = reverse("studies:cases", args=[study.slug])
    with CaptureQueriesContext(connection) as captured:
        before = client.get(url).text
    assert not [q for q in captured if 'COUNT("annotation_assignment"' in q["sql"]]
    assert "Raters have started rating" not in before
    assignment = Assignment.objects.filter(test_case__study=study).first()
    draft_save(assignment=assignment, payload=full_marks_payload(), expected_version=0)
    assert "Raters have started rating" in client.get(url).text


@pytest.mark.django_db
def test_an_assignment_jobs_pages_cost_the_same_queries_at_10_and_at_200_cases(
    client, settings, jobs_in_threads
):
    settings.ASSIGN_JOB_FROM = 0  # started in a thread, then held: nothing commits in a test
    lead = UserFactory()
    client.force_login(lead)
    counts = []
    for size in (10, 200):
        study = _study(size, lead)
        Assignment.objects.filter(test_case__study=study).delete()
        job = assignment_job_start(study=study, actor=lead)
        for name in ("annotation:assign_job", "annotation:assign_job_status"):
            client.get(reverse(name, args=[study.slug, job.uuid]))  # warm
            with CaptureQueriesContext(connection) as captured:
                assert client.get(reverse(name, args=[study.slug, job.uuid])).status_code == 200
            counts.append((size, name, len(captured)))
    assert [c[2] for c in counts[:2]] == [c[2] for c in counts[2:]], counts
