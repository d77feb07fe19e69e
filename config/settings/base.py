"""Settings shared by every environment; each value can come from the environment."""

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()

SECRET_KEY = env("SECRET_KEY", default="")
DEBUG = env.bool("DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "crispy_forms",
    "crispy_bootstrap5",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "studies",
    "annotation",
    "agreement",
    "jobs",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "config.security_headers.SecurityHeadersMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

# Security headers on every page, in every environment, so the browser tests see the policy
# that production sends. No inline script or event handler anywhere: scripts are files under
# static/js. Inline style *attributes* stay allowed (progress-bar widths, the agreement
# chart's size) but not <style> elements; Bootstrap's icons are data: images.
CONTENT_SECURITY_POLICY = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "style-src-attr": ["'unsafe-inline'"],
    "img-src": ["'self'", "data:"],
    "font-src": ["'self'"],
    "connect-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}
PERMISSIONS_POLICY_DENIED = [
    "accelerometer",
    "camera",
    "geolocation",
    "gyroscope",
    "magnetometer",
    "microphone",
    "payment",
    "usb",
]
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"

# Sign-in throttling (core/throttle.py): failed attempts per window, per account from one
# client address and per client address; behind a proxy the address comes from
# X-Forwarded-For.
THROTTLE_WINDOW_SECONDS = env.int("THROTTLE_WINDOW_SECONDS", default=15 * 60)
THROTTLE_FAILURES_PER_ACCOUNT = env.int("THROTTLE_FAILURES_PER_ACCOUNT", default=10)
THROTTLE_FAILURES_PER_ADDRESS = env.int("THROTTLE_FAILURES_PER_ADDRESS", default=50)
THROTTLE_PROXY_COUNT = env.int("THROTTLE_PROXY_COUNT", default=0)

# The HTTP API (docs/api.md): personal tokens only, JSON only, one error shape.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["studies.api_auth.TokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "core.api_request.BoundedJSONParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_THROTTLE_CLASSES": [
        "core.api_request.UserThrottle",
        "core.api_request.AnonThrottle",
    ],
    "DEFAULT_PAGINATION_CLASS": "core.api_request.Pagination",
    "EXCEPTION_HANDLER": "core.api.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
API_THROTTLE_RATES = {
    "user": env("API_THROTTLE_PER_USER", default="600/min"),
    "anon": env("API_THROTTLE_ANONYMOUS", default="60/min"),
    "schema": env("API_THROTTLE_SCHEMA", default="10/hour"),
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Concord API",
    "DESCRIPTION": (
        "Scripting a blinded evaluation study: studies, rubric, test cases, raters, "
        "lifecycle, progress, agreement, exports and unblinding. Send a personal token as "
        "`Authorization: Bearer <token>`."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_AUTHENTICATION": [],
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    # One name for each choice set that several endpoints share, so the schema names it
    # once (without these, drf-spectacular makes up names and warns at every check).
    "ENUM_NAME_OVERRIDES": {
        "JobStateEnum": "jobs.models.JOB_STATES",
        "RankingStateEnum": "agreement.api_results.RANKING_STATES",
        "StudyActionEnum": "studies.services.lifecycle.TRANSITIONS",
        "RaterActionEnum": "studies.services.membership.RATER_ACTIONS",
        "TrainingItemKindEnum": "annotation.models.TrainingItem.Kind",
    },
}

# The most of a body Django reads into memory (a form's fields; the API's JSON is read by its
# own parser with the same bound): the API's documented 12 MB (docs/api.md), so that a JSON
# body the API accepts is never refused first by Django's default of 2.5 MB. Uploaded files
# are not counted here: they stream to disk and each upload form bounds its own.
DATA_UPLOAD_MAX_MEMORY_SIZE = 12 * 1024 * 1024

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "studies.navigation.navigation",
            ],
        },
    },
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The embedded default under concurrent raters: WAL lets readers run beside the one
    # writer; IMMEDIATE takes the write lock when a transaction begins, so two writers
    # queue (up to the timeout) instead of one failing with "database is locked" halfway
    # through; NORMAL syncing is safe with WAL.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": 30,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
    )
# Behind a pooler in transaction mode (PgBouncer, docs/deployment.md) a connection is
# PostgreSQL's only for one transaction: a server-side cursor, which lives in the session,
# would be lost between two fetches of ``.iterator()``, so rows are read client-side.
# Django keeps no other session state (the time zone is a parameter PgBouncer restores).
DATABASE_POOL_MODE = env("DATABASE_POOL_MODE", default="session")
if DATABASE_POOL_MODE == "transaction":
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    # Rendered template fragments keyed by everything they depend on (the rating form's
    # fields for a rubric and a label): each process keeps its own, nothing is shared.
    "fragments": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "fragments",
        "OPTIONS": {"MAX_ENTRIES": 1000},
    },
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# Uploaded test-case files, kept between their preview and their import and afterwards as
# the record of what was imported. Never served: only the import reads them. Every process
# that imports (web workers, the Celery worker) must see the same directory.
CASE_UPLOAD_ROOT = env.path("CASE_UPLOAD_ROOT", default=BASE_DIR / "var" / "case-uploads")
# The files jobs write (a large export, prepared as a job): written by the worker (or a
# thread of the web process), downloaded through the web app, which checks who may, so
# never served directly. Every web node and jobs worker must see the same directory.
JOB_FILES_ROOT = env.path("JOB_FILES_ROOT", default=BASE_DIR / "var" / "job-files")
# A job's file is removed this many hours after the job ended (or once a newer one of the
# same export replaces it).
JOB_FILES_HOURS = env.int("JOB_FILES_HOURS", default=24)
# Exports of a study with at least this many submitted ratings are prepared as a job on the
# results page (the long table, the worksheet, the Excel worksheet, the report bundle); a
# smaller study's download directly (docs/exports.md).
EXPORT_JOB_FROM = env.int("EXPORT_JOB_FROM", default=20_000)

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

