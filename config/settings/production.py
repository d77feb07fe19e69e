"""Production: secrets and hosts come from the environment, with no defaults."""

from django.core.checks.security.base import (
    SECRET_KEY_INSECURE_PREFIX,
    SECRET_KEY_MIN_LENGTH,
    SECRET_KEY_MIN_UNIQUE_CHARACTERS,
)
from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import CACHES, DATABASES, MIDDLEWARE, REDIS_URL, env

DEBUG = False
SECRET_KEY = env("SECRET_KEY", default="")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=[])
# What `check --deploy` asks of a key (security.W009), from Django's own constants.
if (
    len(SECRET_KEY) < SECRET_KEY_MIN_LENGTH
    or len(set(SECRET_KEY)) < SECRET_KEY_MIN_UNIQUE_CHARACTERS
    or SECRET_KEY.startswith(SECRET_KEY_INSECURE_PREFIX)
):
    raise ImproperlyConfigured(
        f"Set SECRET_KEY in the environment: at least {SECRET_KEY_MIN_LENGTH} random "
        f"characters, {SECRET_KEY_MIN_UNIQUE_CHARACTERS} or more of them different, not "
        f'starting with "{SECRET_KEY_INSECURE_PREFIX}". One way: python -c "import secrets; '
        f'print(secrets.token_urlsafe(50))"'
    )
if not ALLOWED_HOSTS:
    raise ImproperlyConfigured("Set ALLOWED_HOSTS in the environment (comma-separated).")

# WhiteNoise serves the collected static files right after the security middleware.
MIDDLEWARE = [MIDDLEWARE[0], "whitenoise.middleware.WhiteNoiseMiddleware", *MIDDLEWARE[1:]]

if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A page (and /healthz) fails in seconds, not minutes, when the database is unreachable.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
        "connect_timeout", env.int("DATABASE_CONNECT_TIMEOUT", default=5)
    )
    # Each gunicorn worker keeps its connection between requests (unless the URL says
    # otherwise, e.g. `?conn_max_age=0` behind a transaction pooler): a new one per request
    # costs a connection set-up and a PostgreSQL process each time (benchmarks/load.py).
    # Checked before reuse: a connection the database dropped is replaced, not an error.
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DATABASE_CONN_MAX_AGE", default=60))
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

# One cache for every gunicorn worker, so the sign-in throttle counts across them. Short
# timeouts: the throttle steps aside when Redis is down rather than hold up a sign-in.
CACHES = {
    **CACHES,
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": env("CACHE_URL", default=REDIS_URL),
        "KEY_PREFIX": "concord",
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
    },
}

# TLS ends at the reverse proxy in front (README, "Production"), which must overwrite
# X-Forwarded-Proto and append the client's address to X-Forwarded-For. Only the proxy may
# reach gunicorn: docker-compose.yml publishes it on the loopback interface alone.
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
THROTTLE_PROXY_COUNT = env.int("THROTTLE_PROXY_COUNT", default=1)
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=60 * 60 * 24 * 30)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
if not SECURE_HSTS_PRELOAD:
    # Joining the browsers' preload list is the site owner's decision (hard to undo, and it
    # binds every subdomain), not a default: so "not preloaded" is not reported as an issue.
    SILENCED_SYSTEM_CHECKS = ["security.W021"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
