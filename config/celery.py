import os

from celery import Celery
from celery.signals import worker_process_init

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
