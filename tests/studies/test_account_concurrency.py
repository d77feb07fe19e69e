"""One rater's account asked for twice at once (a pipeline's retry while its first request
still runs, two administrators): one account, and the other request told the username is
taken, as when they come one after the other (never a server error). Real threads on
PostgreSQL."""

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from studies.errors import StudySetupError
from studies.models import Membership
from studies.services.accounts import rater_account_create

from ..annotation.test_locks import together
from ..factories import UserFactory, make_study

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _postgresql_only():
    if connection.vendor != "postgresql":
        pytest.skip("needs a database with row locks and concurrent connections")


@pytest.mark.parametrize("studies", [1, 2], ids=["one study", "two studies"])
def test_one_username_asked_for_twice_at_once_is_one_account_and_one_clear_refusal(studies):
    admin = UserFactory(is_staff=True, is_superuser=True)
    made = [make_study(slug=f"accounts-{n}", cases=1, raters=[]) for n in range(studies)]
    targets = [made[0], made[-1]]

    def create(study):
        return lambda: rater_account_create(
            study=study, username="ana", email="ana@example.org", actor=admin, site="http://x"
        )

    runs = together(*(create(study) for study in targets))
    errors = [run.error for run in runs if run.error is not None]
    assert len(errors) == 1, errors
    assert isinstance(errors[0], StudySetupError), repr(errors[0])
    assert "An account with that username exists already." in str(errors[0])
    assert get_user_model().objects.filter(username="ana").count() == 1
    assert Membership.objects.filter(user__username="ana").count() == 1
