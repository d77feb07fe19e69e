"""The same file of ratings by system imported twice at once (two tabs, or a pipeline that
retries while its first request still runs): each rater the file names is one rater of the
study, never two. Real threads on PostgreSQL."""

import pytest
from django.db import connection

from annotation import ratings_by_system
from annotation.models import Rating
from studies.models import Membership

from .test_locks import refused_or_done, together
from .test_ratings_by_system import full_file, likert_study

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("needs a database with row locks and concurrent connections")


def test_one_file_imported_twice_at_once_names_each_rater_once():
    study = likert_study(slug="twice-at-once")
    data = full_file(raters=("Ann Example", "Bo Example"))

    def one_import():
        return ratings_by_system.ratings_file_import(
            study=study, filename="ratings.csv", data=data, actor=study.lead
        )

    runs = together(one_import, one_import)
    assert all(refused_or_done(run) for run in runs), [run.error for run in runs]
    raters = Membership.objects.filter(study=study, role=Membership.Role.RATER)
    assert sorted(raters.values_list("external_name", flat=True)) == ["Ann Example", "Bo Example"]
    # Three cases, three systems, two raters: the second import replaced the first's answers.
    assert Rating.objects.filter(assignment__test_case__study=study).count() == 18
