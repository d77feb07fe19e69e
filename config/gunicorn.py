"""gunicorn's settings for the production image (`gunicorn -c config/gunicorn.py ...`)."""

import os

# Inside the container; docker-compose.yml publishes the port on the host's loopback only,
# for the reverse proxy.
bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", "3"))
# A request still running after this is killed (the client gets 502 from the proxy). Every
# upload is bounded well below it; raise it only together with the proxy's read timeout.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
graceful_timeout = 30
keepalive = 5
accesslog = "-"
# Each request's path, never its query string nor its referer's: a join URL's carries a
# crowd participant's ids (config/access_log.py).
logger_class = "config.access_log.AccessLogger"

# The master loads the application once and the workers are forked from it, so they share
# its pages (Python's code objects and the libraries) instead of each loading its own:
# benchmarks/memory.py, with the figures in benchmarks/README.md. Not numpy and the
# statistics: a worker imports them on the first page that computes with them (a
# coordinator's page; tests/config/test_lean_imports.py). Code is reloaded by a restart, not
# by HUP, with this on.
preload_app = os.environ.get("GUNICORN_PRELOAD", "true").lower() not in ("0", "false", "no")
# With it, the master loads numpy too, so the workers share one copy: where every worker
# serves coordinators' statistics pages (the agreement page loads numpy), that costs the
# node less than a copy in each worker (benchmarks/memory.py, "web after statistics");
# where workers mostly serve raters, leaving it off costs nothing until such a page.
preload_statistics = os.environ.get("GUNICORN_PRELOAD_STATISTICS", "false").lower() in (
    "1",
    "true",
    "yes",
)


def when_ready(server):
    """In the master, before the first worker is forked: with the application preloaded,
    load its URL configuration and the Celery app too (each worker would import every view
    module on its first request, and Celery on its first job, otherwise), then move every
    object made so far out of the garbage collector's reach, so a worker's collections do
    not write to (and so copy) the pages it shares. No connection may be inherited by the
    workers: none is left open."""
    if not server.cfg.preload_app:
        return
    import gc

    from django.db import connections
    from django.urls import get_resolver

    import config.celery  # noqa: F401 - what the job runner loads on a worker's first job

    get_resolver().url_patterns  # noqa: B018 - imports the views
    if preload_statistics:
        import numpy  # noqa: F401
    connections.close_all()
    gc.freeze()
