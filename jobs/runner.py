"""Where a job's task runs: on the Celery worker, in a thread of this process, or here.

One setting, ``JOBS_RUN``, decides for every job (the case import, Assign, the recompute,
the analysis): "celery" in production (a broker and a worker), "thread" in the embedded
default (no broker: the task runs in a thread after the response), "inline" in the tests
(inside the call, so a test reads the result right after).
"""

import atexit
import logging
import threading
import time
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import close_old_connections, connection, transaction
from django.utils.module_loading import import_string

logger = logging.getLogger(__name__)

MODES = ("celery", "thread", "inline")

_threads: set[threading.Thread] = set()
_threads_lock = threading.Lock()


def jobs_run_mode() -> str:
    """The configured ``JOBS_RUN``; refuses a value that is none of the three."""
    mode = settings.JOBS_RUN
    if mode not in MODES:
        raise ImproperlyConfigured(f"JOBS_RUN must be one of {', '.join(MODES)}, not {mode!r}.")
    return mode


def celery_app_load() -> None:
    """Load the project's Celery app (``JOBS_CELERY_APP``) if no job has yet. The apps' tasks
    are shared tasks: each use asks Celery for the app loaded, which must be the project's
    (its broker, queues and routes), not a default one made up on the spot. Loaded here, on
    the first job, rather than at start-up, where it cost every process about 0.13 s of CPU
    (benchmarks/warm_start.py)."""
    import_string(settings.JOBS_CELERY_APP)


def job_schedule(
    task,
    *,
    args: list | tuple = (),
    kwargs: dict | None = None,
    countdown: float | None = None,
    on_unreachable: Callable[[], None] | None = None,
) -> bool:
    """Run ``task`` (a Celery task that takes ids and is idempotent) where ``JOBS_RUN`` says.

    With Celery and a thread, the task starts after the current transaction commits (a
    task must see what asked for it), ``countdown`` seconds later. False when the broker
    could not be reached: ``on_unreachable`` has then been called, and nothing runs.
    """
    kwargs = kwargs or {}
    mode = jobs_run_mode()
    celery_app_load()
    if mode == "inline":
        task(*args, **kwargs)
        return True
    if mode == "thread":
        transaction.on_commit(lambda: _thread_start(task, args, kwargs, countdown))
        return True

    def send() -> bool:
        try:
            task.apply_async(args=list(args), kwargs=kwargs, countdown=countdown)
        except Exception:  # the broker is down: the caller says so, keeps nothing
            logger.warning("Could not enqueue %s%s", task.name, tuple(args))
            if on_unreachable is not None:
                on_unreachable()
            return False
        return True

    if connection.in_atomic_block:
        transaction.on_commit(send)
        return True
    return send()


def _thread_start(task, args, kwargs, countdown: float | None) -> None:
    thread = threading.Thread(
        target=_thread_run, args=(task, args, kwargs, countdown), name=task.name, daemon=True
    )
    with _threads_lock:
        _threads.add(thread)
    thread.start()


def _thread_run(task, args, kwargs, countdown: float | None) -> None:
    try:
        if countdown:
            time.sleep(countdown)
        close_old_connections()
        task(*args, **kwargs)
    except Exception:  # logged; a job records how it ended itself
        logger.exception("Job %s%s failed", task.name, tuple(args))
    finally:
        connection.close()
        with _threads_lock:
            _threads.discard(threading.current_thread())


@atexit.register
def job_threads_join() -> None:
    """Wait until every job thread of this process has ended, with the jobs they started.

    At exit: a command (loading the demo, say) ends before its jobs' threads have run.
    """
    while True:
        with _threads_lock:
            alive = [thread for thread in _threads if thread.is_alive()]
        if not alive:
            return
        for thread in alive:
            thread.join()
