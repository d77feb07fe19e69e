"""The quality-control page costs the same number of queries with 2 raters as with 12.

Like the coordinator's pages (tests/annotation/test_page_queries.py): every rater's row,
flags, dismissed flags and decisions are read for all raters at once, never per rater.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from agreement.selectors import qc_checks, study_agreement
from agreement.services.recompute import agreement_request_recompute
from annotation.services import rating_submit
from studies.models import Membership, Study
from studies.services import rater_status_change
from tests.payloads import full_marks_payload

from ..factories import UserFactory, make_study


def _rated_study(raters: int, admin) -> Study:
    users = [UserFactory() for _ in range(raters)]
    study = make_study(slug=f"qc-{raters}", cases=2, raters=users)
    memberships = study.memberships.filter(role=Membership.Role.RATER)
    for membership in memberships:
        for assignment in membership.assignments.all():
            rating_submit(assignment=assignment, payload=full_marks_payload(), expected_version=0)
    agreement_request_recompute(study_id=study.pk)  # in-process here: it runs at once
    checks = qc_checks(agreement=study_agreement(study=study))
    # Every rater is flagged (no active time): dismiss one of each rater's flags, so the
    # page reads dismissed flags and decisions for every row.
    for membership in memberships:
        flags = checks[membership.pseudonym]["flags"]
        assert flags
        rater_status_change(
            membership=membership, action="dismiss", reason="Looked", actor=admin, flags=flags[:1]
        )
    return study


def _queries(client, study: Study) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(reverse("agreement:qc", args=[study.slug]))
    assert response.status_code == 200
    return len(captured), response.text


@pytest.mark.django_db
def test_the_qc_page_costs_the_same_queries_with_2_and_12_raters(client):
    admin = UserFactory(is_staff=True)
    small, large = _rated_study(2, admin), _rated_study(12, admin)
    client.force_login(admin)
    _queries(client, small)  # warm the caches (session, content types)
    small_count, _ = _queries(client, small)
    large_count, page = _queries(client, large)
    assert small_count == large_count
    # The page did list every rater with their dismissed flag, so the count covers it.
    assert "R-12" in page and page.count("(dismissed)") == 12
