"""Running a case import as a job: on the Celery worker, or in a thread of the process.

The embedded default has no worker: there the import runs in a thread after the response
(``CASE_IMPORT_IN_PROCESS = "background"``), and the page polls its progress; "inline"
runs it inside the request (the tests' choice).
"""

import logging
import threading

from django.conf import settings
from django.db import close_old_connections, connection, transaction

from .errors import StudySetupError
from .models import CaseUpload

logger = logging.getLogger(__name__)


def case_import_schedule(*, upload_id: int, actor_id: int | None) -> None:
    """Start the upload's import (already marked running) where the settings say."""
    from .services import case_upload_import_run
    from .tasks import import_case_upload

    if not settings.CELERY_TASK_ALWAYS_EAGER:
        try:
            import_case_upload.delay_on_commit(upload_id, actor_id)
        except Exception as error:  # the broker is down: say so, keep nothing
            logger.warning("Could not enqueue the import of case upload %s", upload_id)
            CaseUpload.objects.filter(pk=upload_id).update(import_state="")
            raise StudySetupError(
                "The import could not be started (the task queue is unreachable); nothing "
                "was imported. Try again in a moment."
            ) from error
    elif settings.CASE_IMPORT_IN_PROCESS == "inline":
        case_upload_import_run(upload_id=upload_id, actor_id=actor_id)
    else:
        transaction.on_commit(
            lambda: threading.Thread(
                target=_run, args=(upload_id, actor_id), name="case-import", daemon=True
            ).start()
        )


def _run(upload_id: int, actor_id: int | None) -> None:
    from .services import case_upload_import_run

    close_old_connections()
    try:
        case_upload_import_run(upload_id=upload_id, actor_id=actor_id)
    except Exception:  # logged; the upload records that it failed
        logger.exception("Case import %s failed", upload_id)
    finally:
        connection.close()
