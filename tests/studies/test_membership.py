"""Joining a study: pseudonyms are handed out one at a time, even to simultaneous joins."""

import threading

import pytest
from django.db import connection, connections

from studies.models import Membership, Study
from studies.services import membership_add

from ..factories import UserFactory, make_study


def test_raters_get_the_next_free_pseudonym_and_coordinators_none(lead):
    study = make_study(lead=lead, slug="join", cases=1, status=Study.Status.DRAFT)
    first = membership_add(study=study, user=UserFactory(), role=Membership.Role.RATER)
    helper = membership_add(study=study, user=UserFactory(), role=Membership.Role.COORDINATOR)
    second = membership_add(study=study, user=UserFactory(), role=Membership.Role.RATER)
    assert (first.pseudonym, helper.pseudonym, second.pseudonym) == ("R-01", "", "R-02")


@pytest.mark.django_db(transaction=True)
def test_simultaneous_joins_all_succeed_with_distinct_pseudonyms():
    if connection.vendor != "postgresql":
        pytest.skip("needs a database with row locks and concurrent connections")
    study = make_study(slug="rush", cases=1, status=Study.Status.OPEN)
    users = [UserFactory() for _ in range(8)]
    start = threading.Barrier(len(users))
    results, errors = [], []

    def join(user):
        try:
            start.wait(timeout=10)
            results.append(
                membership_add(study=study, user=user, role=Membership.Role.RATER).pseudonym
            )
        except Exception as error:  # reported by the assertion below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=join, args=(user,)) for user in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == []
    assert sorted(results) == [f"R-{n:02d}" for n in range(1, len(users) + 1)]
    stored = study.memberships.filter(role=Membership.Role.RATER)
    assert sorted(stored.values_list("pseudonym", flat=True)) == sorted(results)
