"""In-process recomputes for the embedded default, run after the response.

With no broker (``make run``), a recompute must still never run inside a rater's request.
Requests are handed to one daemon thread that waits the debounce, takes every study asked
for meanwhile (a burst becomes one run per study), and recomputes them one at a time.
"""

import atexit
import logging
import threading
import time

from django.conf import settings
from django.db import close_old_connections, connection

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_pending: set[int] = set()
_wakeup = threading.Event()
_thread: threading.Thread | None = None


def background_schedule(*, study_id: int) -> None:
    """Ask for the study's recompute soon, in the background thread."""
    global _thread
    with _lock:
        _pending.add(study_id)
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_run, name="agreement-recompute", daemon=True)
            _thread.start()
    _wakeup.set()


def _take() -> list[int]:
    with _lock:
        studies = sorted(_pending)
        _pending.clear()
        _wakeup.clear()
    return studies


def _recompute(studies: list[int]) -> None:
    from .services import agreement_recompute  # services hands requests to this module

    for study_id in studies:
        close_old_connections()
        try:
            agreement_recompute(study_id=study_id)
        except Exception:  # the thread must outlive one failed run
            logger.exception("Agreement recompute of study %s failed", study_id)
        finally:
            connection.close()


def _run() -> None:
    while True:
        _wakeup.wait()
        time.sleep(settings.AGREEMENT_DEBOUNCE_SECONDS)
        _recompute(_take())


@atexit.register
def _drain() -> None:
    # A command (e.g. loading the demo) ends before the thread wakes: finish what it asked.
    studies = _take()
    if studies:
        _recompute(studies)
