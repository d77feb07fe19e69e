"""Settings for ``benchmarks/case_import_http.py``: the local ones with DEBUG off, one Redis
cache for every gunicorn worker and the Celery worker (the production shape's), and jobs
run by Celery. Plain HTTP on the loopback, so no secure cookies."""

from config.settings.local import *  # noqa: F403
from config.settings.local import CACHES, REDIS_URL

DEBUG = False
JOBS_RUN = "celery"
CACHES = {
    **CACHES,
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "bench-import",
    },
}
