import os

from celery import Celery
from celery.signals import task_prerun, worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("concord")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect
def _yield_to_the_web(**kwargs):
    """Run the tasks (recomputes, imports) at a lower CPU priority than the web: where both
    share the cores, a rater's page waits for a recompute no longer than it must, and the
    recompute uses whatever the web leaves (``WORKER_NICENESS``, 0 to keep it equal)."""
    from django.conf import settings

    if settings.WORKER_NICENESS:
        os.nice(settings.WORKER_NICENESS)


@task_prerun.connect
def _heartbeat(**kwargs):
    """A worker began a task: /healthz reads this to tell a consuming worker from a stalled
    one (config/worker_health.py)."""
    from config.worker_health import worker_consumed

    worker_consumed()