CRISPY_ALLOWED_TEMPLATE_PACKS = "bootstrap5"
CRISPY_TEMPLATE_PACK = "bootstrap5"

# Celery: JSON only, bounded run time, acknowledged after the task ran so a
# worker killed mid-run gives the task back to the broker (at once when only a pool
# process dies: reject_on_worker_lost; after visibility_timeout when the whole worker does).
REDIS_URL = env("REDIS_URL", default="redis://127.0.0.1:6379/0")
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=REDIS_URL)
CELERY_RESULT_BACKEND = None
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = 120
CELERY_TASK_TIME_LIMIT = 180
# Where every background job runs (the case import, Assign, the recompute, the analysis):
# "celery" on the worker (production), "thread" in a thread of the web process after the
# response (the embedded default, no broker), "inline" inside the call (the tests).
JOBS_RUN = env("JOBS_RUN", default="celery")
# The project's Celery app, loaded by the job runner before it uses a task (the apps' tasks
# are shared tasks, bound to whichever app is loaded): not at start-up, as a process that
# runs no job (`make run`'s first pages, a management command) need not load Celery.
JOBS_CELERY_APP = "config.celery.app"
CELERY_TASK_EAGER_PROPAGATES = True
# A submit must stay fast when the broker is down: fail fast instead of retrying.
CELERY_BROKER_CONNECTION_TIMEOUT = 2
# With Redis, a message taken by a worker that then dies (no ack) goes back to the queue
# only after visibility_timeout; it must exceed every task's hard time limit plus its
# countdown (the longest: the case import's 31 minutes), or a live run's message would be
# handed out twice while it still runs. Freshness after a dead worker does not wait for it:
# see "Freshness" in docs/statistics.md.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "max_retries": 0,
    "socket_connect_timeout": 2,
    "visibility_timeout": 60 * 60,
}
CELERY_TASK_PUBLISH_RETRY = False
# A worker outlives its broker: it waits for Redis at start-up and after losing it, however
# long that takes (Celery's default gives up after 100 tries), and the Redis transport closes
# a channel cleanly when Redis dies under an unacknowledged task (config/broker_transport.py).
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_BROKER_TRANSPORT = (
    "config.broker_transport:Transport"
    if CELERY_BROKER_URL.startswith(("redis://", "rediss://"))
    else None
)
# A task that is running when the connection is lost runs to its end (its work is saved;
# every task is idempotent): its message, if Redis kept it, comes back after the visibility
# timeout and finds the work done. Cancelling it would lose the work of a long import when
# Redis kept nothing.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# Celery beat recomputes studies left stale, e.g. because the broker was down at submit time.
# Queued every interval, the sweep also shows whether a worker consumes: /healthz reports a
# worker "stalled" when work is queued and none began a task for longer than this.
AGREEMENT_SWEEP_SECONDS = env.int("AGREEMENT_SWEEP_SECONDS", default=60)
CELERY_BEAT_SCHEDULE = {
    "sweep-stale-agreement": {
        "task": "agreement.tasks.sweep_stale_studies",
        "schedule": AGREEMENT_SWEEP_SECONDS,
    },
    # Keeps the jobs queue's worker heartbeat fresh when no job runs (config/celery.py).
    "jobs-heartbeat": {"task": "concord.heartbeat", "schedule": AGREEMENT_SWEEP_SECONDS},
    # Erases the identities whose retention period has ended (studies.services.erasure).
    "purge-identities": {
        "task": "studies.tasks.purge_identities",
        "schedule": env.int("IDENTITY_PURGE_SECONDS", default=24 * 60 * 60),
    },
    # Removes the job files (prepared exports) past JOB_FILES_HOURS (jobs.services).
    "expire-job-files": {"task": "jobs.tasks.job_files_expire_task", "schedule": 60 * 60},
    # Crowd participants idle past their link's time-out: their open cases are released to
    # the next participant (annotation.services.participants; also checked on each join).
    "participants-time-out": {
        "task": "annotation.tasks.participants_time_out_sweep",
        "schedule": env.int("PARTICIPANT_TIMEOUT_SWEEP_SECONDS", default=60),
    },
    # Webhook deliveries whose message was lost (the broker down when they were queued).
    "sweep-webhook-deliveries": {
        "task": "studies.tasks.webhook_deliveries_sweep",
        "schedule": 5 * 60,
    },
}

