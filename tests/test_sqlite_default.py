"""The embedded default (SQLite, in-process tasks) under concurrent raters loses nothing."""

import pytest

from tests.processes import sqlite_script_outcome

SCRIPT = r"""
import json, threading
import django
django.setup()
from django.db import connection
from annotation.models import Assignment, Rating
from annotation.services import draft_save, rating_submit
from studies.models import Membership
from tests.factories import UserFactory, make_study
from tests.payloads import full_marks_payload

study = make_study(slug="busy", cases=6, raters=[UserFactory() for _ in range(8)])
raters = list(study.memberships.filter(role=Membership.Role.RATER))
errors = []
start = threading.Barrier(len(raters))

def rate(rater):
    try:
        start.wait()
        for assignment in Assignment.objects.filter(rater=rater):
            saved = draft_save(
                assignment=assignment, payload=full_marks_payload(), expected_version=0
            )
            rating_submit(
                assignment=saved, payload=full_marks_payload(), expected_version=saved.version
            )
    except Exception as error:
        errors.append(repr(error))
    finally:
        connection.close()

threads = [threading.Thread(target=rate, args=(rater,)) for rater in raters]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(json.dumps({
    "errors": errors,
    "ratings": Rating.objects.filter(assignment__test_case__study=study).count(),
    "submitted": Assignment.objects.filter(
        test_case__study=study, status="submitted").count(),
}))
"""


@pytest.mark.slow
@pytest.mark.integration
def test_eight_raters_at_once_on_sqlite_lose_nothing(tmp_path):
    outcome = sqlite_script_outcome(SCRIPT, tmp_path=tmp_path, AGREEMENT_BOOTSTRAP_RESAMPLES="200")
    assert outcome["errors"] == []
    assert outcome["submitted"] == 8 * 6
    assert outcome["ratings"] == 8 * 6 * 2
