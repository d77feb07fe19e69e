import os
from urllib.parse import urlsplit, urlunsplit

import pytest

from jobs.runner import job_threads_join
from studies.models import Membership

from .factories import UserFactory, make_study

# Redis has 16 numbered databases (0-15) unless its configuration says otherwise.
REDIS_DATABASES = 16


def redis_url_for_worker(url: str, worker: int) -> str:
    """``url`` moved from its database index to that index plus ``worker``."""
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    index = base + worker
    if index >= REDIS_DATABASES:
        raise pytest.UsageError(
            f"Redis database {base} + xdist worker {worker} is past the last one "
            f"({REDIS_DATABASES - 1}): point REDIS_URL at a lower index or run fewer workers."
        )
    return urlunsplit(parts._replace(path=f"/{index}"))


def _flush_by_delete() -> None:
    """A transactional test's database is emptied with DELETE, not TRUNCATE: PostgreSQL
    makes new files for every table and index a TRUNCATE names, about 0.5 s for the
    project's tables against 0.02 s for DELETE on the few rows a test leaves. Django's flush
    runs in one transaction and its foreign keys are deferred to the commit, so the order of
    the tables does not matter. The tables are first locked as TRUNCATE locks them, so a
    write still under way (the live server's thread, a worker finishing a job) ends before
    the rows go, not between two DELETEs. A flush that resets sequences keeps TRUNCATE."""
    from django.db.backends.postgresql.operations import DatabaseOperations

    truncate = DatabaseOperations.sql_flush

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if reset_sequences or allow_cascade:
            return truncate(
                self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        if not tables:
            return []
        names = [style.SQL_FIELD(self.quote_name(table)) for table in tables]
        lock = f"{style.SQL_KEYWORD('LOCK TABLE')} {', '.join(names)} IN ACCESS EXCLUSIVE MODE;"
        return [lock, *(f"{style.SQL_KEYWORD('DELETE FROM')} {name};" for name in names)]

    DatabaseOperations.sql_flush = sql_flush


def pytest_configure(config):
    """Under pytest-xdist, each worker its own Redis database: the cache, the broker, the
    coalescing lock and every process a test starts (a Celery worker, ``manage.py``). Two
    workers sharing one would take each other's queued tasks and clear each other's keys.
    The PostgreSQL test database is already per worker (pytest-django adds ``_gw0``...)."""
    _flush_by_delete()
    worker_id = getattr(config, "workerinput", {}).get("workerid")
    if worker_id is None:
        return
    from django.conf import settings

    from config.celery import app as celery_app

    worker = int(worker_id.removeprefix("gw"))
    redis_url = redis_url_for_worker(settings.REDIS_URL, worker)
    broker_url = settings.CELERY_BROKER_URL
    if broker_url.startswith(("redis://", "rediss://")):
        broker_url = redis_url_for_worker(broker_url, worker)
    # The environment for the processes the tests start (a broker given on its own stays on
    # its own; otherwise it follows REDIS_URL there too); the settings for this one.
    os.environ["REDIS_URL"] = redis_url
    if "CELERY_BROKER_URL" in os.environ:
        os.environ["CELERY_BROKER_URL"] = broker_url
    settings.REDIS_URL, settings.CELERY_BROKER_URL = redis_url, broker_url
    celery_app.conf.broker_url = broker_url


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """The slow tests first, in their order: a parallel run hands them out before the short
    ones, so its end is not one process finishing a long test while the others wait."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


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
