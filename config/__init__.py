import os

# One BLAS thread per process, unless the host says otherwise: the statistics' matrix
# products are small, and on a host whose cores the web and the worker share, extra BLAS
# threads spin waiting for busy cores (about 0.45 s of CPU per recompute at 100,000 ratings
# on two cores, benchmarks/README.md). Set before numpy is first imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def __getattr__(name: str):
    """``config.celery_app``: the Celery app (config/celery.py), imported on first use, not
    with the settings: a web process loads Celery when it first schedules a job
    (``jobs.runner.job_schedule`` loads the app named by ``JOBS_CELERY_APP`` first, so the
    apps' shared tasks bind to it), `make run` and the management commands only if they do.
    ``celery -A config`` finds the app in config/celery.py itself."""
    if name == "celery_app":
        from .celery import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
