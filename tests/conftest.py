import pytest

from jobs.runner import job_threads_join
from studies.models import Membership

from .factories import UserFactory, make_study


@pytest.fixture
def jobs_in_threads(settings):
    """Jobs run in a thread after commit, as in the embedded default; each has ended (with
    the jobs it started) before the test's database is emptied."""
    settings.JOBS_RUN = "thread"
    yield
    job_threads_join()


@pytest.fixture(autouse=True)
def _no_sign_in_failures_counted():
    """The sign-in throttle counts failures in the cache: every test starts with none."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def rater(db):
    return UserFactory(username="rater-owner")


@pytest.fixture
def other_rater(db):
    return UserFactory(username="rater-other")


@pytest.fixture
def lead(db):
    return UserFactory(username="study-lead")


@pytest.fixture
def stranger(db):
    """Signed in, but with no part in the study: should have no access."""
    return UserFactory(username="stranger")


@pytest.fixture
def study(lead, rater, other_rater):
    return make_study(lead=lead, slug="main-study", cases=4, raters=[rater, other_rater])


@pytest.fixture
def membership(study, rater):
    return Membership.objects.get(study=study, user=rater)
