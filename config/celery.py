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
def _heartbeat(task=None, **kwargs):
    """A worker began a task: /healthz reads this to tell a consuming worker from a stalled
    one, per queue (config/worker_health.py)."""
    from config.worker_health import worker_consumed

    delivery = getattr(getattr(task, "request", None), "delivery_info", None) or {}
    worker_consumed(delivery.get("routing_key"))


# Where each task's message goes (``CELERY_TASK_ROUTES``): the recomputes and the jobs each
# to their queue when the settings name one (RECOMPUTE_QUEUE, JOBS_QUEUE), else the default.
RECOMPUTE_TASKS = {"agreement.tasks.recompute_study", "agreement.tasks.sweep_stale_studies"}


@app.task(name="concord.heartbeat", ignore_result=True)
def heartbeat() -> None:
    """Nothing but the heartbeat ``_heartbeat`` records as it begins: beat queues it to the
    jobs queue every sweep interval, so a live jobs worker shows so even with no job."""


def route_task(name, args, kwargs, options, task=None, **kw):
    from django.conf import settings

    queue = settings.RECOMPUTE_QUEUE if name in RECOMPUTE_TASKS else settings.JOBS_QUEUE
    return {"queue": queue} if queue else None


def task_queues() -> list[str]:
    """Every queue this deployment's tasks go to (the default one first)."""
    from django.conf import settings

    named = [settings.CELERY_TASK_DEFAULT_QUEUE, settings.RECOMPUTE_QUEUE, settings.JOBS_QUEUE]
    return list(dict.fromkeys(queue for queue in named if queue))