CELERY_TASK_DEFAULT_QUEUE = env("CELERY_QUEUE", default="concord")
# The scaled-out shape (docs/deployment.md) gives each kind of work a queue and its own
# workers: the recomputes (short and frequent: what the statistics' freshness waits on, and
# beat's sweep) and the jobs (case and worksheet imports, Assign, analyses, the identity
# purge: long). Empty, a kind goes to the default queue, so one worker serves everything.
# Read when each task is sent (config/celery.py, ``route_task``).
RECOMPUTE_QUEUE = env("RECOMPUTE_QUEUE", default="")
JOBS_QUEUE = env("JOBS_QUEUE", default="")
CELERY_TASK_ROUTES = ("config.celery.route_task",)
# The worker's task processes run this much nicer than the web (config/celery.py): on a
# host where they share the cores, raters' requests come first (benchmarks/load.py).
WORKER_NICENESS = env.int("WORKER_NICENESS", default=10)

AGREEMENT_BOOTSTRAP_RESAMPLES = env.int("AGREEMENT_BOOTSTRAP_RESAMPLES", default=10_000)
# A recompute starts this long after the first request of a burst, so a burst of
# submissions is folded into one run.
AGREEMENT_DEBOUNCE_SECONDS = env.float("AGREEMENT_DEBOUNCE_SECONDS", default=1.0)
# Between from-scratch runs, at most this long apart (seconds), a run after a rating
# updates alpha from the tallies of the cases it touched (docs/statistics.md); 0: every
# run is from scratch.
AGREEMENT_FULL_SECONDS = env.int("AGREEMENT_FULL_SECONDS", default=300)
# ... and only for a study with at least this many submitted ratings: below it a run from
# scratch takes a fraction of a second, so every figure (the kappas, per rater, the QC
# checks) stays as fresh as alpha.
AGREEMENT_INCREMENTAL_MIN_RATINGS = env.int("AGREEMENT_INCREMENTAL_MIN_RATINGS", default=20_000)
# Assign: a design of at least this many assignments (sample cases times raters per case)
# runs as a job whose progress the page shows; a smaller one, inside the request (about a
# second per 10,000 assignments on a small machine).
ASSIGN_JOB_FROM = env.int("ASSIGN_JOB_FROM", default=10_000)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
}

# Webhooks (studies.webhooks): a delivery is tried up to WEBHOOK_MAX_ATTEMPTS times, the
# wait doubling from WEBHOOK_RETRY_SECONDS up to WEBHOOK_RETRY_MAX_SECONDS; each request
# has WEBHOOK_TIMEOUT_SECONDS to connect and to answer. Only public addresses are called
# unless WEBHOOK_ALLOW_PRIVATE_ADDRESSES (a receiver on the same network; the tests).
WEBHOOK_MAX_ATTEMPTS = env.int("WEBHOOK_MAX_ATTEMPTS", default=6)
WEBHOOK_RETRY_SECONDS = env.int("WEBHOOK_RETRY_SECONDS", default=30)
WEBHOOK_RETRY_MAX_SECONDS = env.int("WEBHOOK_RETRY_MAX_SECONDS", default=60 * 60)
WEBHOOK_TIMEOUT_SECONDS = env.float("WEBHOOK_TIMEOUT_SECONDS", default=5.0)
WEBHOOK_ALLOW_PRIVATE_ADDRESSES = env.bool("WEBHOOK_ALLOW_PRIVATE_ADDRESSES", default=False)

# E-mail (password reset links). EMAIL_URL picks the backend: consolemail:// prints each
# message to the log (the default), smtp+tls://user:password@host:587 sends it (smtp://,
# smtps:// too); EMAIL_FILE_PATH instead writes one file per message into that directory.
_email = env.email_url("EMAIL_URL", default="consolemail://")
EMAIL_BACKEND = _email["EMAIL_BACKEND"]
EMAIL_HOST = _email["EMAIL_HOST"] or "localhost"
EMAIL_PORT = _email["EMAIL_PORT"] or 25
EMAIL_HOST_USER = _email["EMAIL_HOST_USER"] or ""
EMAIL_HOST_PASSWORD = _email["EMAIL_HOST_PASSWORD"] or ""
EMAIL_USE_TLS = _email.get("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = _email.get("EMAIL_USE_SSL", False)
EMAIL_FILE_PATH = env("EMAIL_FILE_PATH", default="")
if EMAIL_FILE_PATH:
    EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
# DEFAULT_FROM_EMAIL is the sender.
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="concord@localhost")
# Password reset links stay valid for a day.
PASSWORD_RESET_TIMEOUT = env.int("PASSWORD_RESET_TIMEOUT", default=60 * 60 * 24)
# The refusal page for a lost security token (a lost session, cookies cleared): it says so
# and leads back, and answers the rating screen's autosave in JSON.
CSRF_FAILURE_VIEW = "config.errors.csrf_failure"
